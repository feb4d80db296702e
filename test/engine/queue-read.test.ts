import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { openDatabase } from '../../electron/core/db/open.ts';
import { PACE_SCOPE_FLAG } from '../../electron/core/limits/held-at.ts';
import { dbPaths } from '../../electron/core/paths.ts';
import { QUEUE_MIGRATIONS } from '../../electron/core/queue/migrations.ts';
import { JobStore } from '../../electron/core/queue/store.ts';
import { openQueueForReading } from '../../electron/host/cli/queue-read.ts';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { utcDay } from '../../shared/service-limits.ts';
import { cliEnv, runCli } from '../cli.ts';
import { cleanup, control, creates, queueBatch, tmp } from './helpers.ts';

// `mediadesk jobs list` reads the queue's store alone, whatever it holds: no engine, nothing sent.
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(cleanup));
let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, taskDurationMs: 50 });
});
afterAll(async () => sandbox.close());

/** A queue with one batch of `n` queued upscaler jobs. */
function queued(home: string, n: number): void {
  const db = openDatabase(dbPaths(home).jobs, QUEUE_MIGRATIONS);
  try {
    queueBatch(
      new JobStore(db),
      home,
      Array.from({ length: n }, (_, i) => `/in/${i}.png`),
    );
  } finally {
    db.close();
  }
}

/** Every row of every table of the queue's database, read apart from the app's own code. */
function dump(home: string): Record<string, unknown[]> {
  const db = new Database(dbPaths(home).jobs, { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
    return Object.fromEntries(
      (tables as string[]).map((t) => [t, db.prepare(`SELECT * FROM "${t}" ORDER BY 1`).raw().all()]),
    );
  } finally {
    db.close();
  }
}

describe("the queue read without the engine (jobs list's path)", () => {
  it('`mediadesk jobs list` with queued jobs lists them and neither submits nor changes the database', async () => {
    const home = tmp('queue-read');
    dirs.push(home);
    queued(home, 3);
    const before = dump(home);
    const created = creates(await control(sandbox.url, 'stats'));
    const r = await runCli(['jobs', 'list', '--json'], { env: cliEnv(home, sandbox.url) });
    expect(r.code, r.err).toBe(0);
    expect((JSON.parse(r.out) as { jobs: { id: string; state: string }[] }).jobs).toEqual(
      ['j0', 'j1', 'j2'].map((id) => expect.objectContaining({ id, state: 'queued' })),
    );
    expect(creates(await control(sandbox.url, 'stats'))).toBe(created);
    expect(dump(home)).toEqual(before);
  });

  it('says which queued tools wait for their daily cap, by the scope a process last paced by, from the store alone', async () => {
    const home = tmp('queue-read-cap');
    dirs.push(home);
    queued(home, 2);
    const none = openQueueForReading(home, {});
    // No process has paced yet: nothing is known to be held.
    expect(await none.capHolds()).toEqual([]);
    none.store.setFlag(PACE_SCOPE_FLAG, JSON.stringify({ scope: 'S', plan: 'business', planFrom: 'settings' }));
    none.close();
    const db = openDatabase(dbPaths(home).jobs, QUEUE_MIGRATIONS);
    // The service told this key a cap of 5 today (a 429 the limiter learned from), and 5 went out.
    const now = Date.now();
    db.prepare('INSERT INTO limiter_learned_caps (scope, tool, cap, learned_at, until) VALUES (?, ?, ?, ?, ?)').run(
      'S',
      'upscaler-precision',
      5,
      now,
      now + 3_600_000,
    );
    db.prepare('INSERT INTO limiter_daily_uses (scope, tool, day, uses) VALUES (?, ?, ?, ?)').run(
      'S',
      'upscaler-precision',
      utcDay(now),
      5,
    );
    db.close();
    const held = openQueueForReading(home, {});
    try {
      expect(await held.capHolds()).toEqual([
        expect.objectContaining({ tool: 'upscaler-precision', limit: 5, left: 0, waiting: 2 }),
      ]);
      // Pacing off (MEDIADESK_PACING=off): no cap applies.
      const off = openQueueForReading(home, { MEDIADESK_PACING: 'off' });
      expect(await off.capHolds()).toEqual([]);
      off.close();
    } finally {
      held.close();
    }
  });

  it('queues again the jobs in flight on a built-in Sandbox whose process ended, as every reader of the queue does', () => {
    const home = tmp('queue-read-gone');
    dirs.push(home);
    queued(home, 1);
    const db = openDatabase(dbPaths(home).jobs, QUEUE_MIGRATIONS);
    try {
      const store = new JobStore(db);
      expect(store.move('j0', 'queued', 'submitting', { attemptId: 'a', sandboxOf: 'an-ended-process' })).toBe(true);
      expect(store.move('j0', 'submitting', 'running', { taskId: 't1' })).toBe(true);
      const reading = openQueueForReading(home, {});
      expect(reading.store.listRecords({ limit: 10, offset: 0 }).jobs).toEqual([
        expect.objectContaining({ id: 'j0', state: 'queued' }),
      ]);
      reading.close();
    } finally {
      db.close();
    }
  });
});
