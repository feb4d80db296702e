import type { Statement } from 'better-sqlite3';
import type { Db } from '../../db/open.ts';

/** A place in the archive's stable order: (date, event_id). */
export interface Place {
  ts: number;
  eventId: string;
}

export interface SinkState {
  sinkId: string;
  /** The last event delivered in order; null: none yet. */
  watermark: Place | null;
  delivered: number;
  /** Failed attempts in a row. */
  attempts: number;
  failingSince: number | null;
  lastError: string | null;
  lastSuccessAt: number | null;
}

/** A refused event (4xx for that event alone): recorded with the reason, the watermark passes it. */
export interface DeadLetter {
  eventId: string;
  ts: number;
  reason: string;
}

/**
 * Lists an event cached behind a sink's watermark (an import of older events) for that sink. Kept
 * only while a sink exists: with it in place, the app's sync beside a CLI bulk load into the same
 * cache failed with SQLITE_FULL (test/audit/cli-busy.test.ts).
 */
const BEHIND_TRIGGER = `
  CREATE TRIGGER IF NOT EXISTS events_forward_behind AFTER INSERT ON events BEGIN
    INSERT OR IGNORE INTO forward_behind (sink_id, seq)
      SELECT sink_id, NEW.seq FROM forward_sinks
      WHERE wm_ts > NEW.ts OR (wm_ts = NEW.ts AND wm_event_id >= NEW.event_id);
  END;`;

/** Each sink's watermark and health in audit.db (migration 9), and its refused events. */
export class Watermarks {
  private readonly db: Db;
  private readonly get: Statement;
  private readonly ensureRow: Statement;
  private readonly advance: Statement;
  private readonly failed: Statement;
  private readonly succeeded: Statement;
  private readonly dead: Statement;
  private readonly doneBehind: Statement;

  constructor(db: Db) {
    this.db = db;
    this.get = db.prepare('SELECT * FROM forward_sinks WHERE sink_id = ?');
    this.ensureRow = db.prepare('INSERT OR IGNORE INTO forward_sinks (sink_id) VALUES (?)');
    this.advance = db.prepare(
      'UPDATE forward_sinks SET wm_ts = ?, wm_event_id = ?, delivered = delivered + ? WHERE sink_id = ?',
    );
    this.failed = db.prepare(
      'UPDATE forward_sinks SET attempts = attempts + 1, failing_since = coalesce(failing_since, ?), last_error = ? WHERE sink_id = ?',
    );
    this.succeeded = db.prepare(
      'UPDATE forward_sinks SET attempts = 0, failing_since = NULL, last_success_at = ? WHERE sink_id = ?',
    );
    this.dead = db.prepare(
      'INSERT OR REPLACE INTO forward_dead (sink_id, event_id, ts, reason, at) VALUES (?, ?, ?, ?, ?)',
    );
    this.doneBehind = db.prepare('DELETE FROM forward_behind WHERE sink_id = ? AND seq = ?');
  }

  state(sinkId: string): SinkState {
    if (this.ensureRow.run(sinkId).changes) this.db.exec(BEHIND_TRIGGER);
    const r = this.get.get(sinkId) as {
      sink_id: string;
      wm_ts: number | null;
      wm_event_id: string | null;
      delivered: number;
      attempts: number;
      failing_since: number | null;
      last_error: string | null;
      last_success_at: number | null;
    };
    return {
      sinkId: r.sink_id,
      watermark: r.wm_ts === null || r.wm_event_id === null ? null : { ts: r.wm_ts, eventId: r.wm_event_id },
      delivered: r.delivered,
      attempts: r.attempts,
      failingSince: r.failing_since,
      lastError: r.last_error,
      lastSuccessAt: r.last_success_at,
    };
  }

  /**
   * After the sink acknowledged a batch: in one transaction the watermark moves to `to` (events in
   * order) or the late events (`behindSeqs`) leave the sink's list, and the refused ones are recorded.
   */
  acknowledged(
    sinkId: string,
    batch: { to: Place | null; behindSeqs: number[]; delivered: number; refused: DeadLetter[] },
    now: number,
  ): void {
    this.db.transaction(() => {
      if (batch.to) this.advance.run(batch.to.ts, batch.to.eventId, batch.delivered, sinkId);
      else this.advance.run(...this.currentWm(sinkId), batch.delivered, sinkId);
      for (const seq of batch.behindSeqs) this.doneBehind.run(sinkId, seq);
      for (const d of batch.refused) this.dead.run(sinkId, d.eventId, d.ts, d.reason, now);
      this.succeeded.run(now, sinkId);
    })();
  }

  private currentWm(sinkId: string): [number | null, string | null] {
    const w = this.state(sinkId).watermark;
    return [w?.ts ?? null, w?.eventId ?? null];
  }

  failure(sinkId: string, message: string, now: number): void {
    this.failed.run(now, message, sinkId);
  }

  deadLetters(sinkId: string, limit = 100): DeadLetter[] {
    return this.db
      .prepare(
        'SELECT event_id AS eventId, ts, reason FROM forward_dead WHERE sink_id = ? ORDER BY ts, event_id LIMIT ?',
      )
      .all(sinkId, limit) as DeadLetter[];
  }

  refusedCount(sinkId: string): number {
    return this.db.prepare('SELECT count(*) FROM forward_dead WHERE sink_id = ?').pluck().get(sinkId) as number;
  }

  /** A removed sink leaves nothing behind; added again, it starts from the first event. */
  forget(sinkId: string): void {
    this.db.transaction(() => {
      for (const t of ['forward_sinks', 'forward_behind', 'forward_dead'])
        this.db.prepare(`DELETE FROM ${t} WHERE sink_id = ?`).run(sinkId);
      if (!this.db.prepare('SELECT count(*) FROM forward_sinks').pluck().get())
        this.db.exec('DROP TRIGGER IF EXISTS events_forward_behind');
    })();
  }
}
