// The pacing limiter of the core on real SQLite files: its answers with an injected clock, and two
// real processes on one data folder staying together under the rates and a daily cap.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { limiterScope, openLimiter, waitMessage } from '../../electron/core/limits/limiter.ts';
import { openDatabase } from '../../electron/core/db/open.ts';
import { QUEUE_MIGRATIONS } from '../../electron/core/queue/migrations.ts';
import { DEFAULT_DAILY_CAPS, SERVICE_RATES } from '../../shared/service-limits.ts';
import { heldMessage } from '../../shared/contract/jobs.ts';
import { formatTime } from '../../shared/dates.ts';
import { limitTitle } from '../../electron/core/limits/held.ts';

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
    expect(waitMessage(wait)).toBe(
      'Waiting 5 s: the service takes at most 250 requests in 5 s; sending again at 12:00:05 UTC.',
    );
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
    expect(l.limiter.capsOf('business')).toEqual(DEFAULT_DAILY_CAPS.business);
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
      'Waiting: the daily limit of 3 jobs for the Precision upscaler is reached (0 left today); it resets at 00:00 UTC.',
    );
    // Polls go on, and another tool has its own cap (the plan's `*`).
    expect(l.limiter.acquire(poll).go).toBe(true);
    expect(l.limiter.acquire({ ...create, tool: 'editor' })).toEqual({ go: true, capLeft: 499 });
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
    expect(l.limiter.capsOf('business')['upscaler-precision']).toBe(200);
    expect(() => l.limiter.setCap('business', 'editor', -1)).toThrow(
      'a daily cap is a whole number, 0 or more; got -1',
    );
    expect(() => l.limiter.setCap('gold' as 'business', 'editor', 5)).toThrow('no plan tier "gold"');
    expect(l.limiter.capsOf('business')).toEqual(DEFAULT_DAILY_CAPS.business);
    expect(() => l.limiter.acquire({ scope: 's', kind: 'create' })).toThrow(/tool and plan/);
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

const CHILD = resolve(import.meta.dirname, 'fixtures/limiter-child.ts');
function child(dir: string, mode: 'rates' | 'cap', runMs: number, rates: object) {
  const p = spawn(process.execPath, [CHILD, dir, mode, String(runMs), JSON.stringify(rates)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  p.stdout.on('data', (d) => (out += d));
  p.stderr.on('data', (d) => (err += d));
  return new Promise<{ granted: number[]; capped: boolean }>((res, rej) =>
    p.once('exit', (code) => (code === 0 ? res(JSON.parse(out)) : rej(new Error(`child exited ${code}: ${err}`)))),
  );
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

describe('two processes on one data folder', () => {
  it('together stay under the burst and average rates', { timeout: 30_000 }, async () => {
    const dir = home();
    openLimiter(dir).close();
    const rates = { burstPerSec: 40, burstWindowSec: 1, averagePerSec: 20, averageWindowSec: 3 };
    const [a, b] = await Promise.all([child(dir, 'rates', 4000, rates), child(dir, 'rates', 4000, rates)]);
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
    const [a, b] = await Promise.all([child(dir, 'cap', 20_000, fast), child(dir, 'cap', 20_000, fast)]);
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
