import type { Statement } from 'better-sqlite3';
import { availableParallelism } from 'node:os';
import { openDatabase, type Db } from '../db/open.ts';
import type { EventRow } from './event.ts';
import { KEYS_SPILLED } from './keys.ts';
import { AUDIT_MIGRATIONS } from './migrations.ts';
import { BulkIndexes, CACHE_KIB } from './store/bulk-indexes.ts';
import { RowInserter } from './store/insert.ts';
import { ProcessRecords } from './store/records.ts';
import { openStage, removeDeadStages, type StagedRows } from './store/stage-copy.ts';
import type { CacheCounts, Elsewhere, InsertCounts, Origin, WriteTx } from './store/types.ts';

export type { StagedRows } from './store/stage-copy.ts';
export type { CacheCounts, Elsewhere, InsertCounts, Origin, WriteTx } from './store/types.ts';

/**
 * The events table, events_raw (the event as received, same seq) and the FTS index, written only
 * through insertBatch and a stage's copy and merge: a cached row is never modified, and each
 * batch is one transaction, so a crash leaves whole batches or nothing.
 */
export class AuditStore {
  readonly db: Db;
  private readonly records: ProcessRecords;
  private readonly indexes: BulkIndexes;
  private readonly inserter: RowInserter;
  private readonly countAll: Statement;
  private readonly ownChanges: Statement;
  private readonly dataVersion: Statement;
  /** A write that changes nothing: the first statement of each write transaction (writeTx). */
  private readonly claim: Statement;
  private readonly boundWriteTx: WriteTx = (fn) => this.writeTx(fn);
  /** The last counts() and the change marks they were counted at. */
  private lastCounts: { mine: number; theirs: number; counts: CacheCounts } | null = null;

  constructor(path: string) {
    // 16 KB pages: a bulk import writes a quarter of the pages (and B-tree splits) of the 4 KB default; new files only.
    this.db = openDatabase(path, AUDIT_MIGRATIONS, { pageSize: 16384 });
    this.db.pragma(`cache_size = -${CACHE_KIB}`);
    // Sorts larger than the cache (an index build over 1M rows) spill to a file the OS caches, not to this process.
    this.db.pragma('temp_store = FILE');
    // Large query sorts use helper threads too (an index build does not: BulkIndexes.sortingToBuild).
    this.db.pragma(`threads = ${Math.max(1, Math.min(4, availableParallelism() - 1))}`);
    this.claim = this.db.prepare('DELETE FROM main.audit_meta WHERE 0');
    this.records = new ProcessRecords(this.db, this.boundWriteTx);
    this.indexes = new BulkIndexes(this.db, this.boundWriteTx, this.records);
    this.inserter = new RowInserter(this.db, this.indexes);
    // Three subqueries, each one seek: the first and last keys' dates where keys follow dates, else
    // min(ts) and max(ts) by events_ts.
    const ends = (dir: 'ASC' | 'DESC', agg: string) =>
      `CASE WHEN ${KEYS_SPILLED} THEN (SELECT ${agg}(ts) FROM events) ELSE (SELECT ts FROM events ORDER BY seq ${dir} LIMIT 1) END`;
    this.countAll = this.db.prepare(
      `SELECT (SELECT count(*) FROM events) AS n, ${ends('ASC', 'min')} AS lo, ${ends('DESC', 'max')} AS hi`,
    );
    this.ownChanges = this.db.prepare('SELECT total_changes()').pluck();
    this.dataVersion = this.db.prepare('PRAGMA data_version').pluck();
    this.restoreIndexes();
    removeDeadStages(this.db);
  }

  /** Sets the secondary indexes aside for a bulk load (BulkIndexes.deferIndexes). */
  deferIndexes(opts: { keepUnique?: boolean } = {}): void {
    this.indexes.deferIndexes(opts);
  }

  /** Records this process as loading through a stage, until restoreIndexes. */
  registerLoad(): void {
    this.records.registerLoad();
  }

  /** Whether indexes set aside by a bulk load are still to be built. */
  indexesPending(): boolean {
    return this.indexes.pending();
  }

  beginBulk(): void {
    this.indexes.beginBulk();
  }

  endBulk(): void {
    this.indexes.endBulk();
  }

  /** Builds every deferred index again; returns how many of this process's bulk-loaded rows were removed as duplicates. */
  restoreIndexes(): number {
    return this.indexes.restoreIndexes();
  }

  /** The next write of restoreIndexes, or null once nothing is left to do (BulkIndexes.nextRestore). */
  nextRestore(): (() => number) | null {
    return this.indexes.nextRestore();
  }

  /**
   * Inserts one batch as one transaction; `extra` runs inside it (the sync stores its cursor with
   * the page it read). Rows go in date order, so their keys rise and FTS5 keeps one pending segment.
   */
  insertBatch(rows: readonly EventRow[], origin: Origin, extra?: () => void): InsertCounts {
    return this.writeTx(() => {
      const counts = this.inserter.insertRows(rows, origin);
      extra?.();
      return counts;
    });
  }

  /**
   * Runs `fn` as one transaction that takes the write lock first: a transaction that reads first
   * fails its first write with SQLITE_BUSY at once when another process committed meanwhile. Not
   * BEGIN IMMEDIATE, which would lock an attached stage too. Nested, `fn` runs in a savepoint.
   */
  writeTx<T>(fn: () => T): T {
    try {
      return this.db.transaction(() => {
        this.claim.run();
        return fn();
      })();
    } catch (err) {
      this.inserter.names.forget();
      throw err;
    }
  }

  /** Runs `write` waiting at most `ms` for the write lock (SQLITE_BUSY after that); the usual wait is back afterwards. */
  tryWrite<T>(write: () => T, ms: number): T {
    const usual = this.db.pragma('busy_timeout', { simple: true }) as number;
    if (this.db.inTransaction || ms === usual) return write();
    this.db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(ms))}`);
    try {
      return write();
    } finally {
      this.db.pragma(`busy_timeout = ${usual}`);
    }
  }

  /** Attaches a staged or bulk load's stage and copies its rows in (stage-copy.ts). */
  openStage(opts: { uniqueByOverlap?: boolean } = {}): StagedRows {
    const parts = { db: this.db, writeTx: this.boundWriteTx, inserter: this.inserter, indexes: this.indexes };
    return openStage(parts, opts);
  }

  /**
   * The event count and date span, counted again only when the file changed (total_changes here,
   * data_version elsewhere). `unlessLoading`: during an import here or elsewhere the last count
   * stands, since counting without the indexes scans the table; the import's end counts again.
   */
  counts(opts: { unlessLoading?: boolean } = {}): CacheCounts {
    const mine = this.ownChanges.get() as number;
    const theirs = this.dataVersion.get() as number;
    const last = this.lastCounts;
    if (last && last.mine === mine && last.theirs === theirs) return last.counts;
    if (
      last &&
      opts.unlessLoading &&
      (this.records.importsHere > 0 || (last.mine === mine && this.records.elsewhere().importing))
    )
      return last.counts;
    const r = this.countAll.get() as { n: number; lo: number | null; hi: number | null };
    const counts = { events: r.n, oldest: r.lo, newest: r.hi };
    this.lastCounts = { mine, theirs, counts };
    return counts;
  }

  /** Records this process as importing or syncing, for other processes' status; returns the end of it. */
  beginActivity(kind: 'import' | 'sync'): () => void {
    return this.records.beginActivity(kind);
  }

  /** Whether another live process is importing into the cache or syncing it. */
  elsewhere(): Elsewhere {
    return this.records.elsewhere();
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
