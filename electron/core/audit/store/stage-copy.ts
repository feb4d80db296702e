import { readdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Db } from '../../db/open.ts';
import type { EventRow } from '../event.ts';
import { KEY_SLOTS, keyBase } from '../keys.ts';
import { stageTableSql } from '../stage.ts';
import type { InsertCounts, Origin, WriteTx } from './types.ts';
import { UNIQUE_INDEX, type BulkIndexes } from './bulk-indexes.ts';
import type { RowInserter } from './insert.ts';
import { isAlive } from './records.ts';

export interface StagedRows {
  /** The stage file, for the connection that writes it (stage.ts). */
  readonly path: string;
  /** Copies the staged rows lo <= id < hi (consecutive staged batches) into the cache as one committed batch. */
  copy(lo: number, hi: number, origin: Origin): InsertCounts;
  /**
   * Moves the staged rows from id `from` on into the cache in date order: each call of the returned
   * function commits the next batch (null when none is left). A failed call wrote nothing; the next retries it.
   */
  merge(from: number, origin: Origin, batchSize: number): () => InsertCounts | null;
  /** Detaches and deletes the stage file. */
  close(): void;
}

interface CopyParts {
  db: Db;
  writeTx: WriteTx;
  inserter: RowInserter;
  indexes: BulkIndexes;
}

/**
 * Attaches a staged or bulk load's stage, a scratch file the reading side (stage.ts) fills, and
 * copies its rows in with INSERT ... SELECT, batch by batch. The stage needs no journal: losing it
 * loses nothing cached. `uniqueByOverlap` lets the unique index follow the file's dates.
 */
export function openStage(
  { db, writeTx, inserter, indexes }: CopyParts,
  opts: { uniqueByOverlap?: boolean },
): StagedRows {
  const path = `${db.name}-stage-${process.pid}-${Date.now()}`;
  db.prepare('ATTACH DATABASE ? AS stage').run(path);
  db.pragma('stage.page_size = 16384');
  // WAL: the writing connection commits batches while this one reads earlier ones.
  db.pragma('stage.journal_mode = WAL');
  db.pragma('stage.synchronous = OFF');
  db.exec(stageTableSql('stage'));
  db.exec('CREATE TEMP TABLE IF NOT EXISTS staged_batch (id INTEGER PRIMARY KEY, ts)');
  // The batch again in key order (pos), keys picked: ordered by seq from staged_batch instead, SQLite
  // sorted every copied row, spilling to disk each batch (a third of the copy's time).
  db.exec('CREATE TEMP TABLE IF NOT EXISTS keyed_batch (pos INTEGER PRIMARY KEY, id INTEGER, ts, seq INTEGER)');
  const fillRange = db.prepare(
    'INSERT INTO temp.staged_batch (id, ts) SELECT id, ts FROM stage.rows WHERE id >= ? AND id < ?',
  );
  const fillPage = db.prepare(
    'INSERT INTO temp.staged_batch (id, ts) SELECT id, ts FROM stage.rows WHERE id >= ? AND (ts, id) > (?, ?) ORDER BY ts, id LIMIT ?',
  );
  const span = db.prepare('SELECT count(*) AS n, min(ts) AS lo, max(ts) AS hi FROM temp.staged_batch');
  const last = db.prepare('SELECT ts, id FROM temp.staged_batch ORDER BY ts DESC, id DESC LIMIT 1');
  const taken = db.prepare('SELECT 1 FROM main.events WHERE seq >= ? AND seq < ? LIMIT 1');
  // keys.ts's rule in SQL: a row's place among the batch's rows of its millisecond, after the last
  // key the cache holds in it (looked up only when the batch's dates reach taken keys).
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
  // The load's new names (stage.ts stages each once), copied with each batch up to the last staged:
  // a name ahead of its rows matches nothing until they come.
  const names = db.prepare(
    'INSERT OR IGNORE INTO main.search_names (value) SELECT value FROM stage.names WHERE id > ? AND id <= ? ORDER BY id',
  );
  const lastName = db.prepare('SELECT coalesce(max(id), 0) FROM stage.names').pluck();
  let namesCopied = 0;
  const stagedRows = db.prepare(
    `SELECT r.* FROM temp.staged_batch AS b JOIN stage.rows AS r ON r.id = b.id ORDER BY b.id`,
  );
  // Unique index aside: every row goes in, tracked in bulk_rows, and duplicates go at the end.
  // Live: a duplicate is skipped at once. Keys are free by construction: a clash rolls the batch back.
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
  let uniqueLive = indexes.indexExists(UNIQUE_INDEX);
  const followDates = opts.uniqueByOverlap ? indexes.uniqueFollowingDates() : null;
  const track = db.prepare('INSERT INTO main.bulk_rows (seq, owner) SELECT seq, ? FROM temp.keyed_batch');
  const clear = [db.prepare('DELETE FROM temp.staged_batch'), db.prepare('DELETE FROM temp.keyed_batch')];
  const copy = (fill: () => void, origin: Origin): { counts: InsertCounts; last: [number, number] | null } => {
    let namesUpTo = namesCopied;
    const copied = writeTx(() => {
      fill();
      namesUpTo = lastName.get() as number;
      names.run(namesCopied, namesUpTo);
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
        if (!keyed) counts = inserter.insertRows(stagedRows.all() as EventRow[], origin, !uniqueLive);
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
    namesCopied = namesUpTo;
    return copied;
  };
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

/** Deletes the scratch files of stages whose process is gone (a crash mid-import). */
export function removeDeadStages(db: Db): void {
  if (db.name === ':memory:' || !db.name) return;
  const prefix = `${basename(db.name)}-stage-`;
  for (const f of readdirSync(dirname(db.name))) {
    if (!f.startsWith(prefix)) continue;
    const pid = Number(f.slice(prefix.length).split('-')[0]);
    if (isAlive(pid)) continue;
    rmSync(join(dirname(db.name), f), { force: true });
  }
}
