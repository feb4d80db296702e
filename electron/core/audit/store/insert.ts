import type { Statement } from 'better-sqlite3';
import type { Db } from '../../db/open.ts';
import type { EventRow } from '../event.ts';
import { KEY_SLOTS, KeyAllocator, keyBase } from '../keys.ts';
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

/** Writes events row by row into events, events_raw and the full-text index, inside a caller's transaction. */
export class RowInserter {
  private readonly indexes: BulkIndexes;
  private readonly insertEvent: Statement;
  private readonly insertRaw: Statement;
  private readonly insertText: Statement;
  private readonly trackBulkRow: Statement;
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
    this.trackBulkRow = db.prepare('INSERT INTO bulk_rows (seq, owner) VALUES (?, ?)');
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
    let inserted = 0;
    const ordered = rows.toSorted((a, b) => a.ts - b.ts);
    const keys = this.batchKeys(ordered);
    // With the unique index aside (a bulk load elsewhere), a repeat is looked for in its millisecond's
    // keys, or the load's repair would remove it after this report counted it new.
    const checkIds = !tracked && !this.indexes.indexExists(UNIQUE_INDEX);
    // One row per statement: FTS5 writes its pending terms out as a segment at every statement savepoint.
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
        // A row read back from a stage carries its names as JSON text, copied by the stage's own statement.
        if (Array.isArray(r.names)) this.names.record(r.names);
        if (tracked) this.trackBulkRow.run(key, process.pid);
      }
    }
    return { inserted, duplicates: rows.length - inserted };
  }

  /**
   * Keys for one date-sorted batch, picked in JS from the keys already taken in its span (one range
   * scan instead of a seek per row); a span holding many cached rows is looked up per millisecond.
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
}
