import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { keyHashOf, UsageCache, UsageLedger } from '../../electron/core/analytics/ledger.ts';
import { ANALYTICS_LEDGER, ANALYTICS_MIGRATIONS } from '../../electron/core/analytics/migrations.ts';
import { TRAINING_LEDGER, TRAINING_MIGRATIONS } from '../../electron/core/lora-training/migrations.ts';
import { usageBody } from '../../electron/core/analytics/service.ts';
import { openAnalyticsDb } from '../../electron/core/analytics/store.ts';
import { APPS_LEDGER, APPS_MIGRATIONS } from '../../electron/core/apps/migrations.ts';
import { LIMITER_LEDGER, LIMITER_MIGRATIONS } from '../../electron/core/limits/migrations.ts';
import { AppRunStore, openAppRunStore } from '../../electron/core/apps/store.ts';
import { DatabaseTooNewError, openDatabase, type Db } from '../../electron/core/db/open.ts';
import { createCore } from '../../electron/core/index.ts';
import { QUEUE_MIGRATIONS } from '../../electron/core/queue/migrations.ts';
import { MemorySecretStore } from '../../electron/core/secrets.ts';
import { DeskError } from '../../shared/contract/index.ts';
import { cleanup, tmp } from './helpers.ts';

// The apps, analytics, limiter and LoRA training stores share mediadesk.db with the queue, each with its own migration ledger.

const homes: string[] = [];
const home = (name: string) => {
  const h = tmp(name);
  homes.push(h);
  return h;
};
afterAll(() => homes.forEach(cleanup));

const KEY = 'sandbox-admin';
const LIVE = 'live http://127.0.0.1:9';
const USAGE_QUERY = { granularity: 'day' as const, from: '2025-01-01', to: '2025-01-31' };
const USAGE_ANSWER = [{ date: '2025-01-01', consumptions: [{ tool: 'upscaler', uses: 2, credits: 10 }] }];

/** Every row of the apps' and analytics' tables, and the queue's schema version. */
function dump(db: Db) {
  return {
    runs: db.prepare('SELECT * FROM app_runs ORDER BY seq').all(),
    ledger: db.prepare('SELECT * FROM usage_ledger ORDER BY key_hash, day').all(),
    cache: db.prepare('SELECT * FROM usage_cache ORDER BY key_hash, body_hash').all(),
    queueVersion: db.pragma('user_version', { simple: true }),
  };
}

const ledgerOf = (db: Db) =>
  Object.fromEntries(
    (db.prepare('SELECT owner, version FROM migration_ledger').all() as { owner: string; version: number }[]).map(
      (r) => [r.owner, r.version],
    ),
  );

/** A data folder as today's main writes it: the team services over the queue's own connection and migrations. */
function folderFromMain(h: string) {
  const db = openDatabase(join(h, 'mediadesk.db'), QUEUE_MIGRATIONS);
  const runs = new AppRunStore(db);
  // main's AppRunStore.insert, before apps migration 2 added the runs' sources and metadata settings.
  const insert = (id: string, seq: number, appId: string, inputs: object) => {
    db.prepare(
      `INSERT INTO app_runs (id, seq, app_id, app_name, output_kind, cost, state, inputs, out_dir, backend, created_at, updated_at)
      VALUES (?, ?, ?, 'Jingle', 'audio', 8, 'queued', ?, ?, ?, ?, ?)`,
    ).run(id, seq, appId, JSON.stringify(inputs), join(h, 'out'), LIVE, Date.now(), Date.now());
    return runs.get(id)!;
  };
  const queued = insert('0a000000-0000-4000-8000-000000000001', 1, 'a1', { brief: 'one' });
  const running = insert('0a000000-0000-4000-8000-000000000002', 2, 'a2', { brief: 'two' });
  expect(runs.move(running.id, 'queued', 'submitting', { attemptId: 'att-1', attempts: 1 })).toBe(true);
  expect(runs.move(running.id, 'submitting', 'running', { runId: 'run-2', runStatus: 'in_progress' })).toBe(true);
  const kh = keyHashOf(KEY);
  const ledger = new UsageLedger(db);
  for (let i = 0; i < 3; i++) expect(ledger.take(kh)).toBe(true);
  new UsageCache(db).put(kh, usageBody(USAGE_QUERY, Date.now()), USAGE_ANSWER, Date.now());
  const before = dump(db);
  db.close();
  return { before, ids: [queued.id, running.id] };
}

