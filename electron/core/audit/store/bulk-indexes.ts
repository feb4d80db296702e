import type { Db } from '../../db/open.ts';
import { KEY_SLOTS } from '../keys.ts';
import type { WriteTx } from './types.ts';
import type { ProcessRecords } from './records.ts';

/** The index that keeps event_id unique (migration 6): set aside during a bulk load like the others. */
export const UNIQUE_INDEX = 'events_event_id';
/** A bulk batch is taken to repeat cached events when the cache held at least this share of its row count in its dates. */
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
export const CACHE_KIB = 65536;
const BULK_CACHE_KIB = 16384;
/**
 * An index build's sort: in this thread, in runs of SQLite's smallest (250 pages of 16 KB). Against
 * a helper thread and 16 MB runs, building 1M events' indexes took 3.9 CPU-s instead of 7.4, and
 * less wall time at load 25 (bench/history/audit-import.md).
 */
const BUILD_CACHE_KIB = 4096;

interface DeferredIndex {
  name: string;
  sql: string;
}

/** Decides before each bulk batch whether the unique index is live for it (BulkIndexes.uniqueFollowingDates). */
export type FollowDates = (
  rows: number,
  loBase: number | null,
  hiBase: number | null,
  live: boolean,
) => { removed: number; uniqueLive: boolean };

/**
 * The events table's secondary indexes as a bulk load sets them aside (kept in deferred_indexes)
 * and builds them again at its end, or the next open repairs a load that crashed. Never while
 * another live process loads through a stage: the last load to finish builds them.
 */
export class BulkIndexes {
  private readonly db: Db;
  private readonly writeTx: WriteTx;
  private readonly records: ProcessRecords;
  private readonly indexNamed;

  constructor(db: Db, writeTx: WriteTx, records: ProcessRecords) {
    this.db = db;
    this.writeTx = writeTx;
    this.records = records;
    // Asked before every batch a sync or small import writes: prepared once.
    this.indexNamed = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?").pluck();
  }

