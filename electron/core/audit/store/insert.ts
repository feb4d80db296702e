import type { Statement } from 'better-sqlite3';
import type { Db } from '../../db/open.ts';
import type { EventRow } from '../event.ts';
import { KEY_SLOTS, KeyAllocator, keyBase } from '../keys.ts';
import { PACKED_COLUMNS, type PackedRows } from '../stage.ts';
import type { InsertCounts, Origin } from './types.ts';
import { NameRecorder } from '../search.ts';
import { UNIQUE_INDEX, type BulkIndexes } from './bulk-indexes.ts';

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

const PACKED_WIDTH = PACKED_COLUMNS.length;

/** Rows as the reading thread packs them (stage.ts): their names each once. */
function packRows(rows: readonly EventRow[]): PackedRows {
  const values: unknown[] = [];
  const names = new Set<string>();
  for (const r of rows) {
    for (const c of PACKED_COLUMNS) values.push(r[c]);
    // A row read back from a stage carries no names: the stage's own statement copies them.
    if (Array.isArray(r.names)) for (const n of r.names) names.add(n);
  }
  return { ts: Float64Array.from(rows, (r) => r.ts), values, names: [...names] };
}

/** Writes events row by row into events, events_raw and the full-text index, inside a caller's transaction. */
export class RowInserter {
  private readonly indexes: BulkIndexes;
  private readonly insertEvent: Statement;
  private readonly insertRaw: Statement;
  private readonly insertText: Statement;
  private readonly trackBulkRows: Statement;
  private readonly idInMillisecond: Statement;
  private readonly keys: KeyAllocator;
  private readonly keysIn: Statement;
  private readonly lastKeyIn: Statement;
  readonly names: NameRecorder;

  constructor(db: Db, indexes: BulkIndexes) {
    this.indexes = indexes;
    this.insertEvent = db.prepare(`INSERT OR IGNORE INTO events
      (seq, event_id, ts, event_type, member_email, member_id, member_type, verb, status, category, group_id, folder_ref, project_ref, request_id, correlation_id, resource_id, origin)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.insertRaw = db.prepare('INSERT INTO events_raw (seq, raw) VALUES (?, ?)');
    this.insertText = db.prepare('INSERT INTO events_fts (rowid, body) VALUES (?, ?)');
    this.trackBulkRows = db.prepare('INSERT INTO bulk_rows (seq, owner) SELECT value, ? FROM json_each(?)');
    this.idInMillisecond = db
      .prepare('SELECT 1 FROM events WHERE seq >= ? AND seq < ? AND event_id = ? LIMIT 1')
      .pluck();
    this.keys = new KeyAllocator(db, 'events');
    this.names = new NameRecorder(db);
    this.keysIn = db.prepare('SELECT seq FROM events WHERE seq >= ? AND seq < ? LIMIT ?').pluck();
    this.lastKeyIn = db.prepare('SELECT max(seq) FROM events WHERE seq >= ? AND seq < ?').pluck();
  }

  /** Inserts `rows` in date order, skipping cached event ids; `tracked` records them as a bulk load's. */
  insertRows(rows: readonly EventRow[], origin: Origin, tracked = false): InsertCounts {
    return this.insertPacked(packRows(rows), origin, tracked);
  }

  /** insertRows for rows packed by the reading thread (stage.ts), each bound from its place in `p.values`. */
  insertPacked(p: PackedRows, origin: Origin, tracked = false): InsertCounts {
    const n = p.ts.length;
    let inserted = 0;
    // Date order, file order within a millisecond (the keys' rule).
    const order = Uint32Array.from({ length: n }, (_, i) => i).sort((a, b) => p.ts[a] - p.ts[b] || a - b);
    const keys = this.batchKeys(n ? p.ts[order[0]] : NaN, n ? p.ts[order[n - 1]] : NaN, n);
    // With the unique index aside (a bulk load elsewhere), a repeat is looked for in its millisecond's
    // keys, or the load's repair would remove it after this report counted it new.
    const checkIds = !tracked && !this.indexes.indexExists(UNIQUE_INDEX);
    const v = p.values;
    const trackedKeys: number[] = [];
    // One row per statement: FTS5 writes its pending terms out as a segment at every statement savepoint.
    for (const i of order) {
      const ts = p.ts[i];
      const o = i * PACKED_WIDTH;
      const base = checkIds ? keyBase(ts) : null;
      if (base !== null && this.idInMillisecond.get(base, base + KEY_SLOTS, v[o])) continue;
      const key = keys.next(ts);
      // PACKED_COLUMNS' order: eventId, then the columns after ts, raw and text last.
      const info = this.insertEvent.run(
        key,
        v[o],
        ts,
        v[o + 1],
        v[o + 2],
        v[o + 3],
        v[o + 4],
        v[o + 5],
        v[o + 6],
        v[o + 7],
        v[o + 8],
        v[o + 9],
        v[o + 10],
        v[o + 11],
        v[o + 12],
        v[o + 13],
        origin,
      );
      if (info.changes === 1) {
        inserted++;
        keys.used(key);
        this.insertRaw.run(key, v[o + 14]);
        this.insertText.run(key, v[o + 15]);
        if (tracked) trackedKeys.push(key);
      }
    }
    // One statement for the batch's bulk rows, not one per row.
    if (trackedKeys.length) this.trackBulkRows.run(process.pid, JSON.stringify(trackedKeys));
    this.names.record(p.names);
    return { inserted, duplicates: n - inserted };
  }

  /**
   * Keys for one batch of `count` rows dated `first` to `last`, picked in JS from the keys already taken in its span (one range
   * scan instead of a seek per row); a span holding many cached rows is looked up per millisecond.
   */
  private batchKeys(first: number, last: number, count: number): BatchKeys {
    const lastN = new Map<number, number>();
    let complete = false;
    const lo = keyBase(first);
    const hiBase = keyBase(last);
    if (lo !== null && hiBase !== null) {
      const limit = count * 4 + 64;
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
}