/** The rows of `before` as apps migration 2 leaves them: no local images, no settings frozen (the settings now apply). */
const withMigration2 = (before: ReturnType<typeof dump>) => ({
  ...before,
  runs: before.runs.map((r) => ({ ...(r as object), sources: null, metadata: null })),
});

describe('the apps and analytics stores in mediadesk.db', () => {
  it("a data folder from today's main opens with every app run and usage row intact, each store on its own ledger", async () => {
    const h = home('upgrade');
    const { before, ids } = folderFromMain(h);
    expect(before.runs).toHaveLength(2);
    expect(before.ledger).toHaveLength(1);
    expect(before.cache).toHaveLength(1);

    const core = await createCore({
      home: h,
      host: 'cli',
      env: { MEDIADESK_API_URL: 'http://127.0.0.1:9', MEDIADESK_API_KEY: KEY },
      runQueue: false,
      secrets: new MemorySecretStore(),
      startSandbox: () => Promise.reject(new Error('no built-in Sandbox in this test')),
    });
    try {
      expect(
        core.apps
          .runs()
          .map((r) => [r.id, r.state, r.runId])
          .sort(),
      ).toEqual([
        [ids[0], 'queued', null],
        [ids[1], 'running', 'run-2'],
      ]);
      const budget = await core.dispatch('usage.budget', {});
      expect(budget.ok && budget.result).toMatchObject({ used: 3, remaining: 97 });
      // The cached answer comes from the carried-over cache: the unreachable API is never asked.
      const usage = await core.dispatch('usage.query', USAGE_QUERY);
      if (!usage.ok) throw DeskError.from(usage.error);
      expect(usage.result).toMatchObject({ cached: true, points: [{ date: '2025-01-01', uses: 2, credits: 10 }] });
    } finally {
      await core.close();
    }

    const after = openDatabase(join(h, 'mediadesk.db'), QUEUE_MIGRATIONS);
    try {
      expect(dump(after)).toEqual(withMigration2(before));
      expect(ledgerOf(after)).toEqual({
        [APPS_LEDGER]: APPS_MIGRATIONS.length,
        [ANALYTICS_LEDGER]: ANALYTICS_MIGRATIONS.length,
        [LIMITER_LEDGER]: LIMITER_MIGRATIONS.length,
        [TRAINING_LEDGER]: TRAINING_MIGRATIONS.length,
      });
    } finally {
      after.close();
    }
  });

  it('opened again, the stores change nothing; a ledger from a newer build is refused, naming its owner', () => {
    const h = home('again');
    const file = join(h, 'mediadesk.db');
    const { before } = folderFromMain(h);
    for (let i = 0; i < 2; i++) {
      openAppRunStore(file).close();
      openAnalyticsDb(file).close();
    }
    const db = openDatabase(file, QUEUE_MIGRATIONS);
    expect(dump(db)).toEqual(withMigration2(before));
    db.prepare('UPDATE migration_ledger SET version = 99 WHERE owner = ?').run(APPS_LEDGER);
    db.close();
    expect(() => openAppRunStore(file)).toThrow(DatabaseTooNewError);
    expect(() => openAppRunStore(file)).toThrow(`(${APPS_LEDGER}) was written by a newer MediaDesk`);
    openAnalyticsDb(file).close();
  });

  it("opened before the queue's migrations made their tables, a store refuses and leaves the file for the queue", () => {
    const h = home('order');
    const file = join(h, 'mediadesk.db');
    expect(() => openAppRunStore(file)).toThrow(/no app_runs table yet: .*open the queue/);
    expect(() => openAnalyticsDb(file)).toThrow(/no usage_ledger table yet/);
    const queue = openDatabase(file, QUEUE_MIGRATIONS);
    expect(queue.prepare("SELECT name FROM sqlite_master WHERE name = 'migration_ledger'").get()).toBeUndefined();
    queue.close();
    const runs = openAppRunStore(file);
    const analytics = openAnalyticsDb(file);
    expect(ledgerOf(runs.db)).toEqual({ [APPS_LEDGER]: APPS_MIGRATIONS.length, [ANALYTICS_LEDGER]: 1 });
    runs.close();
    analytics.close();
  });
});