  /**
   * Drops the secondary indexes, keeping their definitions, and records this process as a bulk
   * loader so another process opening the file leaves them alone. `keepUnique` leaves the
   * event_id index live (import/staged.ts says when).
   */
  deferIndexes(opts: { keepUnique?: boolean } = {}): void {
    this.writeTx(() => {
      // A load already running chose whether the unique index stays; its statements depend on it.
      const keepUnique = opts.keepUnique || this.records.otherLoadAlive();
      this.records.registerLoad();
      const list = this.db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' AND sql IS NOT NULL")
        .pluck()
        .all() as string[];
      for (const name of list.filter((n) => !(keepUnique && n === UNIQUE_INDEX))) this.setIndexAside(name);
    });
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

  /** Sets the unique index aside mid-load, unless another bulk load relies on it live; returns whether it is aside now. */
  private setUniqueAside(): boolean {
    return this.writeTx(() => {
      if (this.records.otherLoadAlive()) return !this.indexExists(UNIQUE_INDEX);
      this.setIndexAside(UNIQUE_INDEX);
      return true;
    });
  }

  /**
   * Builds the unique index again mid-load once the load reaches events the cache held, so each
   * duplicate is skipped at once; not while another bulk load counts on it staying aside. Returns
   * how many of this process's rows were removed as duplicates.
   */
  private restoreUnique(): number {
    if (this.records.otherLoadAlive()) return 0;
    const ix = this.db.prepare('SELECT name, sql FROM deferred_indexes WHERE name = ?').get(UNIQUE_INDEX) as
      DeferredIndex | undefined;
    return ix ? this.buildDeferred(ix) : 0;
  }

  /** Whether indexes set aside by a bulk load are still to be built. */
  pending(): boolean {
    return (this.db.prepare('SELECT count(*) FROM deferred_indexes').pluck().get() as number) > 0;
  }

  indexExists(name: string): boolean {
    return !!this.indexNamed.get(name);
  }

  /**
   * Builds one set-aside index; for the unique one, in one transaction with the removal of the
   * duplicates a load let in, so no writer adds one in between. Returns this process's rows removed.
   */
  private buildDeferred(ix: DeferredIndex): number {
    return this.writeTx(() => {
      let removed = 0;
      if (!this.indexExists(ix.name))
        removed = this.sortingToBuild(() => {
          if (ix.name === UNIQUE_INDEX) return this.buildUnique(ix.sql);
          this.db.exec(ix.sql);
          return 0;
        });
      this.db.prepare('DELETE FROM deferred_indexes WHERE name = ?').run(ix.name);
      return removed;
    });
  }

  /** Runs `build` with the sort settings of an index build (BUILD_CACHE_KIB), the connection's own back afterwards. */
  private sortingToBuild<T>(build: () => T): T {
    const threads = this.db.pragma('threads', { simple: true }) as number;
    const cache = this.db.pragma('cache_size', { simple: true }) as number;
    this.db.pragma('threads = 0');
    this.db.pragma(`cache_size = -${BUILD_CACHE_KIB}`);
    try {
      return build();
    } finally {
      this.db.pragma(`threads = ${threads}`);
      this.db.pragma(`cache_size = ${cache}`);
    }
  }

  /**
   * One FTS5 segment per bulk batch (a 16 MB hashsize holds 5,000 events), and no merging as they
   * come, which rewrote the index once per level (~5 s of a 1M-event load, bench/history/audit-import.md):
   * restoreIndexes merges them all in one pass at the end.
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

  /** Builds every deferred index again (a load's end, or the repair of a crashed one); returns this process's duplicates removed. */
  restoreIndexes(): number {
    let removed = 0;
    for (let step = this.nextRestore(); step; step = this.nextRestore()) removed += step();
    return removed;
  }

  /**
   * restoreIndexes one write at a time, so a caller can wait for the lock between them: the next
   * write (returning the rows it removed), or null when done. Decided by reading only, and again
   * under the lock, since another process may have started a load since.
   */
  nextRestore(): (() => number) | null {
    const owners = this.records.loadOwners();
    const forgetMine = () => {
      this.records.forgetMyLoad();
      return 0;
    };
    if (this.records.otherLoadAlive(owners)) return owners.includes(process.pid) ? forgetMine : null;
    // Each write below does nothing when another load started since: the next call then only forgets this one.
    const unlessLoading = (write: () => number) => () =>
      this.writeTx(() => (this.records.otherLoadAlive() ? 0 : write()));
    if (owners.length && this.ftsInBulkMode()) {
      // The last load to finish merges the segments the bulk loads left, in one pass, and puts back the everyday settings.
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
      .get(UNIQUE_INDEX) as DeferredIndex | undefined;
    if (ix) return unlessLoading(() => this.buildDeferred(ix));
    // Only now: while the indexes were being built, a process opening the file had to leave them alone.
    if (owners.length) {
      return unlessLoading(() => {
        this.records.forgetAllLoads();
        return 0;
      });
    }
    return null;
  }

  /**
   * Builds the unique index first: a new export (the usual case) let in no duplicate, so the build
   * is the check and the duplicate search is skipped (~1 s of a 1M-event load). A build that meets
   * a duplicate fails as a statement only; the duplicates are removed and it is built again.
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
   * Of the rows sharing an event_id, keeps the one not from a bulk load (a cache never loses or
   * changes what it held), else the lowest key (earliest date, then first read). One sort of the
   * event ids finds them. Returns how many of this process's rows went.
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
   * The unique index following a bulk load's dates: aside for a batch whose dates the cache holds
   * few events in, live where it holds many (a re-import). Each return to live sorts every cached
   * id, so after MAX_UNIQUE_RESTORES it stays live. Called inside each batch's transaction.
   */
  uniqueFollowingDates(): FollowDates {
    const loadedIn = this.db.prepare('SELECT count(*) FROM main.bulk_rows WHERE seq >= ? AND seq < ?').pluck();
    const rowsIn = this.db
      .prepare('SELECT count(*) FROM (SELECT 1 FROM main.events WHERE seq >= ? AND seq < ? LIMIT ?)')
      .pluck();
    // This load's own rows (bulk_rows) count as not cached; a file in date order keeps each batch's dates apart.
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
}
