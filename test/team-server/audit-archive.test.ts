import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { cliEnv, runCli, startCli } from '../cli.ts';
import { cleanup, control, tmp } from '../engine/helpers.ts';
import { pgMissing, startPg, type TestPg } from '../pg.ts';
import { until } from '../sandbox/helpers.ts';
import { cachedEvents, makeEvent } from '../audit/helpers.ts';
import { checkEvent, type EventRow } from '../../electron/core/audit/event.ts';
import { TeamServer } from '../../electron/core/team-server/connection.ts';
import { TeamAuditArchive } from '../../electron/core/team-server/audit-archive.ts';
import { freshSyncState } from '../../electron/core/audit/sync-state.ts';
import { AuditService } from '../../electron/core/audit/service.ts';

/**
 * Two admins' processes (two data folders, two keys of one team) on one team server and one
 * Sandbox: one calls the service's audit API, both caches end with every event, a killed syncer's
 * lease lapses and the other takes over, and a search runs on the archive's full-text index.
 */
const missing = pgMissing();
if (missing) console.log(`team server tests skipped: ${missing}`);

const LEASE_MS = 3000;
const KEYS = ['sandbox-owner', 'sandbox-admin'] as const;

let pg: TestPg;
let sb: RunningSandbox;
let dir: string;

beforeAll(async () => {
  if (missing) return;
  pg = await startPg();
  // 1,500 audit events, not 6,000: still over a thousand, and 30 pages of 50 for the kill and takeover.
  sb = await startSandbox({ port: 0, auditEvents: 1500 });
  dir = tmp('archive');
});
afterAll(async () => {
  if (missing) return;
  await sb?.close();
  await pg?.close();
  cleanup(dir);
});

/** Two admins' data folders and keys; a short lease for the kill, else the default minute. */
const admins = (name: string, db: string, leaseMs?: number) =>
  KEYS.map((key, i) => ({
    key,
    env: {
      ...cliEnv(join(dir, name, `admin${i}`), sb.url, key),
      MEDIADESK_TEAM_DB: db,
      ...(leaseMs ? { MEDIADESK_AUDIT_LEASE_MS: String(leaseMs) } : {}),
    },
  }));

async function sql<T>(db: string, text: string, params: unknown[] = []): Promise<T[]> {
  const { default: pgLib } = await import('pg');
  const c = new pgLib.Client(db);
  await c.connect();
  try {
    return (await c.query(text, params)).rows as T[];
  } finally {
    await c.end();
  }
}

const cached = (env: NodeJS.ProcessEnv) => cachedEvents(env.MEDIADESK_HOME!);
const archived = async (db: string) =>
  Number((await sql<{ n: string }>(db, 'SELECT count(*) AS n FROM mediadesk.audit_events'))[0].n);
const searches = async () => (await control(sb.url, 'stats')).auditSearches as Record<string, number>;
const requestsOf = (out: string) => Number(/(\d+) request\(s\)/.exec(out)?.[1] ?? NaN);

