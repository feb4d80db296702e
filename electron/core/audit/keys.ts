import type { Statement } from 'better-sqlite3';
import type { Db } from '../db/open.ts';

/**
 * Row keys follow the event date, `seq = ts * KEY_SLOTS + n`, so the FTS index (rowid = seq) lists
 * matches in date order and a page stops at its LIMIT. A full millisecond or a date outside 1691-2248
 * takes a free key elsewhere ("spilled", recorded), and queries then sort by (ts, seq).
 */
export const KEY_SLOTS = 1024;
export const MAX_KEY = Number.MAX_SAFE_INTEGER;
const MAX_KEY_TS = Math.floor(MAX_KEY / KEY_SLOTS) - 1;

/** The first key of millisecond `ts`, or null when the date is out of the keyed range. */
export function keyBase(ts: number): number | null {
  return Number.isSafeInteger(ts) && ts <= MAX_KEY_TS && ts >= -MAX_KEY_TS ? ts * KEY_SLOTS : null;
}

/** The lowest key of events at or after `ts` (clamped to the key range), for rowid bounds. */
export function keyBound(ts: number): number {
  if (ts >= MAX_KEY_TS) return MAX_KEY;
  if (ts <= -MAX_KEY_TS) return -MAX_KEY;
  return Math.floor(ts) * KEY_SLOTS;
}

/** Set in audit_meta when some row's key does not follow its date. */
export const SPILL_FLAG = 'keys_spilled';

/**
 * Picks the key of a new row of `table` (events, or the table a migration fills). Must run inside
 * the transaction that inserts the row, so the next call sees it.
 */
export class KeyAllocator {
  private readonly lastIn: Statement;
  private readonly maxAll: Statement;
  private readonly minAll: Statement;
  private readonly flag: Statement;

  constructor(db: Db, table: string) {
    this.lastIn = db.prepare(`SELECT max(seq) AS k FROM ${table} WHERE seq >= ? AND seq < ?`);
    this.maxAll = db.prepare(`SELECT max(seq) AS k FROM ${table}`);
    this.minAll = db.prepare(`SELECT min(seq) AS k FROM ${table}`);
    this.flag = db.prepare('INSERT OR REPLACE INTO audit_meta (key, value) VALUES (?, 1)');
  }

  next(ts: number): number {
    const base = keyBase(ts);
    if (base !== null) {
      const last = (this.lastIn.get(base, base + KEY_SLOTS) as { k: number | null }).k;
      if (last === null) return base;
      if (last < base + KEY_SLOTS - 1) return last + 1;
    }
    // Out of the keyed range or a full millisecond: any free key, and queries stop trusting seq order.
    this.flag.run(SPILL_FLAG);
    const max = (this.maxAll.get() as { k: number | null }).k ?? 0;
    if (max < MAX_KEY) return max + 1;
    const min = (this.minAll.get() as { k: number | null }).k ?? 0;
    if (min > -MAX_KEY) return min - 1;
    throw new Error('no free row key left in the audit cache');
  }
}

/** SQL: whether some row's key does not follow its date. */
export const KEYS_SPILLED = `EXISTS (SELECT 1 FROM audit_meta WHERE key = '${SPILL_FLAG}' AND value = 1)`;

/** True when every row's key follows its date (no spill recorded). */
export function keysFollowDates(db: Db): boolean {
  return !db.prepare(`SELECT ${KEYS_SPILLED}`).pluck().get();
}
