// The pacing limiter of the core on real SQLite files: its answers with an injected clock, and two
// real processes on one data folder staying together under the rates and a daily cap.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { limiterScope, openLimiter, PaceLimiter, waitMessage } from '../../electron/core/limits/limiter.ts';
import { PriceBook } from '../../electron/core/limits/prices.ts';
import { JobStore } from '../../electron/core/queue/store.ts';
import { openDatabase } from '../../electron/core/db/open.ts';
import { QUEUE_MIGRATIONS } from '../../electron/core/queue/migrations.ts';
import { PUBLISHED_DAILY_CAPS } from '../../shared/published-caps.ts';
import { SERVICE_RATES } from '../../shared/service-limits.ts';
import { heldMessage } from '../../shared/contract/jobs.ts';
import { formatTime } from '../../shared/dates.ts';
import { limitTitle } from '../../electron/core/limits/held.ts';
import { Pacer } from '../../electron/core/limits/pacer.ts';
import { LIMITER_MIGRATIONS } from '../../electron/core/limits/migrations.ts';

const root = mkdtempSync(join(tmpdir(), 'limiter-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const home = () => join(root, `home${++n}`);

function clocked(start: string, opts: { safetyMs?: number } = {}) {
  let t = Date.parse(start);
  const opened = openLimiter(home(), { now: () => t, ...opts });
  return { ...opened, advance: (ms: number) => void (t += ms), now: () => t };
}

const poll = { scope: 's', kind: 'poll' } as const;

describe('the pacing limiter', () => {
  it('grants 250 requests in 5 s, then says to wait for the burst window, and grants again after', () => {
    const l = clocked('2026-03-15T12:00:00Z', { safetyMs: 0 });
    for (let i = 0; i < 250; i++) expect(l.limiter.acquire(poll).go).toBe(true);
    const wait = l.limiter.acquire(poll);
    expect(wait).toEqual({
      go: false,
      waitMs: 5000,
      reason: 'burst',
      limit: 250,
      left: 0,
      resetsAt: l.now() + 5000,
      windowSec: 5,
    });
    if (wait.go) return;
    expect(waitMessage(wait)).toBe('Waiting 5 s: the service takes at most 250 requests in 5 s.');
    l.advance(4999);
    expect(l.limiter.acquire(poll).go).toBe(false);
    l.advance(1);
    expect(l.limiter.acquire(poll).go).toBe(true);
    // Another key's scope has its own windows.
    expect(l.limiter.acquire({ ...poll, scope: 'other' }).go).toBe(true);
    l.close();
  });

  it('holds the average of 1,200 requests in 2 minutes, with its safety margin', () => {
    const l = clocked('2026-03-15T12:00:00Z');
    for (let step = 0; step < 6; step++) {
      for (let i = 0; i < 200; i++) expect(l.limiter.acquire(poll).go).toBe(true);
      l.advance(5250);
    }
    const wait = l.limiter.acquire(poll);
    expect(wait).toMatchObject({ go: false, reason: 'average', limit: 1200, left: 0 });
    // The first 200 were granted 31.5 s ago; they leave 120 s + 250 ms after they were granted.
    expect(!wait.go && wait.waitMs).toBe(120_250 - 31_500);
    l.advance(120_250 - 31_500);
    expect(l.limiter.acquire(poll).go).toBe(true);
    l.close();
  });

  it("holds a tool's creates at its plan's daily cap until midnight UTC; the user's caps are kept", () => {
    const l = clocked('2026-03-15T23:00:00Z');
    const create = { scope: 's', kind: 'create', tool: 'upscaler-precision', plan: 'business' } as const;
    expect(l.limiter.capsOf('business')).toEqual(PUBLISHED_DAILY_CAPS.premium);
    l.limiter.setCap('business', 'upscaler-precision', 3);
    expect([0, 1, 2].map(() => l.limiter.acquire(create))).toEqual([
      { go: true, capLeft: 2 },
      { go: true, capLeft: 1 },
      { go: true, capLeft: 0 },
    ]);
    const held = l.limiter.acquire(create);
    const midnight = Date.parse('2026-03-16T00:00:00Z');
    expect(held).toEqual({
      go: false,
      waitMs: midnight - l.now(),
      reason: 'daily_cap',
      limit: 3,
      left: 0,
      resetsAt: midnight,
    });
    if (held.go) return;
    expect(waitMessage(held, 'the Precision upscaler')).toBe(
      `Waiting: the daily limit of 3 jobs for the Precision upscaler is reached (0 left today); it resets at ${formatTime(midnight)} your time.`,
    );
    // Polls go on, and another tool has its own cap: none, as the service publishes none for it.
    expect(l.limiter.acquire(poll).go).toBe(true);
    expect(l.limiter.acquire({ ...create, tool: 'editor' })).toEqual({ go: true, capLeft: Infinity });
    expect(l.limiter.capStatus('s', 'business', 'upscaler-precision')).toEqual({
      cap: 3,
      used: 3,
      left: 0,
      resetsAt: midnight,
    });
    l.advance(midnight - l.now());
    expect(l.limiter.acquire(create)).toEqual({ go: true, capLeft: 2 });
    // Back to the default; a bad cap or plan is refused and nothing is stored.
    l.limiter.setCap('business', 'upscaler-precision', null);
    expect(l.limiter.capsOf('business')['upscaler-precision']).toBeUndefined();
    expect(() => l.limiter.setCap('business', 'editor', -1)).toThrow(
      'a daily cap is a whole number, 0 or more; got -1',
    );
    expect(() => l.limiter.setCap('gold' as 'business', 'editor', 5)).toThrow('no plan tier "gold"');
    expect(l.limiter.capsOf('business')).toEqual(PUBLISHED_DAILY_CAPS.premium);
    expect(() => l.limiter.acquire({ scope: 's', kind: 'create' })).toThrow(/tool and plan/);
    l.close();
  });

  it('caps only what the service publishes: 1,300 precision upscales on the default plan all go today', () => {
    // Issue #39: the default plan held the precision upscaler at 200 a day, a cap the service never published.
    const l = clocked('2026-03-15T01:00:00Z');
    const create = { scope: 's', kind: 'create', tool: 'upscaler-precision', plan: 'business' } as const;
    expect(l.limiter.capStatus('s', 'business', 'upscaler-precision').cap).toBe(Infinity);
    for (let i = 0; i < 1300; i++) {
      let grant = l.limiter.acquire(create);
      // Only the rate windows make it wait; the clock moves past them, never to the next day.
      while (!grant.go) {
        expect(grant.reason).not.toBe('daily_cap');
        l.advance(grant.waitMs);
        grant = l.limiter.acquire(create);
      }
    }
    expect(l.now()).toBeLessThan(Date.parse('2026-03-15T02:00:00Z'));
    expect(l.limiter.usedToday('s').get('upscaler-precision')).toBe(1300);
    // The published one holds: the high-resolution generator (mystic) at 6,000 on paid plans.
    expect(l.limiter.capStatus('s', 'enterprise', 'hires')).toMatchObject({ cap: 6000, left: 6000 });
    l.close();
  });

  it('holds a tool at a daily limit the service told by a 429 until the reset it gave, for that key only', () => {
    const l = clocked('2026-03-15T12:00:00Z');
    const create = { scope: 's', kind: 'create', tool: 'change-camera', plan: 'business' } as const;
    // 35 granted, the 35th refused by the service: 34 is what it took.
    for (let i = 0; i < 35; i++) expect(l.limiter.acquire(create).go).toBe(true);
    const reset = l.now() + 3 * 3600_000;
    l.limiter.learnCap('s', 'change-camera', reset);
    expect(l.limiter.learnedCapsOf('s')).toEqual(new Map([['change-camera', { cap: 34, until: reset }]]));
    expect(l.limiter.acquire(create)).toMatchObject({
      go: false,
      reason: 'daily_cap',
      limit: 34,
      left: 0,
      resetsAt: reset,
    });
    // Another key, and another tool, go on.
    expect(l.limiter.acquire({ ...create, scope: 'other' }).go).toBe(true);
    expect(l.limiter.acquire({ ...create, tool: 'editor' }).go).toBe(true);
    l.advance(reset - l.now());
    expect(l.limiter.acquire(create).go).toBe(true);
    expect(l.limiter.learnedCapsOf('s').size).toBe(0);
    l.close();
  });

  it('peeks without taking: a request counted ahead of others, the rates and the cap alike', () => {
    const l = clocked('2026-03-15T12:00:00Z', { safetyMs: 0 });
    const create = { scope: 's', kind: 'create', tool: 'upscaler-precision', plan: 'business' } as const;
    for (let i = 0; i < 240; i++) expect(l.limiter.acquire(poll).go).toBe(true);
    expect(l.limiter.peek(poll, 9).go).toBe(true);
    expect(l.limiter.peek(poll, 10)).toMatchObject({ go: false, reason: 'burst', limit: 250 });
    // Nothing was taken by the peeks: ten more still fit.
    for (let i = 0; i < 10; i++) expect(l.limiter.acquire(poll).go).toBe(true);
    l.advance(5000);
    l.limiter.setCap('business', 'upscaler-precision', 3);
    expect(l.limiter.acquire(create).go).toBe(true);
    // Two of the cap left: a peek with two ahead is held, and says so without calling it reached.
    expect(l.limiter.peek(create, 2)).toMatchObject({ go: false, reason: 'daily_cap', left: 2 });
    expect(l.limiter.peek(create, 1).go).toBe(true);
    expect(l.limiter.capStatus('s', 'business', 'upscaler-precision').used).toBe(1);
    l.close();
  });

  it('keys are never stored: a scope holds a hash of the key', () => {
    const scope = limiterScope('sandbox', 'sandbox-owner');
    expect(scope).toMatch(/^sandbox [0-9a-f]{16}$/);
    expect(scope).not.toContain('owner');
    expect(limiterScope('live https://api.magnific.com', 'sandbox-owner')).not.toBe(scope);
  });

  it('takes its tables through a new queue migration on a file the previous version wrote', () => {
    const dir = home();
    const path = join(dir, 'mediadesk.db');
    const old = openDatabase(path, QUEUE_MIGRATIONS.slice(0, 7));
    old.exec(
      "INSERT INTO batches (id, tool, out_dir, params, roots, created_at) VALUES ('b1', 'editor', '/o', '{}', '[]', 1)",
    );
    old.close();
    const { limiter, close } = openLimiter(dir);
    expect(limiter.acquire(poll).go).toBe(true);
    close();
    const db = openDatabase(path, QUEUE_MIGRATIONS);
    expect(db.pragma('user_version', { simple: true })).toBe(QUEUE_MIGRATIONS.length);
    expect(db.prepare('SELECT id FROM batches').all()).toEqual([{ id: 'b1' }]);
    db.close();
  });
});

describe("the limiter's own migrations", () => {
  it('take over the tables a file of the queue migrations alone holds, every row kept', () => {
    const dir = home();
    const path = join(dir, 'mediadesk.db');
    // As the build before the limiter had its own list left it: the queue's migrations and rows in each table.
    const old = openDatabase(path, QUEUE_MIGRATIONS);
    const at = Date.parse('2026-03-15T12:00:00Z');
    old.exec(`
      INSERT INTO limiter_grants (scope, granted_at) VALUES ('s', ${at - 1000}), ('s', ${at - 500});
      INSERT INTO limiter_daily_uses (scope, tool, day, uses) VALUES ('s', 'upscaler-precision', '2026-03-15', 7);
      INSERT INTO limiter_caps (plan, tool, cap) VALUES ('business', 'upscaler-precision', 8);
      INSERT INTO limiter_learned_caps (scope, tool, cap, learned_at, until)
        VALUES ('s', 'change-camera', 3, ${at - 1000}, ${at + 3_600_000});
    `);
    const tables = (db: typeof old) =>
      ['limiter_grants', 'limiter_daily_uses', 'limiter_caps', 'limiter_learned_caps'].map((t) =>
        db.prepare(`SELECT * FROM ${t} ORDER BY rowid`).all(),
      );
    const before = tables(old);
    expect(old.prepare("SELECT 1 FROM sqlite_master WHERE name = 'migration_ledger'").get()).toBeUndefined();
    old.close();

    const { limiter, close } = openLimiter(dir, { now: () => at });
    expect(limiter.capsOf('business')['upscaler-precision']).toBe(8);
    // 7 of the cap of 8 used today: one more create goes, the next waits for tomorrow.
    const create = { scope: 's', kind: 'create', tool: 'upscaler-precision', plan: 'business' } as const;
    expect(limiter.acquire(create).go).toBe(true);
    expect(limiter.acquire(create)).toMatchObject({ go: false, reason: 'daily_cap' });
    close();

    const db = openDatabase(path, QUEUE_MIGRATIONS);
    expect(db.prepare("SELECT version FROM migration_ledger WHERE owner = 'limiter'").pluck().get()).toBe(
      LIMITER_MIGRATIONS.length,
    );
    expect(db.pragma('user_version', { simple: true })).toBe(QUEUE_MIGRATIONS.length);
    const [grants, uses, caps, learned] = tables(db);
    expect(grants.slice(0, 2)).toEqual(before[0]);
    expect(uses).toEqual([{ ...(before[1][0] as object), uses: 8 }]);
    expect(caps).toEqual(before[2]);
    expect(learned).toEqual(before[3]);
    db.close();
  });

  it('refuses, saying what runs first, a file the queue migrations have not made the tables in', () => {
    const db = openDatabase(join(home(), 'mediadesk.db'), QUEUE_MIGRATIONS.slice(0, 7));
    expect(() => new PaceLimiter(db)).toThrow(/no limiter_grants table yet: the queue migrations make it/);
    db.close();
  });
});

describe('queue migrations 10 and 11', () => {
  it("keeps a version-9 file's jobs and the user's own caps, with no earlier charges and no own prices", () => {
    const dir = home();
    const path = join(dir, 'mediadesk.db');
    const old = openDatabase(path, QUEUE_MIGRATIONS.slice(0, 9));
    old.exec(`
      INSERT INTO batches (id, tool, out_dir, params, roots, created_at) VALUES ('b1', 'change-camera', '/o', '{}', '[]', 1);
      INSERT INTO jobs (id, seq, batch_id, tool, state, rel_dir, out_dir, params, snapshot, task_id, created_at, updated_at)
        VALUES ('j1', 1, 'b1', 'change-camera', 'failed', '', '/o', '{}', '{}', 't1', 1, 1);
      INSERT INTO limiter_caps (plan, tool, cap) VALUES ('business', 'upscaler-precision', 300);
    `);
    old.close();
    const db = openDatabase(path, QUEUE_MIGRATIONS);
    const store = new JobStore(db);
    expect(store.get('j1')).toMatchObject({ taskId: 't1', state: 'failed', earlierCharges: [] });
    expect(new PaceLimiter(db).capsOf('business')).toEqual({
      ...PUBLISHED_DAILY_CAPS.premium,
      'upscaler-precision': 300,
    });
    expect(new PriceBook(db).priceOf('upscaler-precision')).toMatchObject({ own: null, effective: 5 });
    db.close();
  });
});

const CHILD = resolve(import.meta.dirname, 'fixtures/limiter-child.ts');
/** A limiter process on `dir`, started; `go()` sets it taking grants, and resolves with what it took. */
async function child(dir: string, mode: 'rates' | 'cap', runMs: number, rates: object) {
  const p = spawn(process.execPath, [CHILD, dir, mode, String(runMs), JSON.stringify(rates)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  p.stderr.on('data', (d) => (err += d));
  const exited = new Promise<{ granted: number[]; capped: boolean }>((res, rej) =>
    p.once('exit', (code) =>
      code === 0 ? res(JSON.parse(out.split('\n')[1])) : rej(new Error(`child exited ${code}: ${err}`)),
    ),
  );
  await new Promise<void>((ready, rej) => {
    p.stdout.on('data', (d) => {
      out += d;
      if (out.startsWith('ready\n')) ready();
    });
    exited.catch(rej);
  });
  return () => {
    p.stdin.end('go\n');
    return exited;
  };
}

/** Both children started and ready, then set going together. */
async function together(...children: Promise<() => Promise<{ granted: number[]; capped: boolean }>>[]) {
  const goes = await Promise.all(children);
  return Promise.all(goes.map((go) => go()));
}

/** The most grants in any window of `ms` (ending at a grant). */
function most(times: number[], ms: number): number {
  const t = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < t.length; i++) {
    while (t[j] <= t[i] - ms) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

describe('the pacer', () => {
  it('leaves the places creates are about to take to them: a poll goes only if those still fit after it', async () => {
    const l = clocked('2026-03-15T12:00:00Z', { safetyMs: 0 });
    const pacer = new Pacer(l.limiter, {
      target: async () => ({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k' }),
      planTier: () => 'enterprise',
    });
    const at = await pacer.scope();
    for (let i = 0; i < 247; i++) expect((await pacer.poll(at)).go).toBe(true);
    // 3 places left in the burst window: with 3 creates prepared, the poll waits; with 2, it goes.
    expect(await pacer.poll(at, 3)).toMatchObject({ go: false, reason: 'burst' });
    expect((await pacer.poll(at, 2)).go).toBe(true);
    expect((await pacer.create(at, 'upscaler-precision')).go).toBe(true);
    expect((await pacer.create(at, 'upscaler-precision')).go).toBe(true);
    expect((await pacer.poll(at)).go).toBe(false);
    l.close();
  });

  it('gate() waits for a place and takes it (what the client awaits before any request)', async () => {
    let t = Date.now();
    const opened = openLimiter(home(), {
      now: () => t,
      safetyMs: 0,
      rates: { burstPerSec: 2, burstWindowSec: 0.05, averagePerSec: 100, averageWindowSec: 1 },
    });
    const pacer = new Pacer(opened.limiter, {
      target: async () => ({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k' }),
      planTier: () => 'enterprise',
    });
    const at = await pacer.scope();
    expect((await pacer.poll(at)).go).toBe(true);
    let through = false;
    const gated = pacer.gate().then(() => (through = true));
    // The window is full until the clock moves: the gate keeps waiting, then goes once it has.
    await new Promise((res) => setImmediate(res));
    expect(through).toBe(false);
    t += 60;
    await gated;
    expect((await pacer.poll(at)).go).toBe(false);
    opened.close();
  });
});

describe('two processes on one data folder', () => {
  it('together stay under the burst and average rates', { timeout: 30_000 }, async () => {
    const dir = home();
    openLimiter(dir).close();
    const rates = { burstPerSec: 40, burstWindowSec: 1, averagePerSec: 20, averageWindowSec: 3 };
    const [a, b] = await together(child(dir, 'rates', 4000, rates), child(dir, 'rates', 4000, rates));
    const all = [...a.granted, ...b.granted];
    expect(a.granted.length).toBeGreaterThan(0);
    expect(b.granted.length).toBeGreaterThan(0);
    expect(most(all, 1000)).toBeLessThanOrEqual(40);
    expect(most(all, 3000)).toBeLessThanOrEqual(60);
    // Held, not starved: the first 3 s window is filled.
    expect(all.length).toBeGreaterThanOrEqual(60);
  });

  it("together take a tool's daily cap exactly, never one more", { timeout: 30_000 }, async () => {
    const dir = home();
    const { limiter, close } = openLimiter(dir);
    limiter.setCap('business', 'upscaler-precision', 137);
    close();
    const fast = { ...SERVICE_RATES, burstPerSec: 1e6, averagePerSec: 1e6 };
    const [a, b] = await together(child(dir, 'cap', 20_000, fast), child(dir, 'cap', 20_000, fast));
    expect([a.capped, b.capped]).toEqual([true, true]);
    expect(a.granted.length + b.granted.length).toBe(137);
  });
});

describe('a held batch in plain words (the Queue and the CLI)', () => {
  it("names the limit, the tool, what is left, when it resets in the reader's own time, and what waits", () => {
    const held = { tool: 'upscaler-precision', title: 'Precision upscaler', limit: 200, left: 0, waiting: 12 };
    const one = new Date(2026, 10, 28, 1, 0).getTime();
    const five = new Date(2026, 10, 28, 13, 5).getTime();
    // The time in the one time format (shared/dates.ts), in the reader's zone.
    expect(heldMessage({ ...held, resetsAt: one })).toBe(
      `Held: the daily limit of 200 jobs for Precision upscaler is reached; 0 left today, resets at ${formatTime(one)} your time (12 jobs wait).`,
    );
    expect(heldMessage({ ...held, limit: 1, waiting: 1, resetsAt: five })).toBe(
      `Held: the daily limit of 1 job for Precision upscaler is reached; 0 left today, resets at ${formatTime(five)} your time (1 job waits).`,
    );
    if (new Intl.DateTimeFormat().resolvedOptions().locale === 'en-US')
      expect(heldMessage({ ...held, resetsAt: five }).replace(/\s/g, ' ')).toContain('resets at 1:05 PM your time');
  });

  it("names a cap by the tool's title, a workflow app's title, or the app plainly when its title is unknown", () => {
    const titles = new Map([['jM4nX8sc', 'Jingle maker']]);
    expect(limitTitle('upscaler-precision', titles)).toBe('Precision upscaler');
    expect(limitTitle('*', titles)).toBe('every other tool');
    expect(limitTitle('app:jM4nX8sc', titles)).toBe('Jingle maker');
    expect(limitTitle('app:zQ8gone7x1', titles)).toBe('Workflow app zQ8gone7');
  });
});
