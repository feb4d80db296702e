import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { keyFingerprint, utcDay } from '../../electron/core/audit/ledger.ts';
import { planWindows, withinRetention } from '../../electron/core/audit/sync.ts';
import { dbPaths } from '../../electron/core/paths.ts';
import { auditHandlers } from '../../electron/core/audit/handlers.ts';
import { createDispatcher, type Reply } from '../../electron/core/dispatch.ts';
import type { AuditService } from '../../electron/core/audit/service.ts';
import type { AuditStatus, SyncDone, SyncReport } from '../../shared/contract/audit.ts';
import { deepEventLine, fillDisk, makeEvent, openService, result, smallDisk, stopTwice, tempDir } from './helpers.ts';
import { MAX_EVENT_DEPTH } from '../../electron/core/audit/event.ts';

const AUDIT_ROUTE = 'GET /v1/analytics/audit-logs/events';
const CLI = resolve(import.meta.dirname, '../../bin/mediadesk.js');
const tmp = tempDir('md-audit-sync-');
let sb: RunningSandbox;
let homeN = 0;

beforeAll(async () => {
  // A quarter of the 6,000 audit events it seeds: each test walks the whole trail, and paging, the
  // budget, kills and resumes need only a few dozen pages of it.
  sb = await startSandbox({ port: 0, seed: 11, auditEvents: 1500 });
});
afterAll(async () => {
  await sb.close();
  tmp.cleanup();
});
beforeEach(async () => {
  await control('POST', '/__sandbox/reset', {});
});

