import type { Statement } from 'better-sqlite3';
import type { Db } from '../../db/open.ts';
import { ndjsonLine, servedEvent } from '../export.ts';
import { ROW_COLUMNS, type DbRow } from '../query.ts';
import type { Place } from './watermarks.ts';

/** One cached event as a sink receives it: its exported JSON text (one line, no newline). */
export interface OutEvent {
  seq: number;
  eventId: string;
  ts: number;
  json: string;
}

const RAW = '(SELECT r.raw FROM events_raw AS r WHERE r.seq = events.seq) AS raw';

/** The archive's order: date, then event_id as SQLite compares it (UTF-8 bytes, so code points). */
export function comparePlaces(a: Place, b: Place): number {
  if (a.ts !== b.ts) return a.ts - b.ts;
  if (a.eventId === b.eventId) return 0;
  return Buffer.compare(Buffer.from(a.eventId), Buffer.from(b.eventId));
}

const toOut = (r: DbRow & { raw: string }): OutEvent => ({
  seq: r.seq,
  eventId: r.event_id,
  ts: r.ts,
  json: ndjsonLine(servedEvent(r).raw).slice(0, -1),
});

/**
 * Reads events from the archive for a sink: those after its watermark in (ts, event_id) order, and
 * those cached later behind it (forward_behind). Walks the ts index only: a chunk takes every event
 * of its last millisecond, so any cut of it in order is a valid watermark.
 */
export class ArchiveReader {
  private readonly sameMs: Statement;
  private readonly laterMs: Statement;
  private readonly allOfMs: Statement;
  private readonly behind: Statement;
  private readonly countAfter: Statement;
  private readonly countAll: Statement;
  private readonly countBehind: Statement;

  constructor(db: Db) {
    this.sameMs = db.prepare(`SELECT ${ROW_COLUMNS}, ${RAW} FROM events WHERE ts = ? AND event_id > ?`);
    this.laterMs = db.prepare(`SELECT ts FROM events WHERE ts > ? ORDER BY ts LIMIT 1 OFFSET ?`).pluck();
    this.allOfMs = db.prepare(`SELECT ${ROW_COLUMNS}, ${RAW} FROM events WHERE ts > ? AND ts <= ? ORDER BY ts`);
    this.behind = db.prepare(
      `SELECT ${ROW_COLUMNS}, ${RAW} FROM events WHERE seq IN (SELECT b.seq FROM forward_behind AS b JOIN events AS e ON e.seq = b.seq WHERE b.sink_id = ? ORDER BY b.seq LIMIT ?)`,
    );
    this.countAfter = db.prepare(
      'SELECT (SELECT count(*) FROM events WHERE ts > ?) + (SELECT count(*) FROM events WHERE ts = ? AND event_id > ?)',
    );
    this.countAll = db.prepare('SELECT count(*) FROM events').pluck();
    this.countBehind = db.prepare(
      'SELECT count(*) FROM forward_behind AS b JOIN events AS e ON e.seq = b.seq WHERE b.sink_id = ?',
    );
    this.countAfter.pluck();
    this.countBehind.pluck();
  }

  /** About `limit` events after `after` (all of the last millisecond), in order. */
  after(after: Place | null, limit: number): OutEvent[] {
    const from = after?.ts ?? -Number.MAX_VALUE;
    const rows: (DbRow & { raw: string })[] = after
      ? (this.sameMs.all(after.ts, after.eventId) as (DbRow & { raw: string })[])
      : [];
    const lastTs = this.laterMs.get(from, Math.max(0, limit - rows.length - 1)) as number | undefined;
    const through = lastTs ?? Number.MAX_VALUE;
    rows.push(...(this.allOfMs.all(from, through) as (DbRow & { raw: string })[]));
    return rows
      .map(toOut)
      .sort((a, b) => comparePlaces({ ts: a.ts, eventId: a.eventId }, { ts: b.ts, eventId: b.eventId }));
  }

  /** Events cached behind the sink's watermark after it passed their place. */
  behindOf(sinkId: string, limit: number): OutEvent[] {
    return (this.behind.all(sinkId, limit) as (DbRow & { raw: string })[]).map(toOut);
  }

  /** How many events the sink has still to receive. */
  pending(sinkId: string, after: Place | null): number {
    const ahead = after
      ? (this.countAfter.get(after.ts, after.ts, after.eventId) as number)
      : (this.countAll.get() as number);
    return ahead + (this.countBehind.get(sinkId) as number);
  }
}
