import type { PoolClient } from 'pg';
import type { EventRow } from '../audit/event.ts';
import type { SyncState } from '../audit/sync-state.ts';
import { NOT_TOKEN } from '../audit/search.ts';
import type { TeamServer } from './connection.ts';

/** How long a sync lease lasts unless renewed: a holder killed mid-sync is replaced within it. */
export const AUDIT_LEASE_ENV = 'MEDIADESK_AUDIT_LEASE_MS';
export const DEFAULT_AUDIT_LEASE_MS = 60_000;
/** Events read from the archive per round trip of a fill. */
const FILL_PAGE = 1000;
/** Matches a team search hands to the local query at most. */
export const TEAM_SEARCH_MAX = 10_000;

const NOW_MS = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint';

export function auditLeaseMs(env: NodeJS.ProcessEnv): number {
  const raw = env[AUDIT_LEASE_ENV];
  const n = raw ? Number(raw) : NaN;
  return Number.isInteger(n) && n >= 500 ? n : DEFAULT_AUDIT_LEASE_MS;
}

/** Who holds the audit sync lease, and until when (the server's clock, ms). */
export interface LeaseHolder {
  holder: string;
  name: string;
  until: number;
  /** Walking the service's log now, rather than done with its last sync. */
  syncing: boolean;
  syncedAt: number | null;
  /** This process. */
  mine: boolean;
}

/** The walk's place without the key it was made with: any admin's key continues it. */
export type TeamWalk = Omit<SyncState, 'fingerprint'>;

/** Another process took the lease over (this one was too slow to renew it): its pages are no longer written. */
export class LeaseLostError extends Error {}

/** PostgreSQL text holds no NUL; only the searchable copies are cleaned, raw JSON escapes it anyway. */
const noNul = (s: string) => s.replaceAll('\0', ' ');

/**
 * The team's audit archive on the team server: each event once (by event_id) with a generated
 * tsvector, the lease that lets one process at a time call the service's audit API, and the walk's
 * place, so whoever takes the lease next goes on where the last holder stopped.
 */
export class TeamAuditArchive {
  readonly server: TeamServer;
  readonly leaseMs: number;

  constructor(server: TeamServer, leaseMs: number) {
    this.server = server;
    this.leaseMs = leaseMs;
  }

  /** The archive's own id: a fill's watermark belongs to one archive, not to a URL that may be recreated. */
  async id(): Promise<string> {
    return this.server.with(async (c) => {
      const r = await c.query<{ id: string }>('SELECT id FROM mediadesk.audit_archive LIMIT 1');
      return r.rows[0].id;
    });
  }

  /** Takes (or renews) the lease to sync when it is free, expired or already this process's; else says who has it. */
  async take(): Promise<{ taken: true } | { taken: false; holder: LeaseHolder }> {
    return this.server.tx(async (c) => {
      const r = await c.query(
        `INSERT INTO mediadesk.audit_sync_lease AS l (name, holder, holder_name, taken_at, expires_at, syncing)
         VALUES ('audit', $1, $2, ${NOW_MS}, ${NOW_MS} + $3, true)
         ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, holder_name = excluded.holder_name,
           taken_at = CASE WHEN l.holder = excluded.holder THEN l.taken_at ELSE excluded.taken_at END,
           expires_at = excluded.expires_at, syncing = true
         WHERE l.holder = excluded.holder OR l.expires_at <= excluded.taken_at
         RETURNING holder`,
        [this.server.machine, this.server.machineName, this.leaseMs],
      );
      if (r.rowCount) return { taken: true as const };
      return { taken: false as const, holder: (await this.holderOn(c))! };
    });
  }

  /** Extends this process's lease; false when it is no longer this process's. */
  async renew(): Promise<boolean> {
    return this.server.with(async (c) => {
      const r = await c.query(
        `UPDATE mediadesk.audit_sync_lease SET expires_at = ${NOW_MS} + $2
         WHERE name = 'audit' AND holder = $1 AND expires_at > ${NOW_MS}`,
        [this.server.machine, this.leaseMs],
      );
      return (r.rowCount ?? 0) > 0;
    });
  }

  /** The sync ended: the lease stays this process's until it expires, marked not syncing. */
  async done(completed: boolean): Promise<void> {
    await this.server.with((c) =>
      c.query(
        `UPDATE mediadesk.audit_sync_lease SET syncing = false, expires_at = ${NOW_MS} + $2,
           synced_at = CASE WHEN $3 THEN ${NOW_MS} ELSE synced_at END
         WHERE name = 'audit' AND holder = $1`,
        [this.server.machine, this.leaseMs, completed],
      ),
    );
  }

  async holder(): Promise<LeaseHolder | null> {
    return this.server.with((c) => this.holderOn(c));
  }

  private async holderOn(c: PoolClient): Promise<LeaseHolder | null> {
    const r = await c.query<{
      holder: string;
      holder_name: string;
      expires_at: string;
      syncing: boolean;
      synced_at: string | null;
    }>(
      `SELECT holder, holder_name, expires_at, syncing, synced_at FROM mediadesk.audit_sync_lease
       WHERE name = 'audit' AND expires_at > ${NOW_MS}`,
    );
    const row = r.rows[0];
    if (!row) return null;
    return {
      holder: row.holder,
      name: row.holder_name,
      until: Number(row.expires_at),
      syncing: row.syncing,
      syncedAt: row.synced_at === null ? null : Number(row.synced_at),
      mine: row.holder === this.server.machine,
    };
  }