async function control(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${sb.url}${path}`, {
    method,
    headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  return res.json();
}
const auditRequests = async (): Promise<number> =>
  (await control('GET', '/__sandbox/stats')).requests[AUDIT_ROUTE] ?? 0;

async function sandboxTotal(key = 'sandbox-owner'): Promise<number> {
  const r = await fetch(`${sb.url}/v1/analytics/audit-logs/events?per_page=1`, {
    headers: { 'x-magnific-api-key': key },
  });
  return (await r.json()).meta.pagination.total;
}

function service(
  key = 'sandbox-owner',
  o: Parameters<typeof openService>[1] = {},
  dbPath = join(tmp.dir, `h${++homeN}`, 'audit.db'),
): AuditService {
  return openService(dbPath, { target: async () => ({ baseUrl: sb.url, apiKey: key }), maxBackoffMs: 50, ...o });
}

const cachedIds = (s: AuditService) =>
  (s.store.db.prepare('SELECT event_id FROM events ORDER BY event_id').all() as { event_id: string }[]).map(
    (r) => r.event_id,
  );

describe('planning windows', () => {
  it('asks for the 15-day retention at first, then from the newest complete day, never wider than 15 days', () => {
    const now = Date.parse('2026-03-20T10:00:00Z');
    expect(planWindows(now, null)).toEqual([{ from: '2026-03-05', to: '2026-03-20' }]);
    expect(planWindows(now, Date.parse('2026-03-19T00:05:00Z'))).toEqual([{ from: '2026-03-18', to: '2026-03-20' }]);
    expect(planWindows(now, Date.parse('2026-01-01T00:00:00Z'))).toEqual([{ from: '2026-03-05', to: '2026-03-20' }]);
  });
});

describe('a walk resumed on a later day', () => {
  /** A sync on a clock at `day0`, stopped (as by Ctrl-C) once its first page is in. */
  async function syncStoppedAfterOnePage(dbPath: string, day0: number) {
    const stop = new AbortController();
    const first = service(
      'sandbox-owner',
      { perPage: 10, clock: () => new Date(day0), onSyncProgress: () => stop.abort() },
      dbPath,
    );
    try {
      return await first.sync({ signal: stop.signal });
    } finally {
      await first.close();
    }
  }

  it('keeps within the 15 days the service still holds: windows cut to it, one wholly older dropped', () => {
    const planned = [{ from: '2026-03-05', to: '2026-03-20' }];
    expect(withinRetention(planned, Date.parse('2026-03-20T23:00:00Z'))).toEqual(planned);
    expect(withinRetention(planned, Date.parse('2026-03-23T08:00:00Z'))).toEqual([
      { from: '2026-03-08', to: '2026-03-20' },
    ]);
    expect(
      withinRetention(
        [
          { from: '2026-03-05', to: '2026-03-20' },
          { from: '2026-02-10', to: '2026-02-25' },
        ],
        Date.parse('2026-03-23T08:00:00Z'),
      ),
    ).toEqual([{ from: '2026-03-08', to: '2026-03-20' }]);
    expect(withinRetention(planned, Date.parse('2026-04-30T08:00:00Z'))).toEqual([]);
  });

  it('a sync stopped one day and resumed three days later asks only for days still kept, and completes', async () => {
    const dbPath = join(tmp.dir, 'later-day', 'audit.db');
    const day0 = Date.now();
    const r0 = await syncStoppedAfterOnePage(dbPath, day0);
    expect(r0.outcome).toBe('stopped');
    expect(r0.windows).toEqual(planWindows(day0, null));
    const later = service('sandbox-owner', { perPage: 100, clock: () => new Date(day0 + 3 * 86_400_000) }, dbPath);
    try {
      const r = await later.sync();
      expect(r.outcome, JSON.stringify(r.error)).toBe('complete');
      expect(r.windows).toEqual([
        {
          from: new Date(day0 - 12 * 86_400_000).toISOString().slice(0, 10),
          to: new Date(day0).toISOString().slice(0, 10),
        },
      ]);
    } finally {
      await later.close();
    }
  });

  it('a walk whose days have all left the retention since it stopped is planned afresh', async () => {
    const dbPath = join(tmp.dir, 'much-later', 'audit.db');
    const day0 = Date.now();
    expect((await syncStoppedAfterOnePage(dbPath, day0)).outcome).toBe('stopped');
    // Seventeen days on, nothing of the walk's window is kept any more: the next walk is a new one.
    const day17 = day0 + 17 * 86_400_000;
    const later = service('sandbox-owner', { perPage: 100, clock: () => new Date(day17) }, dbPath);
    try {
      const r = await later.sync();
      expect(r.outcome, JSON.stringify(r.error)).toBe('complete');
      expect(r.windows).toEqual(planWindows(day17, null));
    } finally {
      await later.close();
    }
  });
});

describe('sync against the Sandbox', () => {
  it('walks the cursor through the whole window, then re-syncs only what is new', async () => {
    const total = await sandboxTotal();
    const s = service('sandbox-owner', { perPage: 100 });
    try {
      const r = await s.sync();
      expect(r).toMatchObject({ outcome: 'complete', received: total, inserted: total });
      expect(r.pages).toBe(Math.ceil(total / 100));
      expect(cachedIds(s)).toHaveLength(total);
      const st = await s.status();
      expect(st).toMatchObject({ events: total, resumable: false, lastError: null });
      expect(st.budget.used).toBe(r.requests);
      expect(Date.parse(st.lastSuccessAt!)).toBeGreaterThan(Date.now() - 60_000);

      await control('POST', '/__sandbox/audit/events', { count: 30 });
      const before = await auditRequests();
      const again = await s.sync();
      expect(again).toMatchObject({ outcome: 'complete', inserted: 30 });
      // The newest-first walk stops once it reaches what the last sync completed.
      expect((await auditRequests()) - before).toBe(again.requests);
      expect(again.requests).toBeLessThanOrEqual(2);
      expect(cachedIds(s)).toHaveLength(total + 30);
    } finally {
      await s.close();
    }
  });

  it('says when the cache was last synced even while another key is in use (another Sandbox identity)', async () => {
    const dbPath = join(tmp.dir, `h${++homeN}`, 'audit.db');
    const owner = service('sandbox-owner', {}, dbPath);
    let synced: string | null;
    try {
      expect((await owner.sync()).outcome).toBe('complete');
      synced = (await owner.status()).lastSuccessAt;
      expect(synced).not.toBeNull();
    } finally {
      await owner.close();
    }
    const admin = service('sandbox-admin', {}, dbPath);
    try {
      expect((await admin.status()).lastSuccessAt).toBe(synced);
    } finally {
      await admin.close();
    }
  });

  it('audit.status names the sync running with its last progress, for a window that did not start it; its end comes with the report to every window', async () => {
    const done: SyncDone[] = [];
    const during: Promise<AuditStatus>[] = [];
    const s: AuditService = service('sandbox-owner', {
      perPage: 100,
      onSyncDone: (d) => done.push(d),
      onSyncProgress: () => void (during.length < 2 && during.push(s.status())),
    });
    try {
      expect((await s.status()).running.sync).toBeNull();
      const r = await s.sync();
      const [first, second] = await Promise.all(during);
      expect(first.running.sync).toMatchObject({ stopping: false, progress: { pages: 1, received: 100 } });
      expect(second.running.sync).toMatchObject({ stopping: false, progress: { pages: 2, received: 200 } });
      expect(first.running.import).toBeNull();
      expect((await s.status()).running.sync).toBeNull();
      expect(done).toEqual([{ report: r, error: null }]);
    } finally {
      await s.close();
    }
  });

  it('stops at the daily budget of 500 requests kept in the ledger and sends nothing beyond it', async () => {
    const s = service('sandbox-admin');
    try {
      const fp = keyFingerprint('sandbox-admin');
      s.store.db
        .prepare('INSERT INTO request_ledger (fingerprint, day, requests) VALUES (?, ?, 497)')
        .run(fp, utcDay(new Date()));
      const before = await auditRequests();
      const r = await s.sync();
      expect(r.outcome).toBe('stopped');
      expect(r.error?.kind).toBe('budget_exhausted');
      expect(r.requests).toBe(3);
      expect((await auditRequests()) - before).toBe(3);
      const st = await s.status();
      expect(st.budget).toMatchObject({ used: 500, limit: 500, left: 0 });
      expect(st).toMatchObject({ resumable: true, lastError: { kind: 'budget_exhausted' } });
      expect(st.events).toBe(300);
      const again = await s.sync();
      expect(again.error?.kind).toBe('budget_exhausted');
      expect((await auditRequests()) - before).toBe(3);
      // The key is never stored, only its fingerprint.
      const ledger =
        JSON.stringify(s.store.db.prepare('SELECT * FROM request_ledger').all()) +
        JSON.stringify(s.store.db.prepare('SELECT * FROM sync_state').all());
      expect(ledger).not.toContain('sandbox-admin');
    } finally {
      await s.close();
    }
  });

  it('names each 403: member role, business plan, audit logs disabled', async () => {
    const cases = {
      'sandbox-member': 'forbidden_role',
      'sandbox-business': 'forbidden_plan',
      'sandbox-noaudit': 'forbidden_disabled',
    } as const;
    for (const [key, kind] of Object.entries(cases)) {
      const s = service(key);
      try {
        const r = await s.sync();
        expect(r).toMatchObject({ outcome: 'stopped', requests: 1, inserted: 0 });
        expect(r.error?.kind).toBe(kind);
        expect(r.error?.message).toMatch(/^403 /);
        expect((await s.status()).lastError?.kind).toBe(kind);
      } finally {
        await s.close();
      }
    }
  });

  it('obeys a 429 with Retry-After: stops, records until when, sends nothing before it, resumes after', async () => {
    const dbPath = join(tmp.dir, 'rate', 'audit.db');
    await control('POST', '/__sandbox/faults', { rate429: 1, retryAfterSec: 120 });
    const s = service('sandbox-owner', {}, dbPath);
    let before: number;
    try {
      const r = await s.sync();
      expect(r.error?.kind).toBe('rate_limited');
      expect(r.requests).toBe(1);
      const st = await s.status();
      expect(Date.parse(st.retryAfter!) - Date.now()).toBeGreaterThan(100_000);
      expect(st.resumable).toBe(true);
      before = await auditRequests();
      expect((await s.sync()).error?.kind).toBe('rate_limited');
      expect(await auditRequests()).toBe(before);
    } finally {
      await s.close();
    }
    await control('POST', '/__sandbox/faults', { rate429: 0 });
    const later = service('sandbox-owner', { clock: () => new Date(Date.now() + 125_000) }, dbPath);
    try {
      const r = await later.sync();
      expect(r.outcome).toBe('complete');
      expect((await later.status()).retryAfter).toBeNull();
      expect(cachedIds(later)).toHaveLength(await sandboxTotal());
    } finally {
      await later.close();
    }
  });

  it('retries a 503 within the budget, counting every attempt', async () => {
    await control('POST', '/__sandbox/faults', { rate503: 0.3 });
    const s = service('sandbox-owner');
    try {
      const before = await auditRequests();
      const r = await s.sync();
      expect(r.outcome).toBe('complete');
      const sent = (await auditRequests()) - before;
      expect(r.requests).toBe(sent);
      expect(sent).toBeGreaterThan(r.pages);
      expect((await s.status()).budget.used).toBe(sent);
    } finally {
      await s.close();
    }
  });

  it('resumes from the stored cursor after the CLI is killed mid-walk, ending equal to a clean sync', async () => {
    const home = join(tmp.dir, 'killed');
    const env = { ...process.env, MEDIADESK_HOME: home, MEDIADESK_API_URL: sb.url, MEDIADESK_API_KEY: 'sandbox-owner' };
    const child = spawn(process.execPath, [CLI, 'audit', 'sync', '--per-page', '20'], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let pages = 0;
    await new Promise<void>((done, fail) => {
      child.stderr.setEncoding('utf8').on('data', (s: string) => {
        pages += (s.match(/page \d+/g) ?? []).length;
        if (pages >= 20 && child.exitCode === null) child.kill('SIGKILL');
      });
      child.on('exit', (_code, signal) =>
        signal === 'SIGKILL' ? done() : fail(new Error(`the sync ended before it was killed (${pages} pages)`)),
      );
    });
    const total = await sandboxTotal();
    const resumed = service('sandbox-owner', { perPage: 20 }, dbPaths(home).audit);
    try {
      const mid = await resumed.status();
      expect(mid.resumable).toBe(true);
      expect(mid.events).toBeGreaterThanOrEqual(200);
      expect(mid.events).toBeLessThan(total);
      const r = await resumed.sync();
      expect(r.outcome).toBe('complete');
      // It continued where the kill left it instead of starting over.
      expect(r.received).toBeLessThanOrEqual(total - mid.events + 20);
      const clean = service('sandbox-owner');
      try {
        await clean.sync();
        expect(cachedIds(resumed)).toEqual(cachedIds(clean));
      } finally {
        await clean.close();
      }
    } finally {
      await resumed.close();
    }
  });

  it('stops on Ctrl-C after the page in flight, says the place is saved, exits 130; audit sync resumes from there', async () => {
    const home = join(tmp.dir, 'ctrl-c');
    const env = { ...process.env, MEDIADESK_HOME: home, MEDIADESK_API_URL: sb.url, MEDIADESK_API_KEY: 'sandbox-owner' };
    // Pages of 5: the walk is far from done when its first page is reported.
    const child = spawn(process.execPath, [CLI, 'audit', 'sync', '--per-page', '5'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      err += s;
      if (/page 1,/.test(err) && child.signalCode === null && !child.killed) child.kill('SIGINT');
    });
    const code = await new Promise<number | null>((done) => child.on('exit', (c) => done(c)));
    expect(code, err).toBe(130);
    expect(out).toMatch(/^sync stopped: \d+ page\(s\)/);
    const kept = Number(
      /^interrupted: the (\d+) new event\(s\) are kept and the place in the walk is saved; run mediadesk audit sync to resume from there$/m.exec(
        err,
      )?.[1],
    );
    expect(kept, err).toBeGreaterThan(0);

    const total = await sandboxTotal();
    const resumed = service('sandbox-owner', { perPage: 100 }, dbPaths(home).audit);
    try {
      const mid = await resumed.status();
      expect(mid).toMatchObject({ events: kept, resumable: true, lastError: null });
      expect(kept).toBeLessThan(total);
      const r = await resumed.sync();
      expect(r).toMatchObject({ outcome: 'complete', inserted: total - kept });
      expect(cachedIds(resumed)).toHaveLength(total);
    } finally {
      await resumed.close();
    }
  });

  it('runs from the CLI: sync, status, query', async () => {
    const home = join(tmp.dir, 'cli');
    const env = { ...process.env, MEDIADESK_HOME: home, MEDIADESK_API_URL: sb.url, MEDIADESK_API_KEY: 'sandbox-admin' };
    const run = (...args: string[]) =>
      new Promise<{ code: number | null; out: string; err: string }>((done) => {
        const c = spawn(process.execPath, [CLI, 'audit', ...args], { env });
        let out = '';
        let err = '';
        c.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
        c.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
        c.on('exit', (code) => done({ code, out, err }));
      });
    const sync = await run('sync');
    expect(sync.code).toBe(0);
    expect(sync.out).toMatch(/sync complete/);
    const status = await run('status', '--json');
    expect(JSON.parse(status.out)).toMatchObject({ events: await sandboxTotal(), budget: { limit: 500 } });
    const q = await run('query', '--event-type', 'project.folder.shared', '--search', 'link', '--json', '--limit', '5');
    expect(q.code).toBe(0);
    const lines = q.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(5);
    for (const e of lines)
      expect(e.action).toMatchObject({ event_type: 'project.folder.shared', data: { share_type: 'link' } });
    const bad = await run('query', '--to', 'tomorrow');
    expect(bad.code).toBe(2);
    expect(bad.err.trim().split('\n')).toHaveLength(1);
  });
});

/** audit.syncCancel as every transport serves it (the app's Stop): the contract's dispatcher over the real service. */
describe("stopping the app's sync", () => {
  const stopAnswer = (r: Reply) => result<{ stopped: boolean }>(r);

  it('Stop ends the running sync after the page in hand: stopped without an error, what came in stays, stopping shows meanwhile, and the next sync completes the rest without repeats', async () => {
    const total = await sandboxTotal();
    const done: SyncDone[] = [];
    let stopping: Promise<[Reply, Reply]> | null = null;
    // Pages of 20: the walk is far from done at its third page, when Stop is asked for.
    const s: AuditService = service('sandbox-owner', {
      perPage: 20,
      onSyncDone: (d) => done.push(d),
      onSyncProgress: (p) => {
        if (p.pages === 3 && !stopping)
          stopping = Promise.all([dispatch('audit.syncCancel', {}), dispatch('audit.status', {})]);
      },
    });
    const dispatch = createDispatcher(auditHandlers(s));
    try {
      expect(stopAnswer(await dispatch('audit.syncCancel', {}))).toEqual({ stopped: false });
      const r = result<SyncReport>(await dispatch('audit.sync', {}));
      const [stop, during] = await stopping!;
      expect(stopAnswer(stop)).toEqual({ stopped: true });
      // A window reloaded now sees the sync stopping (its Stop shown pressed).
      expect(result<AuditStatus>(during).running.sync).toMatchObject({ stopping: true, progress: { pages: 3 } });

      expect(r.outcome).toBe('stopped');
      expect(r.error).toBeUndefined();
      // The page in flight when Stop came is stored, and no page is asked for after it.
      expect(r.pages).toBeGreaterThanOrEqual(3);
      expect(r.pages).toBeLessThanOrEqual(4);
      expect(r.requests).toBe(r.pages);
      expect(cachedIds(s)).toHaveLength(r.inserted);
      expect(done).toEqual([{ report: r, error: null }]);
      const st = result<AuditStatus>(await dispatch('audit.status', {}));
      expect(st).toMatchObject({ events: r.inserted, resumable: true, lastError: null, running: { sync: null } });
      expect(stopAnswer(await dispatch('audit.syncCancel', {}))).toEqual({ stopped: false });

      const again = result<SyncReport>(await dispatch('audit.sync', {}));
      expect(again).toMatchObject({ outcome: 'complete', inserted: total - r.inserted });
      // Resumed at the first page not stored: nothing already cached is asked for again.
      expect(again.received).toBe(total - r.inserted);
      expect(cachedIds(s)).toHaveLength(total);
    } finally {
      await s.close();
    }
  });

  it('a Stop is told to every window at once (audit.syncStopping), before its answer and the end, and once for two Stops', async () => {
    const told: string[] = [];
    let answered: ReturnType<typeof stopTwice> | null = null;
    const s: AuditService = service('sandbox-owner', {
      perPage: 20,
      onSyncProgress: () => {
        told.push('progress');
        answered ??= stopTwice(dispatch, 'audit.syncCancel', told);
      },
      onSyncStopping: () => told.push('stopping'),
      onSyncDone: () => told.push('done'),
    });
    const dispatch = createDispatcher(auditHandlers(s));
    try {
      expect(result<SyncReport>(await dispatch('audit.sync', {})).outcome).toBe('stopped');
      // Told before the window that pressed Stop got its answer, and once though two did.
      const { stopped, heard } = await answered!;
      expect(stopped).toBe(true);
      expect(heard.filter((t) => t !== 'progress')).toEqual(['stopping']);
      expect(told.filter((t) => t !== 'progress')).toEqual(['stopping', 'done']);
    } finally {
      await s.close();
    }
  });

  it('a Stop while the sync waits to retry a 503 ends it then: no retry is sent, no error is recorded, and the next sync completes', async () => {
    await control('POST', '/__sandbox/faults', { rate503: 1 });
    // Long waits allowed, as in the app: only the Stop can end the wait early.
    const s = service('sandbox-owner', { maxBackoffMs: 30_000 });
    const dispatch = createDispatcher(auditHandlers(s));
    try {
      const running = dispatch('audit.sync', {});
      // The first attempt reached the Sandbox (and got its 503): the sync waits to try again.
      await expect.poll(auditRequests, { interval: 5 }).toBe(1);
      expect(stopAnswer(await dispatch('audit.syncCancel', {}))).toEqual({ stopped: true });
      const r = result<SyncReport>(await running);
      expect(r).toMatchObject({ outcome: 'stopped', requests: 1, inserted: 0 });
      expect(r.error).toBeUndefined();
      expect(await auditRequests()).toBe(1);
      expect(result<AuditStatus>(await dispatch('audit.status', {}))).toMatchObject({
        lastError: null,
        resumable: true,
        budget: { used: 1 },
      });

      await control('POST', '/__sandbox/faults', { rate503: 0 });
      const again = result<SyncReport>(await dispatch('audit.sync', {}));
      expect(again.outcome).toBe('complete');
      expect(cachedIds(s)).toHaveLength(await sandboxTotal());
    } finally {
      await s.close();
    }
  });
});

describe('sync on a full disk', () => {
  it('stops with its own error when the disk fills up mid-walk; what was synced stays, and the next sync resumes and completes', async (ctx) => {
    const total = await sandboxTotal();
    const dir = smallDisk(ctx);
    let filler: string | null = null;
    // Another program takes the last free byte once the first page is stored.
    const s = service(
      'sandbox-owner',
      { perPage: 100, onSyncProgress: () => (filler ??= fillDisk(dir)) },
      join(dir, 'audit.db'),
    );
    try {
      const r = await s.sync();
      expect(r).toMatchObject({ outcome: 'stopped', inserted: 100 });
      expect(r.error).toEqual({
        kind: 'disk_full',
        message: expect.stringMatching(
          /^the disk holding the audit cache is full \(.+\): the sync stopped after 100 new event\(s\), which stay cached\. Free some space and sync again: it resumes from here$/,
        ),
      });
      expect(cachedIds(s)).toHaveLength(100);
      expect(s.store.db.pragma('integrity_check', { simple: true })).toBe('ok');

      rmSync(filler!);
      const again = await s.sync();
      expect(again).toMatchObject({ outcome: 'complete', inserted: total - 100 });
      expect(cachedIds(s)).toHaveLength(total);
      expect((await s.status()).lastError).toBeNull();
    } finally {
      await s.close();
    }
  });
});

describe('sync refuses what import refuses', () => {
  it('an event from the server beyond the limits of one event (5,000 levels in a field outside the payload) is refused and named in the report; the rest of the page is cached', async () => {
    const good = (i: number) => makeEvent(i, { date: new Date(Date.now() - (i + 1) * 60_000).toISOString() });
    // As text: JSON.stringify of it would overflow this test's own stack.
    const deep = deepEventLine(1).replace(/"date":"[^"]*"/, `"date":"${new Date(Date.now() - 90_000).toISOString()}"`);
    const body = `{"data":[${JSON.stringify(good(0))},${deep},${JSON.stringify(good(2))}],"meta":{"next_cursor":null}}`;
    // A server of the test's own: the Sandbox makes only well-formed events.
    const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const s = openService(join(tmp.dir, `h${++homeN}`, 'audit.db'), {
      target: async () => ({
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        apiKey: 'k-test-0001',
      }),
    });
    try {
      const r = await s.sync();
      expect(r).toMatchObject({ outcome: 'complete', received: 3, inserted: 2, rejected: 1 });
      expect(r.rejects).toEqual([
        { eventId: 'evt_1', page: 1, item: 2, reason: `the event is nested deeper than ${MAX_EVENT_DEPTH} levels` },
      ]);
      expect(cachedIds(s)).toEqual(['evt_0', 'evt_2']);
    } finally {
      s.close();
      server.close();
    }
  });
});
