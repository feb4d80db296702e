import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeNdjson } from '../../bench/audit-data.ts';
import { WAITING_FOR_WRITER, type LockWait } from '../../electron/core/audit/busy.ts';
import type { AuditService } from '../../electron/core/audit/service.ts';
import type { ImportProgress, ImportReport } from '../../shared/contract/audit.ts';
import { until as waitUntil } from '../wait.ts';
import { EVENT_INDEXES, makeEvent, openService, tempDir } from './helpers.ts';

// The app's import of a large export (the staged and bulk paths) while another process holds the
// cache's write lock: a child holding BEGIN IMMEDIATE, over one real SQLite file.
const tmp = tempDir('md-audit-import-busy-');
/**
 * A file of a few MB loaded as a 48 MiB export is (plan.ts's seams): staged by a worker thread, into
 * a small cache in bulk, and copied in several transactions (5,000 rows here, 50,000 in the app).
 */
const EVENTS = 12_000;
const STAGE_MIN_BYTES = 1024 * 1024;
process.env.MEDIADESK_AUDIT_STAGE_MIN_BYTES = String(STAGE_MIN_BYTES);
process.env.MEDIADESK_AUDIT_BULK_BATCH_ROWS = '5000';
let big: string;
let shuffled: string;
let holderScript: string;
beforeAll(async () => {
  big = join(tmp.dir, 'export.ndjson');
  await writeNdjson(big, EVENTS, 'newest-first');
  expect(statSync(big).size).toBeGreaterThan(STAGE_MIN_BYTES);
  // Out of date order: after its first batches, the rows are held back and added by date at the end.
  shuffled = join(tmp.dir, 'shuffled.ndjson');
  await writeNdjson(shuffled, EVENTS, 'random');
  // Takes the write lock as a transaction that writes does, says so by creating `flag`, and lets
  // go (rolls back) when its standard input ends.
  holderScript = tmp.file(
    'hold-lock.mjs',
    `
    import { DatabaseSync } from 'node:sqlite';
    import { writeFileSync } from 'node:fs';
    const [path, flag] = process.argv.slice(2);
    const db = new DatabaseSync(path);
    db.exec('PRAGMA busy_timeout = 30000');
    db.exec('BEGIN IMMEDIATE');
    writeFileSync(flag, 'locked');
    process.stdin.resume();
    process.stdin.on('end', () => { db.exec('ROLLBACK'); db.close(); process.exit(0); });
  `,
  );
}, 60_000);
afterAll(() => {
  delete process.env.MEDIADESK_AUDIT_STAGE_MIN_BYTES;
  delete process.env.MEDIADESK_AUDIT_BULK_BATCH_ROWS;
  tmp.cleanup();
});

const PRIOR = 10;
const small = () =>
  tmp.file(
    `prior-${Math.random()}.ndjson`,
    Array.from({ length: PRIOR }, (_, i) => JSON.stringify(makeEvent(1_000_000 + i))).join('\n') + '\n',
  );

let holders = 0;
/**
 * Another process holding the cache's write lock, until release(). Waited for with this thread
 * held (so it can be taken from inside a progress callback, between two of the import's writes).
 */
function holdLock(dbPath: string): { release: () => Promise<void>; child: ChildProcess } {
  const flag = join(tmp.dir, `locked-${++holders}`);
  const child = spawn(process.execPath, ['--no-warnings', holderScript, dbPath, flag], {
    stdio: ['pipe', 'ignore', 'inherit'],
  });
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const until = Date.now() + 20_000;
  while (!existsSync(flag)) {
    if (Date.now() > until || child.exitCode !== null) throw new Error('the lock holder did not take the lock');
    Atomics.wait(pause, 0, 0, 10);
  }
  return {
    child,
    release: async () => {
      child.stdin!.end();
      await gone;
    },
  };
}

