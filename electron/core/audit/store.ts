import type { Statement } from 'better-sqlite3';
import { readdirSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { openDatabase, type Db } from '../db/open.ts';
import type { EventRow } from './event.ts';
import { KEY_SLOTS, KeyAllocator, keyBase } from './keys.ts';
import { AUDIT_MIGRATIONS } from './migrations.ts';
import { stageTableSql } from './stage.ts';

/** audit_meta key of a process loading through a stage (a staged or bulk load), followed by its pid. */
const BULK_OWNER = 'bulk_owner_';
/**
 * audit_meta key of a process importing into the cache or syncing it (a load of any size), followed
 * by `import_` or `sync_` and its pid. Only what other processes are told (audit.status's
 * `elsewhere`): the indexes' safety rests on the BULK_OWNER records alone.
 */
const ACTIVITY = 'activity_';
/** The index that keeps event_id unique (migration 6): set aside during a bulk load like the others. */
const UNIQUE_INDEX = 'events_event_id';
/**
 * A bulk batch whose dates hold, in the cache as it was before the load, at least this share of
 * the batch's row count is taken to repeat cached events (a re-import, overlapping exports).
 */
const OVERLAP_SHARE = 0.1;
/** Each time a bulk load builds the unique index again it sorts the whole cache's ids: twice at most. */
const MAX_UNIQUE_RESTORES = 2;
interface FtsConfig {
  hashsize: number;
  automerge: number;
  crisismerge: number;
}
/** FTS5's defaults. */
const EVERYDAY_FTS: FtsConfig = { hashsize: 1024 * 1024, automerge: 4, crisismerge: 16 };
/** 1,999 is FTS5's highest crisismerge: a load of over ~10M events still merges, once, on the way. */
const BULK_FTS: FtsConfig = { hashsize: 16 * 1024 * 1024, automerge: 0, crisismerge: 1999 };
/** Page cache in KiB: queries keep index pages hot; a bulk load streams through, so it gets less. */
const CACHE_KIB = 65536;
const BULK_CACHE_KIB = 16384;

export type Origin = 'sync' | 'import';

export interface CacheCounts {
  events: number;
  oldest: number | null;
  newest: number | null;
}

/** What processes other than this one are doing to the cache now. */
export interface Elsewhere {
  importing: boolean;
  syncing: boolean;
}

export interface InsertCounts {
  inserted: number;
  duplicates: number;
}

/**
 * The events table, its side table events_raw (the event as received, same seq) and its FTS
 * index, written only through `insertBatch` and a stage's `copy` and `merge`: a row whose event_id is
 * cached already is skipped (by a bulk load, removed when it ends, or by the repair after a crash),
 * so a cached row is never modified, and each batch is one transaction, so a crash leaves whole
 * batches or nothing.
 */
export class AuditStore {
  readonly db: Db;
  private readonly insertEvent: Statement;
  private readonly insertRaw: Statement;
  private readonly insertText: Statement;
  private readonly trackBulkRow: Statement;
  private readonly idInMillisecond: Statement;
  private readonly indexNamed: Statement;
  private readonly keys: KeyAllocator;
  private readonly keysIn: Statement;
  private readonly lastKeyIn: Statement;
  private readonly countAll: Statement;
  private readonly ownChanges: Statement;
  private readonly dataVersion: Statement;
  /** A write that changes nothing: the first statement of each write transaction (writeTx). */
  private readonly claim: Statement;
  /** The last counts() and the change marks they were counted at. */
  private lastCounts: { mine: number; theirs: number; counts: CacheCounts } | null = null;
  /** This process's imports running now (beginActivity). */
  private importsHere = 0;

  constructor(path: string) {
    // 16 KB pages: a bulk import writes a quarter of the pages (and B-tree splits) of the 4 KB
    // default, for the same bytes; applies to files created from now on.
    this.db = openDatabase(path, AUDIT_MIGRATIONS, { pageSize: 16384 });
    this.db.pragma(`cache_size = -${CACHE_KIB}`);
    // Sorts larger than the cache (an index build over 1M rows) spill to a temporary file, kept by
    // the OS page cache, instead of growing this process by the size of the index.
    this.db.pragma('temp_store = FILE');
    // Index builds (the end of a bulk import) sort on helper threads too: the file is read by then, so cores are free.
    this.db.pragma(`threads = ${Math.max(1, Math.min(4, availableParallelism() - 1))}`);
    this.insertEvent = this.db.prepare(`INSERT OR IGNORE INTO events
      (seq, event_id, ts, event_type, member_email, member_id, member_type, verb, status, category, group_id, folder_ref, project_ref, request_id, correlation_id, resource_id, origin)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.insertRaw = this.db.prepare('INSERT INTO events_raw (seq, raw) VALUES (?, ?)');
    this.insertText = this.db.prepare('INSERT INTO events_fts (rowid, body) VALUES (?, ?)');
    this.trackBulkRow = this.db.prepare('INSERT INTO bulk_rows (seq, owner) VALUES (?, ?)');
    this.idInMillisecond = this.db
      .prepare('SELECT 1 FROM events WHERE seq >= ? AND seq < ? AND event_id = ? LIMIT 1')
      .pluck();
    // Asked before every batch a sync or small import writes (insertRows): prepared once.
    this.indexNamed = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?").pluck();
    this.keys = new KeyAllocator(this.db, 'events');
    this.keysIn = this.db.prepare('SELECT seq FROM events WHERE seq >= ? AND seq < ? LIMIT ?').pluck();
    this.lastKeyIn = this.db.prepare('SELECT max(seq) FROM events WHERE seq >= ? AND seq < ?').pluck();
    // Three subqueries: min(ts) or max(ts) alone is one seek of the ts index, but the three
    // aggregates in one SELECT scanned all of it (~55-110 ms at 1,000,000 events against ~0.1 ms).
    this.countAll = this.db.prepare(
      'SELECT (SELECT count(*) FROM events) AS n, (SELECT min(ts) FROM events) AS lo, (SELECT max(ts) FROM events) AS hi',
    );
    this.ownChanges = this.db.prepare('SELECT total_changes()').pluck();
    this.dataVersion = this.db.prepare('PRAGMA data_version').pluck();
    this.claim = this.db.prepare('DELETE FROM main.audit_meta WHERE 0');
    this.restoreIndexes();
    this.removeDeadStages();
  }

  /**
   * Drops the events table's secondary indexes, keeping their definitions to restore, and records
   * this process as a bulk importer: another process opening the file meanwhile (the CLI beside
   * the app) must not build them under the import's feet. `keepUnique` leaves the event_id index
   * live (see import.ts for when).
   */
  deferIndexes(opts: { keepUnique?: boolean } = {}): void {
    this.writeTx(() => {
      // A load already running chose whether the unique index stays; its statements depend on it.
      const keepUnique = opts.keepUnique || this.otherLoadAlive();
      this.registerLoad();
      const list = this.db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' AND sql IS NOT NULL")
        .pluck()
        .all() as string[];
      for (const name of list.filter((n) => !(keepUnique && n === UNIQUE_INDEX))) this.setIndexAside(name);
    });
  }

  /**
   * Records this process as loading the cache through a stage (a staged or bulk load), until
   * restoreIndexes: a bulk load elsewhere then leaves the unique index as it is.
   */
  registerLoad(): void {
    this.db
      .prepare('INSERT OR REPLACE INTO audit_meta (key, value) VALUES (?, ?)')
      .run(`${BULK_OWNER}${process.pid}`, Date.now());
  }

  /** Drops one index of the events table, keeping its definition in deferred_indexes to build again. */
  private setIndexAside(name: string): void {
    const sql = this.db.prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?").pluck().get(name) as
      string | undefined;
    if (!sql) return;
    this.db.prepare('INSERT OR REPLACE INTO deferred_indexes (name, sql) VALUES (?, ?)').run(name, sql);
    // Names come from sqlite_master, not from users; quoted as identifiers all the same.
    this.db.exec(`DROP INDEX "${name.replaceAll('"', '""')}"`);
  }

  /** The processes recorded as loading the cache through a stage (registerLoad), live or not. */
  private loadOwners(): number[] {
    return (this.db.prepare("SELECT key FROM audit_meta WHERE key GLOB 'bulk_owner_*'").pluck().all() as string[]).map(
      pidOf,
    );
  }

  private otherLoadAlive(owners = this.loadOwners()): boolean {
    return owners.some((pid) => pid !== process.pid && isAlive(pid));
  }

  /**
   * The unique index set aside in the middle of a bulk load that kept it live so far (import.ts):
   * not while another bulk load runs, whose statements were prepared for it live. Returns whether
   * it is aside now.
   */
  private setUniqueAside(): boolean {
    return this.writeTx(() => {
      if (this.otherLoadAlive()) return !this.indexExists(UNIQUE_INDEX);
      this.setIndexAside(UNIQUE_INDEX);
      return true;
    });
  }

  /**
   * The unique index built again in the middle of a bulk load that set it aside, once the load
   * reaches events the cache already held: from then on each duplicate is skipped at once rather
   * than inserted and removed at the end. Not while another bulk load runs (its statements count
   * on the index staying aside). Returns how many of this process's rows were removed as duplicates.
   */
  private restoreUnique(): number {
    if (this.otherLoadAlive()) return 0;
    const ix = this.db.prepare('SELECT name, sql FROM deferred_indexes WHERE name = ?').get(UNIQUE_INDEX) as
      { name: string; sql: string } | undefined;
    return ix ? this.buildDeferred(ix) : 0;
  }

  private indexExists(name: string): boolean {
    return !!this.indexNamed.get(name);
  }

  /**
   * Builds one set-aside index, in one transaction with, for the unique index, the removal of the
   * duplicates a load let in, so no other writer can add one between the two. Returns how many of
   * this process's bulk-loaded rows were removed.
   */
  private buildDeferred(ix: { name: string; sql: string }): number {
    return this.writeTx(() => {
      let removed = 0;
      if (!this.indexExists(ix.name)) {
        if (ix.name === UNIQUE_INDEX) removed = this.buildUnique(ix.sql);
        else this.db.exec(ix.sql);
      }
      this.db.prepare('DELETE FROM deferred_indexes WHERE name = ?').run(ix.name);
      return removed;
    });
  }

  /**
   * FTS5 turns its in-memory term lists into a new segment whenever they pass `hashsize` (1 MB by
   * default), which splits every batch of a bulk load into several small segments that must be
   * merged again. During a bulk load one batch makes one segment (16 MB holds a 5,000-event
   * batch; more only costs memory: bench/history/audit-import.md, fourth round), and segments are not merged as
   * they come (automerge merges every 4, rewriting the index once per level: about 5 s of a
   * 1,000,000-event load); `restoreIndexes` merges them all in one pass at the end.
   */
  beginBulk(): void {
    this.db.pragma(`cache_size = -${BULK_CACHE_KIB}`);
    this.ftsConfig(BULK_FTS);
  }

  endBulk(): void {
    this.db.pragma(`cache_size = -${CACHE_KIB}`);
  }

  /** Whether a bulk load (beginBulk) left FTS5 not merging its segments as they come. */
  private ftsInBulkMode(): boolean {
    return (
      this.db.prepare("SELECT v FROM events_fts_config WHERE k = 'automerge'").pluck().get() === BULK_FTS.automerge
    );
  }

  private ftsConfig(c: FtsConfig): void {
    // Literals: bound JS numbers arrive as REAL, which FTS5 refuses for its integer options.
    for (const [k, v] of Object.entries(c))
      this.db.exec(`INSERT INTO events_fts (events_fts, rank) VALUES ('${k}', ${Math.trunc(v)})`);
  }

  /**
   * Builds every deferred index again: at the end of a bulk import, and as the repair of one that
   * crashed. Not while another live process is still loading through a stage; the last one to
   * finish builds them. Returns how many of this process's bulk-loaded rows were removed as
   * duplicates.
   */
  restoreIndexes(): number {
    let removed = 0;
    for (let step = this.nextRestore(); step; step = this.nextRestore()) removed += step();
    return removed;
  }

  /**
   * restoreIndexes one write at a time, so a caller can wait for the lock between them (import.ts):
   * the next write it makes (returning the rows it removed), or null once nothing is left to do.
   * Decided by reading only (a process that only opens the file to read it writes nothing here),
   * and decided again under the lock: another process may have started a load since.
   */
  nextRestore(): (() => number) | null {
    const owners = this.loadOwners();
    const mine = `${BULK_OWNER}${process.pid}`;
    const forgetMine = () => {
      this.db.prepare('DELETE FROM audit_meta WHERE key = ?').run(mine);
      return 0;
    };
    if (this.otherLoadAlive(owners)) return owners.includes(process.pid) ? forgetMine : null;
    // Each write below does nothing when another load started since: the next call then only forgets this one.
    const unlessLoading = (write: () => number) => () => this.writeTx(() => (this.otherLoadAlive() ? 0 : write()));
    if (owners.length && this.ftsInBulkMode()) {
      // The last load to finish (or the repair of one that crashed) merges the full-text segments
      // the bulk loads left, in one pass, and puts back the everyday settings.
      return unlessLoading(() => {
        if (!this.ftsInBulkMode()) return 0;
        this.db.exec("INSERT INTO events_fts (events_fts) VALUES ('optimize')");
        this.ftsConfig(EVERYDAY_FTS);
        return 0;
      });
    }
    // The unique index first: the others need not be built over the duplicates it removes.
    const ix = this.db
      .prepare('SELECT name, sql FROM deferred_indexes ORDER BY name = ? DESC LIMIT 1')
      .get(UNIQUE_INDEX) as { name: string; sql: string } | undefined;
    if (ix) return unlessLoading(() => this.buildDeferred(ix));
    // Only now: while the indexes were being built, a process opening the file had to leave them alone.
    if (owners.length) {
      return unlessLoading(() => {
        this.db.prepare("DELETE FROM audit_meta WHERE key GLOB 'bulk_owner_*'").run();
        return 0;
      });
    }
    return null;
  }

  /**
   * Builds the unique index inside buildDeferred's transaction. Built first, since a load of a new
   * export (the usual case) let in no duplicate: the build itself is then the check, and the search
   * for duplicates, one more sort of every cached id, is not run (~1 s of a 1,000,000-event load,
   * bench/history/audit-import.md, tenth round). A build that meets a duplicate fails as a statement and leaves
   * the transaction open; the duplicates are then removed and the index built again.
   */
  private buildUnique(sql: string): number {
    try {
      this.db.exec(sql);
      this.db.exec('DELETE FROM main.bulk_rows');
      return 0;
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'SQLITE_CONSTRAINT_UNIQUE') throw err;
    }
    const removed = this.removeBulkDuplicates();
    this.db.exec(sql);
    return removed;
  }

  /**
   * While the unique index is set aside, a bulk load inserts every row it reads and records it in
   * bulk_rows. Of the rows sharing an event_id, the one not from a bulk load stays (the cached
   * row: a cache never loses or changes what it held), else the lowest key (the earliest date;
   * within a millisecond, the first read). One sort of the event ids finds them.
   */
  private removeBulkDuplicates(): number {
    const db = this.db;
    db.exec(`
      CREATE TEMP TABLE IF NOT EXISTS bulk_losers (seq INTEGER PRIMARY KEY, owner INTEGER);
      DELETE FROM temp.bulk_losers;
      INSERT INTO temp.bulk_losers (seq, owner) SELECT seq, owner FROM (
        SELECT e.seq, b.owner, row_number() OVER (PARTITION BY e.event_id ORDER BY b.seq IS NOT NULL, e.seq) AS k
        FROM main.events AS e LEFT JOIN main.bulk_rows AS b ON b.seq = e.seq
        WHERE e.event_id IN (SELECT event_id FROM main.events GROUP BY event_id HAVING count(*) > 1)
      ) WHERE k > 1;
      DELETE FROM main.events WHERE seq IN (SELECT seq FROM temp.bulk_losers);
      DELETE FROM main.events_raw WHERE seq IN (SELECT seq FROM temp.bulk_losers);
      DELETE FROM main.events_fts WHERE rowid IN (SELECT seq FROM temp.bulk_losers);
      DELETE FROM main.bulk_rows;
    `);
    const own = db.prepare('SELECT count(*) FROM temp.bulk_losers WHERE owner = ?').pluck().get(process.pid) as number;
    db.exec('DELETE FROM temp.bulk_losers');
    return own;
  }

  /**
   * `extra` runs inside the same transaction (the sync stores its cursor with the page it read).
   * Rows go in date order, so their keys (keys.ts) rise through the batch: FTS5 keeps one pending
   * segment for the whole batch only while rowids rise.
   */
  insertBatch(rows: readonly EventRow[], origin: Origin, extra?: () => void): InsertCounts {
    return this.writeTx(() => {
      const counts = this.insertRows(rows, origin);
      extra?.();
      return counts;
    });
  }

  /**
   * Runs `fn` as one transaction that takes the cache's write lock first. A transaction that reads
   * before it writes (BEGIN's default) cannot wait for the lock: when another process holds it, or
   * committed since the first read, its first write fails at once with SQLITE_BUSY, busy_timeout
   * or not (measured: a sync beside a CLI bulk import stopped that import so, on its next batch).
   * BEGIN IMMEDIATE would also lock an attached stage, which the reading thread is filling. Nested
   * in another writeTx, `fn` runs in a savepoint under the lock already held.
   */
  writeTx<T>(fn: () => T): T {
    return this.db.transaction(() => {
      this.claim.run();
      return fn();
    })();
  }

  /**
   * Runs `write` (a writeTx, or one statement) waiting at most `ms` for the write lock, which
   * throws SQLITE_BUSY after that; the connection's own wait is back for the next statement.
   */
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

  /** The body of `insertBatch`, for a caller already inside a transaction; `tracked` records the rows as a bulk load's. */
  private insertRows(rows: readonly EventRow[], origin: Origin, tracked = false): InsertCounts {
    let inserted = 0;
    const ordered = rows.toSorted((a, b) => a.ts - b.ts);
    const keys = this.batchKeys(ordered);
    // A sync or small import while a bulk load elsewhere has the unique index aside: nothing
    // stops a duplicate here, and the load's repair would remove it after this report had counted
    // it as new. A repeated event has its date, so its cached copy lies in the same millisecond's
    // keys: one short rowid range. (A copy under another date or a spilled key is still removed
    // by the repair; only this report would miss it.)
    const checkIds = !tracked && !this.indexExists(UNIQUE_INDEX);
    // One row per statement everywhere in this transaction: a statement that could fail halfway
    // (a multi-row INSERT) opens a savepoint, and FTS5 writes its pending terms out as a new
    // segment at every savepoint (64-row raw inserts made ~80 segments of each batch).
    for (const r of ordered) {
      const base = checkIds ? keyBase(r.ts) : null;
      if (base !== null && this.idInMillisecond.get(base, base + KEY_SLOTS, r.eventId)) continue;
      const key = keys.next(r.ts);
      const info = this.insertEvent.run(
        key,
        r.eventId,
        r.ts,
        r.eventType,
        r.memberEmail,
        r.memberId,
        r.memberType,
        r.verb,
        r.status,
        r.category,
        r.groupId,
        r.folderRef,
        r.projectRef,
        r.requestId,
        r.correlationId,
        r.resourceId,
        origin,
      );
      if (info.changes === 1) {
        inserted++;
        keys.used(key);
        this.insertRaw.run(key, r.raw);
        this.insertText.run(key, r.text);
        if (tracked) this.trackBulkRow.run(key, process.pid);
      }
    }
    return { inserted, duplicates: rows.length - inserted };
  }

  /**
   * Keys for one batch sorted by date, picked in JS: the keys already taken in the batch's date
   * span are read once (one range scan) instead of one seek per row. A span holding many cached
   * rows (an import over dates already cached) is looked up per millisecond instead.
   */
  private batchKeys(ordered: readonly EventRow[]): BatchKeys {
    const lastN = new Map<number, number>();
    let complete = false;
    const lo = ordered.length ? keyBase(ordered[0].ts) : null;
    const hiBase = ordered.length ? keyBase(ordered[ordered.length - 1].ts) : null;
    if (lo !== null && hiBase !== null) {
      const limit = ordered.length * 4 + 64;
      const taken = this.keysIn.all(lo, hiBase + KEY_SLOTS, limit) as number[];
      if (taken.length < limit) {
        complete = true;
        for (const k of taken) noteKey(lastN, k);
      }
    }
    const alloc = this.keys;
    const lookup = this.lastKeyIn;
    return {
      next(ts: number): number {
        const base = keyBase(ts);
        if (base !== null) {
          let n = lastN.get(ts);
          if (n === undefined) {
            if (complete && base >= lo! && base <= hiBase!) n = -1;
            else {
              const k = lookup.get(base, base + KEY_SLOTS) as number | null;
              n = k === null ? -1 : k - base;
              lastN.set(ts, n);
            }
          }
          if (n < KEY_SLOTS - 1) return base + n + 1;
        }
        // Out of the keyed range or a full millisecond: the allocator's spill rule (flagged).
        return alloc.next(ts);
      },
      used(key: number): void {
        noteKey(lastN, key);
      },
    };
  }

  /**
   * The unique index following a bulk load's dates (openStage's uniqueByOverlap): aside for a batch
   * whose dates the cache holds few events in (a month not imported yet), live for one whose dates
   * it holds many in (a re-import, overlapping exports). Exports are in date order, so an overlap
   * is one stretch of the file; each return to live builds the index over the whole cache, so
   * after MAX_UNIQUE_RESTORES it stays live. Keys must follow dates: a date span is then a key
   * range. Called before each batch is copied, inside its transaction.
   */
  private uniqueFollowingDates(): (
    n: number,
    loBase: number | null,
    hiBase: number | null,
    live: boolean,
  ) => { removed: number; uniqueLive: boolean } {
    const loadedIn = this.db.prepare('SELECT count(*) FROM main.bulk_rows WHERE seq >= ? AND seq < ?').pluck();
    const rowsIn = this.db
      .prepare('SELECT count(*) FROM (SELECT 1 FROM main.events WHERE seq >= ? AND seq < ? LIMIT ?)')
      .pluck();
    /**
     * Whether the cache held, before this load, at least OVERLAP_SHARE as many events in the
     * batch's dates as the batch has rows. This load's rows are known by bulk_rows, so those it wrote
     * while the index was live count as cached; in a file in date order a batch's dates do not reach
     * an earlier batch's.
     */
    const overlaps = (n: number, loBase: number | null, hiBase: number | null): boolean => {
      // A date out of the keyed range has no key range to count in: as if it overlapped (live).
      if (loBase === null || hiBase === null) return true;
      const enough = Math.ceil(n * OVERLAP_SHARE);
      const loaded = loadedIn.get(loBase, hiBase + KEY_SLOTS) as number;
      return (rowsIn.get(loBase, hiBase + KEY_SLOTS, loaded + enough) as number) - loaded >= enough;
    };
    let restores = 0;
    return (n, loBase, hiBase, live) => {
      if (restores >= MAX_UNIQUE_RESTORES) return { removed: 0, uniqueLive: live };
      const overlap = overlaps(n, loBase, hiBase);
      if (live && !overlap) return { removed: 0, uniqueLive: !this.setUniqueAside() };
      if (!live && overlap) {
        restores++;
        const removed = this.restoreUnique();
        return { removed, uniqueLive: this.indexExists(UNIQUE_INDEX) };
      }
      return { removed: 0, uniqueLive: live };
    };
  }

  /**
   * A staged or bulk load's stage: a scratch SQLite file beside the cache, which the reading side
   * (stage.ts, on a worker thread) fills with the file's checked rows while this connection copies
   * them into the cache with INSERT ... SELECT, batch by batch, so no row value is bound from JS
   * here. The stage needs no journal or sync: losing it loses nothing the cache held, and the
   * cache itself is only ever written in committed batches. `uniqueByOverlap` (a bulk load into a
   * cache whose keys follow dates, import.ts) lets the unique index follow the file's dates.
   */
  openStage(opts: { uniqueByOverlap?: boolean } = {}): StagedRows {
    const path = `${this.db.name}-stage-${process.pid}-${Date.now()}`;
    this.db.prepare('ATTACH DATABASE ? AS stage').run(path);
    this.db.pragma('stage.page_size = 16384');
    // WAL: the writing connection commits batches while this one reads earlier ones.
    this.db.pragma('stage.journal_mode = WAL');
    this.db.pragma('stage.synchronous = OFF');
    this.db.exec(stageTableSql('stage'));
    this.db.exec('CREATE TEMP TABLE IF NOT EXISTS staged_batch (id INTEGER PRIMARY KEY, ts)');
    // The batch again, in key order (pos), keys picked: the copies walk it as stored. Ordered by
    // seq from staged_batch instead, SQLite sorted every copied row, events as received included,
    // which spilled to disk each batch (a third of the copy's time).
    this.db.exec('CREATE TEMP TABLE IF NOT EXISTS keyed_batch (pos INTEGER PRIMARY KEY, id INTEGER, ts, seq INTEGER)');
    const db = this.db;
    const fillRange = db.prepare(
      'INSERT INTO temp.staged_batch (id, ts) SELECT id, ts FROM stage.rows WHERE id >= ? AND id < ?',
    );
    const fillPage = db.prepare(
      'INSERT INTO temp.staged_batch (id, ts) SELECT id, ts FROM stage.rows WHERE id >= ? AND (ts, id) > (?, ?) ORDER BY ts, id LIMIT ?',
    );
    const span = db.prepare('SELECT count(*) AS n, min(ts) AS lo, max(ts) AS hi FROM temp.staged_batch');
    const last = db.prepare('SELECT ts, id FROM temp.staged_batch ORDER BY ts DESC, id DESC LIMIT 1');
    const taken = db.prepare('SELECT 1 FROM main.events WHERE seq >= ? AND seq < ? LIMIT 1');
    // The key rule of keys.ts in SQL: a row's place among the batch's rows of its millisecond
    // (they take ids in file order), after the last key the cache already holds in it (looked up
    // only when the batch's dates reach keys already taken). A duplicate removed at the end leaves
    // a gap in its millisecond's places; the order is unchanged.
    const keys = (prev: string) =>
      db.prepare(`INSERT INTO temp.keyed_batch (id, ts, seq)
      SELECT s.id, s.ts, CAST(s.ts AS INTEGER) * ${KEY_SLOTS} + row_number() OVER (PARTITION BY s.ts ORDER BY s.id) - 1 ${prev} AS seq
      FROM temp.staged_batch AS s ORDER BY seq, s.id`);
    const keysFresh = keys('');
    const keysAfterTaken = keys(`+ coalesce((SELECT max(e.seq) FROM main.events AS e
        WHERE e.seq >= CAST(s.ts AS INTEGER) * ${KEY_SLOTS} AND e.seq < CAST(s.ts AS INTEGER) * ${KEY_SLOTS} + ${KEY_SLOTS}) - CAST(s.ts AS INTEGER) * ${KEY_SLOTS} + 1, 0)`);
    const offRule = db.prepare(
      `SELECT 1 FROM temp.keyed_batch WHERE seq IS NULL OR ts <> CAST(ts AS INTEGER) OR seq - CAST(ts AS INTEGER) * ${KEY_SLOTS} >= ${KEY_SLOTS} LIMIT 1`,
    );
    const stagedRows = db.prepare(
      `SELECT r.* FROM temp.staged_batch AS b JOIN stage.rows AS r ON r.id = b.id ORDER BY b.id`,
    );
    // With the unique index set aside, every row goes in, recorded in bulk_rows, and
    // restoreIndexes removes the duplicates at the end. With it live, a duplicate is skipped at
    // once, which costs index updates at random but never inserts what is removed later. Keys are
    // free by construction, so a key clash is a fault, and it rolls the batch back.
    const copying = (live: boolean) => {
      // The rows just written: with duplicates skipped, those whose key now holds their event_id.
      const written = live ? 'JOIN main.events AS e ON e.seq = b.seq WHERE e.event_id = r.eventId' : '';
      const copyRows = (target: string, column: string) =>
        db.prepare(`INSERT INTO ${target} SELECT b.seq, r.${column}
        FROM temp.keyed_batch AS b JOIN stage.rows AS r ON r.id = b.id ${written} ORDER BY b.pos`);
      return {
        events: db.prepare(`INSERT INTO main.events
            (seq, event_id, ts, event_type, member_email, member_id, member_type, verb, status, category, group_id, folder_ref, project_ref, request_id, correlation_id, resource_id, origin)
          SELECT b.seq, r.eventId, r.ts, r.eventType, r.memberEmail, r.memberId, r.memberType, r.verb, r.status, r.category, r.groupId, r.folderRef, r.projectRef, r.requestId, r.correlationId, r.resourceId, ?
          FROM temp.keyed_batch AS b JOIN stage.rows AS r ON r.id = b.id WHERE true ORDER BY b.pos ${live ? 'ON CONFLICT (event_id) DO NOTHING' : ''}`),
        raw: copyRows('main.events_raw (seq, raw)', 'raw'),
        // One statement per batch: FTS5 writes its pending terms as a segment at each statement's savepoint.
        text: copyRows('main.events_fts (rowid, body)', 'text'),
      };
    };
    // Prepared when first needed: the ON CONFLICT clause does not compile without the unique index.
    const modes: Partial<Record<'live' | 'aside', ReturnType<typeof copying>>> = {};
    let uniqueLive = this.indexExists(UNIQUE_INDEX);
    const followDates = opts.uniqueByOverlap ? this.uniqueFollowingDates() : null;
    const track = db.prepare('INSERT INTO main.bulk_rows (seq, owner) SELECT seq, ? FROM temp.keyed_batch');
    const clear = [db.prepare('DELETE FROM temp.staged_batch'), db.prepare('DELETE FROM temp.keyed_batch')];
    const copy = (fill: () => void, origin: Origin): { counts: InsertCounts; last: [number, number] | null } =>
      this.writeTx(() => {
        fill();
        try {
          const { n, lo, hi } = span.get() as { n: number; lo: number | null; hi: number | null };
          if (!n) return { counts: { inserted: 0, duplicates: 0 }, last: null };
          const end = last.raw().get() as [number, number];
          const loBase = keyBase(lo!);
          const hiBase = keyBase(hi!);
          // Rows of this load removed as duplicates when the unique index is built again here.
          let removed = 0;
          if (followDates) ({ removed, uniqueLive } = followDates(n, loBase, hiBase, uniqueLive));
          let keyed = loBase !== null && hiBase !== null;
          if (keyed) {
            (taken.get(loBase, hiBase! + KEY_SLOTS) ? keysAfterTaken : keysFresh).run();
            keyed = !offRule.get();
          }
          let counts: InsertCounts;
          // A full millisecond or a date out of the keyed range: this batch takes the row-by-row path and its spill rule.
          if (!keyed) counts = this.insertRows(stagedRows.all() as EventRow[], origin, !uniqueLive);
          else {
            const statements = uniqueLive ? (modes.live ??= copying(true)) : (modes.aside ??= copying(false));
            const inserted = statements.events.run(origin).changes;
            statements.raw.run();
            statements.text.run();
            if (!uniqueLive) track.run(process.pid);
            counts = { inserted, duplicates: n - inserted };
          }
          return {
            counts: { inserted: counts.inserted - removed, duplicates: counts.duplicates + removed },
            last: end,
          };
        } finally {
          for (const c of clear) c.run();
        }
      });
    return {
      path,
      copy: (lo, hi, origin) => copy(() => fillRange.run(lo, hi), origin).counts,
      merge: (from, origin, batchSize) => {
        db.exec('CREATE INDEX IF NOT EXISTS stage.rows_ts ON rows (ts, id)');
        let after: [number, number] = [-Number.MAX_VALUE, 0];
        return () => {
          const { counts, last: end } = copy(() => fillPage.run(from, ...after, batchSize), origin);
          if (!end) return null;
          after = end;
          return counts;
        };
      },
      close: () => {
        try {
          db.exec('DETACH DATABASE stage');
        } finally {
          for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
        }
      },
    };
  }

  /** Scratch files of stages whose process is gone (a crash mid-import). */
  private removeDeadStages(): void {
    if (this.db.name === ':memory:' || !this.db.name) return;
    const prefix = `${basename(this.db.name)}-stage-`;
    for (const f of readdirSync(dirname(this.db.name))) {
      if (!f.startsWith(prefix)) continue;
      const pid = Number(f.slice(prefix.length).split('-')[0]);
      if (isAlive(pid)) continue;
      rmSync(join(dirname(this.db.name), f), { force: true });
    }
  }

  /**
   * The cache's event count and date span, counted again only when the file changed since: by this
   * connection (total_changes) or another (data_version), so a window asking every few seconds
   * costs two pragmas while nothing changes. `unlessLoading`: while this process imports, or only
   * another process changed the cache and is still importing (elsewhere().importing), the last
   * count stands: during a bulk load, with the indexes set aside, counting scans the whole table
   * (0.1-1 s at 650,000 events). The import's end counts again.
   */
  counts(o: { unlessLoading?: boolean } = {}): CacheCounts {
    const mine = this.ownChanges.get() as number;
    const theirs = this.dataVersion.get() as number;
    const last = this.lastCounts;
    if (last && last.mine === mine && last.theirs === theirs) return last.counts;
    if (last && o.unlessLoading && (this.importsHere > 0 || (last.mine === mine && this.elsewhere().importing)))
      return last.counts;
    const r = this.countAll.get() as { n: number; lo: number | null; hi: number | null };
    const counts = { events: r.n, oldest: r.lo, newest: r.hi };
    this.lastCounts = { mine, theirs, counts };
    return counts;
  }

  /**
   * Records this process as importing into the cache or syncing it, for other processes' status;
   * returns the end of it. Records of processes gone (a crash) are removed on the way. Never fails
   * the task it tells of: a write refused here (a full disk) is the task's own to meet and report.
   */
  beginActivity(kind: 'import' | 'sync'): () => void {
    const key = `${ACTIVITY}${kind}_${process.pid}`;
    const write = (f: () => void) => {
      try {
        f();
      } catch {
        // Only a note for other processes: the task goes on without it.
      }
    };
    write(() =>
      this.writeTx(() => {
        for (const k of this.activityKeys())
          if (!isAlive(pidOf(k))) this.db.prepare('DELETE FROM audit_meta WHERE key = ?').run(k);
        this.db.prepare('INSERT OR REPLACE INTO audit_meta (key, value) VALUES (?, ?)').run(key, Date.now());
      }),
    );
    if (kind === 'import') this.importsHere++;
    return () => {
      if (kind === 'import') this.importsHere--;
      write(() => this.db.prepare('DELETE FROM audit_meta WHERE key = ?').run(key));
    };
  }

  private activityKeys(): string[] {
    return this.db.prepare("SELECT key FROM audit_meta WHERE key GLOB 'activity_*'").pluck().all() as string[];
  }

  /**
   * Whether another live process is importing into the cache or syncing it. A staged or bulk load
   * recorded by a build from before the activity records counts as an import too.
   */
  elsewhere(): Elsewhere {
    const others = this.activityKeys().filter((k) => pidOf(k) !== process.pid && isAlive(pidOf(k)));
    return {
      importing: others.some((k) => k.startsWith(`${ACTIVITY}import_`)) || this.otherLoadAlive(),
      syncing: others.some((k) => k.startsWith(`${ACTIVITY}sync_`)),
    };
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

export interface StagedRows {
  /** The stage file, for the connection that writes it (stage.ts). */
  readonly path: string;
  /** Copies the staged rows lo <= id < hi (consecutive staged batches) into the cache as one committed batch. */
  copy(lo: number, hi: number, origin: Origin): InsertCounts;
  /**
   * Moves the staged rows from id `from` on into the cache in date order: each call of the
   * function returned commits the next batch (null when none is left), so a caller can wait for the
   * lock between batches. A call that failed wrote nothing, and the next one retries its batch.
   */
  merge(from: number, origin: Origin, batchSize: number): () => InsertCounts | null;
  /** Detaches and deletes the stage file. */
  close(): void;
}

interface BatchKeys {
  /** The next free key for an event of `ts` (no row is written). */
  next(ts: number): number;
  /** Records that `key` was written. */
  used(key: number): void;
}

/** Remembers the highest place taken in the key's millisecond (keys within the keyed range only). */
function noteKey(lastN: Map<number, number>, key: number): void {
  const ts = Math.floor(key / KEY_SLOTS);
  if (keyBase(ts) === null) return;
  const n = key - ts * KEY_SLOTS;
  const prev = lastN.get(ts);
  if (prev === undefined || n > prev) lastN.set(ts, n);
}

/** The pid at the end of a bulk-owner or activity record's key. */
const pidOf = (key: string) => Number(key.slice(key.lastIndexOf('_') + 1));

function isAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
