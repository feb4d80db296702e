import type { Statement } from 'better-sqlite3';
import { openDatabase, type Db } from '../db/open.ts';
import type { EventRow } from './event.ts';
import { AUDIT_MIGRATIONS } from './migrations.ts';

export type Origin = 'sync' | 'import';

export interface InsertCounts {
  inserted: number;
  duplicates: number;
}

/**
 * The events table and its FTS index, written only through `insertBatch`: INSERT OR IGNORE on
 * event_id, so a row already cached is never modified, and each batch is one transaction, so a
 * crash leaves whole batches or nothing.
 */
export class AuditStore {
  readonly db: Db;
  private readonly insertEvent: Statement;
  private readonly insertText: Statement;

  constructor(path: string) {
    this.db = openDatabase(path, AUDIT_MIGRATIONS);
    // Large imports: a bigger page cache keeps index pages hot between batches (bounded, 64 MB).
    this.db.pragma('cache_size = -65536');
    this.db.pragma('temp_store = MEMORY');
    this.insertEvent = this.db.prepare(`INSERT OR IGNORE INTO events
      (event_id, ts, event_type, member_email, member_id, member_type, verb, status, category, group_id, folder_ref, project_ref, request_id, correlation_id, resource_id, origin, raw)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.insertText = this.db.prepare('INSERT INTO events_fts (rowid, body) VALUES (?, ?)');
  }

  /** `extra` runs inside the same transaction (the sync stores its cursor with the page it read). */
  insertBatch(rows: readonly EventRow[], origin: Origin, extra?: () => void): InsertCounts {
    let inserted = 0;
    this.db.transaction(() => {
      for (const r of rows) {
        const info = this.insertEvent.run(r.eventId, r.ts, r.eventType, r.memberEmail, r.memberId, r.memberType, r.verb, r.status, r.category,
          r.groupId, r.folderRef, r.projectRef, r.requestId, r.correlationId, r.resourceId, origin, r.raw);
        if (info.changes === 1) {
          inserted++;
          this.insertText.run(info.lastInsertRowid, r.text);
        }
      }
      extra?.();
    })();
    return { inserted, duplicates: rows.length - inserted };
  }

  counts(): { events: number; oldest: number | null; newest: number | null } {
    const r = this.db.prepare('SELECT count(*) AS n, min(ts) AS lo, max(ts) AS hi FROM events').get() as { n: number; lo: number | null; hi: number | null };
    return { events: r.n, oldest: r.lo, newest: r.hi };
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