/** The longest gap between ticks of a 10 ms timer from now until stop(): how long this thread was held. */
function tickGaps(): { stop: () => number } {
  let last = performance.now();
  let max = 0;
  const t = setInterval(() => {
    const now = performance.now();
    max = Math.max(max, now - last);
    last = now;
  }, 10);
  return {
    stop: () => {
      clearInterval(t);
      return Math.max(max, performance.now() - last);
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves once `seen()` holds; fails after `ms`. */
const until = (seen: () => boolean, ms = 10_000) => waitUntil(seen, { timeout: ms, interval: 20 });

/** The cache as a load leaves it when it is over: every index built, no load recorded, no stage file. */
function expectWhole(app: AuditService, dbPath: string): void {
  const db = app.store.db;
  expect(
    db
      .prepare("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' AND sql IS NOT NULL")
      .pluck()
      .get(),
  ).toBe(EVENT_INDEXES);
  expect(db.prepare('SELECT count(*) FROM deferred_indexes').pluck().get()).toBe(0);
  expect(db.prepare("SELECT count(*) FROM audit_meta WHERE key GLOB 'bulk_owner_*'").pluck().get()).toBe(0);
  expect(readdirSync(join(dbPath, '..')).filter((f) => f.includes('-stage-'))).toEqual([]);
  expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
}

/** A wait that held this thread under a second, then every event of the file in, and the cache whole; the app closed. */
async function expectAllIn(app: AuditService, dbPath: string, r: ImportReport, maxGap: number): Promise<void> {
  expect(maxGap).toBeLessThan(1000);
  expect(r).toMatchObject({ items: EVENTS, accepted: EVENTS, duplicates: 0, rejected: 0, fatal: null });
  expect(r.interrupted).toBeUndefined();
  expect(app.store.counts().events).toBe(PRIOR + EVENTS);
  expectWhole(app, dbPath);
  await app.close();
}

let homes = 0;
/** The app's service over a fresh cache holding PRIOR events, and what its import reports as it goes. */
async function appWithCache(o: { lockWait?: LockWait } = {}) {
  const dbPath = join(tmp.dir, `home-${++homes}`, 'audit.db');
  const progress: ImportProgress[] = [];
  let each: ((p: ImportProgress) => void) | null = null;
  const track = (p: ImportProgress) => {
    progress.push(p);
    each?.(p);
  };
  const app = openService(dbPath, { ...o, onImportProgress: track });
  await app.import([small()]);
  expect(app.store.counts().events).toBe(PRIOR);
  return { app, dbPath, progress, track, onEach: (f: (p: ImportProgress) => void) => (each = f) };
}

const waited = (progress: ImportProgress[]) => progress.some((p) => p.waiting === WAITING_FOR_WRITER);

/**
 * The lock taken by another process, before the import or from inside it, between two of its
 * writes (take(), from a progress or onSort callback). letGo() waits for that and for the import
 * to say it waits, keeps the lock 1.5 s longer (a wait inside SQLite would hold this thread for
 * all of it), lets go, and returns the longest this thread was held meanwhile.
 */
function lockElsewhere(dbPath: string, progress: ImportProgress[]) {
  let holder: ReturnType<typeof holdLock> | null = null;
  let gaps: ReturnType<typeof tickGaps> | null = null;
  return {
    take: () => {
      if (holder) return;
      holder = holdLock(dbPath);
      gaps = tickGaps();
    },
    letGo: async (): Promise<number> => {
      let maxGap = Infinity;
      try {
        await until(() => gaps !== null, 60_000);
        await until(() => waited(progress), 2500);
        // Stays: the gaps between event-loop ticks are measured over real time with the lock held.
        await sleep(1500);
      } finally {
        maxGap = gaps?.stop() ?? Infinity;
        await holder?.release();
      }
      return maxGap;
    },
  };
}

/**
 * An import of `file` started while another process holds the lock, and Stop pressed once it says
 * it waits: it must end while the lock is still held (not once it is let go, or the wait gives up).
 * Returns its report; the lock is let go after.
 */
async function stoppedWhileWaiting(
  app: AuditService,
  dbPath: string,
  progress: ImportProgress[],
  file: string,
): Promise<ImportReport> {
  const holder = holdLock(dbPath);
  try {
    const run = app.importTracked([file]);
    await until(() => waited(progress), 2500);
    expect(waited(progress)).toBe(true);
    const stoppedAt = performance.now();
    expect(app.cancelImport()).toBe(true);
    const [r] = await run;
    expect(performance.now() - stoppedAt).toBeLessThan(2000);
    expect(holder.child.exitCode).toBeNull();
    return r;
  } finally {
    await holder.release();
  }
}

describe('the app importing a large export while another process holds the cache', () => {
  it('held from before it starts: the import waits with its thread free, says so, and once let go adds every event with the indexes built', async () => {
    const { app, dbPath, progress } = await appWithCache();
    const lock = lockElsewhere(dbPath, progress);
    lock.take();
    const run = app.importTracked([big]);
    const maxGap = await lock.letGo();
    const [r] = await run;
    expect(waited(progress)).toBe(true);
    // The wait over, the progress no longer says it waits.
    expect(progress.at(-1)?.waiting).toBeUndefined();
    await expectAllIn(app, dbPath, r, maxGap);
  }, 120_000);

  it('Stop while it waits: the import ends at once, having written nothing, and the cache is as it was', async () => {
    const { app, dbPath, progress } = await appWithCache();
    const r = await stoppedWhileWaiting(app, dbPath, progress, big);
    expect(r).toMatchObject({ accepted: 0, duplicates: 0, fatal: null, interrupted: true });
    expect(app.store.counts().events).toBe(PRIOR);
    expectWhole(app, dbPath);
    // Nothing of it stays in the way: the same file again goes in whole.
    const [again] = await app.import([big]);
    expect(again).toMatchObject({ accepted: EVENTS, fatal: null });
    await app.close();
  }, 120_000);

  // Taken from inside the progress of the first copy (5,000 rows): the next copy, or the
  // indexes' building, meets it. A staged load: the same with every index live (a cache six
  // times the file's size loads so; forced here). Without a worker thread: the file staged in this one.
  for (const how of [{}, { load: 'staged' as const }, { worker: false }]) {
    const load = 'load' in how ? how.load : undefined;
    it(`taken between two copies${load ? ` (${load} load)` : ''}${'worker' in how ? ' (staged in this thread)' : ''}: the next write waits with the thread free, says so, and once let go every event is in`, async () => {
      const { app, dbPath, progress, track, onEach } = await appWithCache();
      const lock = lockElsewhere(dbPath, progress);
      let bulkAside: number | null = null;
      onEach((p) => {
        if (bulkAside !== null || p.accepted === 0) return;
        bulkAside = app.store.db.prepare('SELECT count(*) FROM deferred_indexes').pluck().get() as number;
        lock.take();
      });
      const run = Object.keys(how).length ? app.import([big], { ...how, onProgress: track }) : app.importTracked([big]);
      const maxGap = await lock.letGo();
      const [r] = await run;
      expect(bulkAside).toBe(load ? 0 : EVENT_INDEXES);
      expect(waited(progress)).toBe(true);
      await expectAllIn(app, dbPath, r, maxGap);
    }, 120_000);
  }

  it('taken as the rows held back are about to be added by date: each of those writes waits with the thread free, and every event is in', async () => {
    const { app, dbPath, progress, track } = await appWithCache();
    const lock = lockElsewhere(dbPath, progress);
    const run = app.import([shuffled], { onProgress: track, onSort: lock.take });
    const maxGap = await lock.letGo();
    const [r] = await run;
    expect(progress.some((p) => p.held?.adding && p.waiting === WAITING_FOR_WRITER)).toBe(true);
    await expectAllIn(app, dbPath, r, maxGap);
  }, 120_000);

  it('Stop while a copy waits: the rows copied before stay, the rest are said not added, and the indexes are built once the lock is let go', async () => {
    const { app, dbPath, progress, onEach } = await appWithCache();
    let holder: ReturnType<typeof holdLock> | null = null;
    onEach((p) => {
      if (!holder && p.accepted > 0) holder = holdLock(dbPath);
    });
    const run = app.importTracked([big]);
    let over = false;
    void run.finally(() => (over = true));
    try {
      await until(() => holder !== null && waited(progress), 60_000);
      expect(waited(progress)).toBe(true);
      expect(app.cancelImport()).toBe(true);
      // The indexes set aside must be built again, which waits for the lock (saying so): the import is not over yet.
      const saidBefore = progress.length;
      await until(() => waited(progress.slice(saidBefore)), 60_000);
      expect(over).toBe(false);
    } finally {
      await (holder as ReturnType<typeof holdLock> | null)?.release();
    }
    const [r] = await run;
    const cached = app.store.counts().events - PRIOR;
    expect(cached).toBeGreaterThan(0);
    expect(cached).toBeLessThan(EVENTS);
    expect(r).toMatchObject({ accepted: cached, duplicates: 0, rejected: 0, fatal: null, interrupted: true });
    // Every item read is accounted for: added, or read but not added.
    expect(r.items - r.accepted).toBe(r.notAdded ?? 0);
    expectWhole(app, dbPath);
    // The same file again adds exactly the rest.
    const [again] = await app.import([big]);
    expect(again).toMatchObject({ accepted: EVENTS - cached, duplicates: cached, fatal: null });
    await app.close();
  }, 120_000);

  it('gives up when the lock stays taken, with the busy error saying nothing stored was lost, and the cache as it was', async () => {
    const { app, dbPath } = await appWithCache({ lockWait: { attemptMs: 50, giveUpMs: 1500, giveUpImportMs: 1500 } });
    const holder = holdLock(dbPath);
    let r: ImportReport;
    try {
      [r] = await app.importTracked([big]);
    } finally {
      await holder.release();
    }
    expect(r.fatal).toMatch(
      /^the audit cache stayed locked by another process \(the mediadesk CLI or the app\) for \d+ s; nothing already stored was lost: the batches imported before stay cached, and importing the file again adds the rest$/,
    );
    expect(r.accepted).toBe(0);
    expect(app.store.counts().events).toBe(PRIOR);
    expectWhole(app, dbPath);
    await app.close();
  }, 120_000);
});

describe('the app importing a small export (row by row) while another process holds the cache', () => {
  it('Stop while it waits: the import ends at once, its rows said not added, and the cache is as it was', async () => {
    const { app, dbPath, progress } = await appWithCache();
    const file = tmp.file(
      'small-export.ndjson',
      Array.from({ length: 300 }, (_, i) => JSON.stringify(makeEvent(2_000_000 + i))).join('\n') + '\n',
    );
    const r = await stoppedWhileWaiting(app, dbPath, progress, file);
    expect(r).toMatchObject({ items: 300, accepted: 0, notAdded: 300, fatal: null, interrupted: true });
    expect(app.store.counts().events).toBe(PRIOR);
    const [again] = await app.import([file]);
    expect(again).toMatchObject({ accepted: 300, fatal: null });
    await app.close();
  }, 60_000);
});

describe('indexes an earlier import left set aside, while another process holds the cache', () => {
  it('the next import builds them first, waiting with its thread free, then imports', async () => {
    const { app, dbPath } = await appWithCache();
    // As an import that could not build them leaves the cache (a full disk, a wait given up).
    app.store.deferIndexes();
    expect(app.store.db.prepare('SELECT count(*) FROM deferred_indexes').pluck().get()).toBe(EVENT_INDEXES);
    const file = tmp.file(
      'after-aside.ndjson',
      Array.from({ length: 50 }, (_, i) => JSON.stringify(makeEvent(3_000_000 + i))).join('\n') + '\n',
    );
    const holder = holdLock(dbPath);
    const gaps = tickGaps();
    let maxGap = Infinity;
    let r: ImportReport;
    try {
      const run = app.import([file]);
      // A wait inside SQLite would hold this thread for all of it.
      await sleep(1500);
      maxGap = gaps.stop();
      await holder.release();
      [r] = await run;
    } finally {
      gaps.stop();
      await holder.release();
    }
    expect(maxGap).toBeLessThan(1000);
    expect(r).toMatchObject({ items: 50, accepted: 50, fatal: null });
    expect(app.store.counts().events).toBe(PRIOR + 50);
    expectWhole(app, dbPath);
    await app.close();
  }, 60_000);
});