  /** The walk as the last holder left it; null before any sync through the team server. */
  async walk(): Promise<TeamWalk | null> {
    return this.server.with(async (c) => {
      const r = await c.query<{ state: TeamWalk }>("SELECT state FROM mediadesk.audit_sync_state WHERE name = 'audit'");
      return r.rows[0]?.state ?? null;
    });
  }

  /**
   * A page's events and the walk's place after it, in one transaction that holds the lease row: a
   * process whose lease lapsed (another took over) writes nothing and learns it (LeaseLostError).
   */
  async put(rows: readonly EventRow[], walk: TeamWalk): Promise<void> {
    await this.server.tx(async (c) => {
      const lease = await c.query<{ live: boolean }>(
        `SELECT expires_at > ${NOW_MS} AS live FROM mediadesk.audit_sync_lease
         WHERE name = 'audit' AND holder = $1 FOR UPDATE`,
        [this.server.machine],
      );
      if (!lease.rows[0]?.live)
        throw new LeaseLostError(
          "this process's audit sync lease lapsed and another process may hold it now: stopped, without writing the page",
        );
      await c.query(
        `UPDATE mediadesk.audit_sync_lease SET expires_at = ${NOW_MS} + $2 WHERE name = 'audit' AND holder = $1`,
        [this.server.machine, this.leaseMs],
      );
      if (rows.length)
        await c.query(
          `INSERT INTO mediadesk.audit_events (event_id, ts, event_type, member_email, body, raw, archived_by)
           SELECT *, $7 FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[])
           ON CONFLICT (event_id) DO NOTHING`,
          [
            rows.map((r) => r.eventId),
            rows.map((r) => r.ts),
            rows.map((r) => noNul(r.eventType)),
            rows.map((r) => noNul(r.memberEmail)),
            rows.map((r) => noNul(r.text)),
            rows.map((r) => r.raw),
            this.server.machineName,
          ],
        );
      await this.saveWalkOn(c, walk);
    });
  }

  async saveWalk(walk: TeamWalk): Promise<void> {
    await this.server.with((c) => this.saveWalkOn(c, walk));
  }

  private async saveWalkOn(c: PoolClient, walk: TeamWalk): Promise<void> {
    await c.query(
      `INSERT INTO mediadesk.audit_sync_state (name, state, saved_at, saved_by) VALUES ('audit', $1, ${NOW_MS}, $2)
       ON CONFLICT (name) DO UPDATE SET state = excluded.state, saved_at = excluded.saved_at, saved_by = excluded.saved_by`,
      [JSON.stringify(walk), this.server.machineName],
    );
  }

  /** Archived events after `watermark` in archive order: their seq and JSON text as received. */
  async since(watermark: number, limit = FILL_PAGE): Promise<{ seq: number; raw: string }[]> {
    return this.server.with(async (c) => {
      const r = await c.query<{ seq: string; raw: string }>(
        'SELECT seq, raw FROM mediadesk.audit_events WHERE seq > $1 ORDER BY seq LIMIT $2',
        [watermark, limit],
      );
      return r.rows.map((x) => ({ seq: Number(x.seq), raw: x.raw }));
    });
  }

  async count(): Promise<number> {
    return this.server.with(async (c) => {
      const r = await c.query<{ n: string }>('SELECT count(*) AS n FROM mediadesk.audit_events');
      return Number(r.rows[0].n);
    });
  }

  /**
   * The ids of archived events holding every word of `search` (a trailing * makes a word a prefix),
   * by the GIN index over the generated tsvector; null when no word can be searched.
   */
  async search(search: string, limit = TEAM_SEARCH_MAX): Promise<{ ids: string[]; capped: boolean } | null> {
    const queries = teamSearchQueries(search);
    if (!queries.length) return null;
    const where = queries.map(
      (q, i) => `search @@ ${q.prefix ? 'to_tsquery' : 'plainto_tsquery'}('simple', $${i + 1})`,
    );
    return this.server.with(async (c) => {
      const r = await c.query<{ event_id: string }>(
        `SELECT event_id FROM mediadesk.audit_events WHERE ${where.join(' AND ')} LIMIT $${queries.length + 1}`,
        [...queries.map((q) => q.text), limit + 1],
      );
      const ids = r.rows.map((x) => x.event_id);
      return { ids: ids.slice(0, limit), capped: ids.length > limit };
    });
  }
}

/**
 * The search box's words as tsquery texts: each word through the same parser as the archived text
 * (plainto_tsquery), a starred one quoted with :* so each of its lexemes is a prefix.
 */
export function teamSearchQueries(search: string): { text: string; prefix: boolean }[] {
  const out: { text: string; prefix: boolean }[] = [];
  for (const word of search.split(/\s+/)) {
    const prefix = word.length > 1 && word.endsWith('*');
    const body = prefix ? word.slice(0, -1) : word;
    if (!body.split(NOT_TOKEN).some((p) => /[\p{L}\p{N}]/u.test(p))) continue;
    out.push(prefix ? { text: `'${body.replace(/[\\']/g, (ch) => `\\${ch}`)}':*`, prefix } : { text: body, prefix });
  }
  return out;
}