describe.skipIf(missing)('one audit archive for the team', { timeout: 240_000 }, () => {
  it('two admins sync at once: the service sees one of them, both caches hold every event', async () => {
    await control(sb.url, 'reset', { tasks: true });
    const db = await pg.createDb('both');
    const [a, b] = admins('both', db);
    const runs = await Promise.all([a, b].map((m) => runCli(['audit', 'sync'], { env: m.env })));
    for (const r of runs) expect(r.code, r.err).toBe(0);
    const seen = await searches();
    // One key alone called the audit API, and as often as its process says.
    expect(Object.keys(seen), JSON.stringify(seen)).toHaveLength(1);
    const syncer = runs[KEYS.indexOf(Object.keys(seen)[0] as (typeof KEYS)[number])];
    const reader = runs[1 - runs.indexOf(syncer)];
    expect(syncer.out).toContain('This process holds the audit sync lease');
    expect(requestsOf(syncer.out)).toBe(Object.values(seen)[0]);
    expect(reader.out).toContain('holds the audit sync lease until');
    expect(requestsOf(reader.out)).toBe(0);
    const total = await archived(db);
    expect(total).toBeGreaterThan(1000);
    expect(await cached(a.env)).toBe(total);
    expect(await cached(b.env)).toBe(total);
    // The reader's cache is as fresh as the team's walk, though it never called the service.
    const fresh = await runCli(['audit', 'status'], { env: (runs.indexOf(reader) === 0 ? a : b).env });
    expect(fresh.out).not.toContain('last successful sync: never');

    // Events the service adds later reach the other admin's cache through the archive, by its watermark.
    await control(sb.url, 'audit/events', { count: 7 });
    // The lease lapses, as it does a minute after the last sync.
    await sql(db, 'UPDATE mediadesk.audit_sync_lease SET expires_at = 0');
    const next = await runCli(['audit', 'sync'], { env: b.env });
    expect(next.code, next.err).toBe(0);
    expect(await archived(db)).toBe(total + 7);
    const follow = await runCli(['audit', 'sync'], { env: a.env });
    expect(follow.out).toMatch(/took 7 event\(s\) from the team archive/);
    expect(await cached(a.env)).toBe(total + 7);

    const status = await runCli(['team', 'status'], { env: a.env });
    expect(status.out).toMatch(/Audit sync lease: .*admin1, until /);
    expect(status.out).toContain(`Audit archive: ${total + 7} event(s)`);
  });

  it('the syncer SIGKILLed mid-sync: its lease lapses within the expiry and the other takes over where it stopped', async () => {
    await control(sb.url, 'reset', { tasks: true });
    await control(sb.url, 'faults', { auditDelayMs: 150 });
    const db = await pg.createDb('kill');
    const [a, b] = admins('kill', db, LEASE_MS);
    const victim = startCli(['audit', 'sync', '--per-page', '50'], { env: a.env });
    await until(async () => /page [3-9]/.test(victim.err) || victim.child.exitCode !== null, 60_000);
    const other = startCli(['audit', 'sync', '--per-page', '50'], { env: b.env });
    await until(async () => /following the team archive/.test(other.err) || other.child.exitCode !== null, 60_000);
    const killedAt = Date.now();
    victim.child.kill('SIGKILL');
    await victim.exit;
    const [lapse] = await sql<{ expires_at: string }>(db, 'SELECT expires_at FROM mediadesk.audit_sync_lease');
    // The lease a killed holder leaves runs out within the expiry of its last renewal.
    expect(Number(lapse.expires_at) - killedAt).toBeLessThanOrEqual(LEASE_MS);
    const done = await other.exit;
    await control(sb.url, 'faults', { auditDelayMs: 0 });
    expect(done.code, done.err).toBe(0);
    expect(done.out).toContain('This process holds the audit sync lease');
    const [taken] = await sql<{ taken_at: string; holder_name: string }>(
      db,
      'SELECT taken_at, holder_name FROM mediadesk.audit_sync_lease',
    );
    expect(taken.holder_name).toMatch(/admin1$/);
    expect(Number(taken.taken_at)).toBeGreaterThanOrEqual(Number(lapse.expires_at));
    // Taken over from the team's walk, not walked again: the two together read each page about once.
    const seen = await searches();
    const pages = Math.ceil((await archived(db)) / 50);
    expect(seen[KEYS[0]]).toBeGreaterThan(2);
    expect(seen[KEYS[1]]).toBeLessThan(pages - 1);
    expect(seen[KEYS[0]] + seen[KEYS[1]]).toBeLessThanOrEqual(pages + 3);
    expect(await cached(b.env)).toBe(await archived(db));
  });

  it('a search runs on the archive full-text index, and on the local cache when the server is gone', async () => {
    const db = await pg.createDb('search');
    const [a] = admins('search', db);
    await control(sb.url, 'faults', { auditDelayMs: 0 });
    const synced = await runCli(['audit', 'sync'], { env: a.env });
    expect(synced.code, synced.err).toBe(0);
    // The rarest word of the archived events, read from the archive's own index.
    const [word] = await sql<{ word: string; ndoc: number }>(
      db,
      `SELECT word, ndoc FROM ts_stat('SELECT search FROM mediadesk.audit_events')
       WHERE word ~ '^[a-z][a-z0-9]{3,}$' ORDER BY ndoc, word LIMIT 1`,
    );
    const holders = await sql<{ event_id: string }>(
      db,
      "SELECT event_id FROM mediadesk.audit_events WHERE search @@ plainto_tsquery('simple', $1)",
      [word.word],
    );
    expect(holders.length).toBe(word.ndoc);
    const found = await runCli(['audit', 'query', '--search', word.word, '--limit', '1000'], { env: a.env });
    expect(found.code, found.err).toBe(0);
    expect(found.err).toContain("searched the team archive's full-text index");
    expect(found.err).toContain(`${word.ndoc} of ${word.ndoc} event(s)`);
    for (const h of holders) expect(found.out).toContain(h.event_id);
    const holder = holders[0];

    await pg.stop();
    try {
      const alone = await runCli(['audit', 'query', '--search', word.word], { env: a.env });
      expect(alone.err).toMatch(/searched this machine's cache: the team server cannot be reached/);
      expect(alone.out).toContain(holder.event_id);
      const sync = await runCli(['audit', 'sync'], { env: a.env });
      expect(sync.code, sync.err).toBe(0);
      expect(sync.out).toMatch(/team archive: The team server cannot be reached .*synced its own cache alone/);
    } finally {
      await pg.start();
    }
  });

  it('the archive search: words ANDed, a starred word a prefix, any text a clear answer; a process without the lease writes nothing', async () => {
    const db = await pg.createDb('words');
    const server = new TeamServer({ target: async () => ({ connect: db, shown: db, from: 'env' }) });
    const other = new TeamServer({ target: async () => ({ connect: db, shown: db, from: 'env' }) });
    try {
      const archive = new TeamAuditArchive(server, 60_000);
      const row = (i: number, over: Record<string, unknown> = {}) => {
        const c = checkEvent(makeEvent(i, over));
        if (!c.ok) throw new Error(c.reason);
        return c.row;
      };
      const rows: EventRow[] = [
        row(1, { member: { type: 'user', user_id: 1, email: 'ana@studio.test' } }),
        row(2, { category: 'Zebrafish' }),
        row(3, { category: "o'brien \\ quote" }),
      ];
      const { fingerprint: _none, ...walk } = freshSyncState('');
      expect(await archive.take()).toEqual({ taken: true });
      await archive.put(rows, walk);
      const ids = async (q: string) => (await archive.search(q))?.ids.sort() ?? null;
      expect(await ids('zebrafish')).toEqual(['evt_2']);
      expect(await ids('zebra*')).toEqual(['evt_2']);
      expect(await ids('zebra')).toEqual([]);
      expect(await ids('ana@studio.test')).toEqual(['evt_1']);
      expect(await ids("o'brien*")).toEqual(['evt_3']);
      expect(await ids("o'brien zebrafish")).toEqual([]);
      expect(await ids("\\ ' :* & | !")).toBeNull();
      // Another process cannot take a live lease, and a page from a holder whose lease lapsed is refused.
      const second = new TeamAuditArchive(other, 60_000);
      expect(await second.take()).toMatchObject({ taken: false, holder: { mine: false } });
      await expect(second.put([row(9)], walk)).rejects.toThrow(/lease lapsed/);
      expect(await archive.count()).toBe(3);
      // The app's cache takes them in between syncs, as its Audit screen polls the status.
      const app = new AuditService({
        dbPath: join(dir, 'words-audit.db'),
        target: () => Promise.reject(new Error('no service: the archive alone fills this cache')),
        team: async () => archive,
        teamFillMs: 1,
      });
      try {
        await until(async () => (await app.status()).events === 3, 30_000);
      } finally {
        await app.close();
      }
    } finally {
      await server.close();
      await other.close();
    }
  });
});
