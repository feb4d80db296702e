import type { PoolClient } from 'pg';

/** One step of the team schema. Numbered and immutable once shipped: a change is a new entry at the end. */
export interface TeamMigration {
  version: number;
  name: string;
  sql: string;
}

export const TEAM_SCHEMA = 'mediadesk';

/** Taken while migrating (pg_advisory_lock), so two machines starting at once migrate one after the other. */
const MIGRATION_LOCK = 0x6d6564_01;

export const TEAM_MIGRATIONS: readonly TeamMigration[] = [
  {
    version: 1,
    name: 'machines, pacing grants, daily uses per tool, the team budget and its spend',
    sql: `
      CREATE TABLE mediadesk.machines (
        id text PRIMARY KEY, name text NOT NULL, first_seen bigint NOT NULL, last_seen bigint NOT NULL);
      CREATE TABLE mediadesk.grants (
        id bigserial PRIMARY KEY, scope text NOT NULL, granted_at bigint NOT NULL, machine text NOT NULL,
        kind text NOT NULL, ref uuid NOT NULL UNIQUE);
      CREATE INDEX grants_scope_at ON mediadesk.grants (scope, granted_at);
      CREATE TABLE mediadesk.daily_uses (
        scope text NOT NULL, tool text NOT NULL, day text NOT NULL, uses integer NOT NULL,
        PRIMARY KEY (scope, tool, day));
      CREATE TABLE mediadesk.budgets (
        name text PRIMARY KEY, credits numeric NOT NULL, set_at bigint NOT NULL, set_by text NOT NULL);
      CREATE TABLE mediadesk.spend (
        day text NOT NULL, machine text NOT NULL, credits numeric NOT NULL DEFAULT 0,
        creates integer NOT NULL DEFAULT 0, PRIMARY KEY (day, machine));
    `,
  },
  {
    version: 2,
    name: 'hot_claims: which machine takes each file of a shared hot folder',
    // A file version is keyed by its folder's marker id, its name, size and whole-second mtime (the
    // precision every client of a network share agrees on). 'claimed' may be taken over once its
    // lease ends; 'settled' (sent to the service, or not to be run) never is.
    sql: `
      CREATE TABLE mediadesk.hot_claims (
        folder text NOT NULL, path text NOT NULL, size bigint NOT NULL, mtime_s bigint NOT NULL,
        state text NOT NULL CHECK (state IN ('claimed', 'settled')),
        machine text NOT NULL, machine_name text NOT NULL, lease_until bigint NOT NULL,
        claimed_at bigint NOT NULL, settled_at bigint,
        PRIMARY KEY (folder, path, size, mtime_s));
      CREATE INDEX hot_claims_machine ON mediadesk.hot_claims (machine, state);
    `,
  },
  {
    version: 3,
    name: 'the audit archive: events once with full-text search, the sync lease and the walk',
    // audit-archive.ts. seq is the order events were archived in, each process's fill watermark;
    // writers take the lease row FOR UPDATE first, so seqs commit in order.
    sql: `
      CREATE TABLE mediadesk.audit_archive (id text PRIMARY KEY);
      INSERT INTO mediadesk.audit_archive (id) VALUES (md5(random()::text || clock_timestamp()::text));
      CREATE TABLE mediadesk.audit_sync_lease (
        name text PRIMARY KEY, holder text NOT NULL, holder_name text NOT NULL, taken_at bigint NOT NULL,
        expires_at bigint NOT NULL, syncing boolean NOT NULL, synced_at bigint);
      CREATE TABLE mediadesk.audit_sync_state (
        name text PRIMARY KEY, state jsonb NOT NULL, saved_at bigint NOT NULL, saved_by text NOT NULL);
      CREATE TABLE mediadesk.audit_events (
        event_id text PRIMARY KEY, seq bigserial NOT NULL UNIQUE, ts bigint NOT NULL, event_type text NOT NULL,
        member_email text NOT NULL, body text NOT NULL, raw text NOT NULL, archived_by text NOT NULL,
        search tsvector GENERATED ALWAYS AS
          (to_tsvector('simple'::regconfig, event_type || ' ' || member_email || ' ' || body)) STORED);
      CREATE INDEX audit_events_search ON mediadesk.audit_events USING gin (search);
      CREATE INDEX audit_events_ts ON mediadesk.audit_events (ts);
    `,
  },
  {
    version: 4,
    name: 'budgets per project and the spend per project and machine',
    sql: `
      CREATE TABLE mediadesk.project_budgets (
        project text PRIMARY KEY, credits numeric NOT NULL, set_at bigint NOT NULL, set_by text NOT NULL);
      CREATE TABLE mediadesk.project_spend (
        day text NOT NULL, project text NOT NULL, machine text NOT NULL, credits numeric NOT NULL DEFAULT 0,
        creates integer NOT NULL DEFAULT 0, PRIMARY KEY (day, project, machine));
    `,
  },
];

export class TeamSchemaTooNewError extends Error {}

/**
 * Brings the `mediadesk` schema to the last migration, each in its own transaction with its version
 * row, under a session advisory lock; a schema newer than this build is refused, never touched.
 */
export async function migrateTeam(c: PoolClient, list: readonly TeamMigration[] = TEAM_MIGRATIONS): Promise<number> {
  await c.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  try {
    await c.query(`CREATE SCHEMA IF NOT EXISTS ${TEAM_SCHEMA}`);
    await c.query(
      `CREATE TABLE IF NOT EXISTS ${TEAM_SCHEMA}.migrations (
         version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const { rows } = await c.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${TEAM_SCHEMA}.migrations`);
    const at = rows[0].v ?? 0;
    if (at > list.length)
      throw new TeamSchemaTooNewError(
        `the team server's schema is at version ${at}, newer than this MediaDesk knows (${list.length}): update MediaDesk`,
      );
    for (const m of list.slice(at)) {
      await c.query('BEGIN');
      try {
        await c.query(m.sql);
        await c.query(`INSERT INTO ${TEAM_SCHEMA}.migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
        await c.query('COMMIT');
      } catch (err) {
        await c.query('ROLLBACK');
        throw err;
      }
    }
    return list.length;
  } finally {
    await c.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
  }
}
