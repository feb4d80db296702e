import type { SyncErrorKind } from '../../../shared/contract/audit.ts';
import type { Db } from '../db/open.ts';

export interface Window {
  from: string;
  to: string;
}

export interface SyncState {
  fingerprint: string;
  /** Windows still to walk; the first is in progress. Empty when no walk is under way. */
  windows: Window[];
  cursor: string | null;
  walkStartedAt: number | null;
  completeThrough: number | null;
  lastSyncAt: number | null;
  lastSuccessAt: number | null;
  lastError: { kind: SyncErrorKind; message: string; at: number } | null;
  retryAfterUntil: number | null;
}

interface Row {
  fingerprint: string;
  walk_windows: string | null;
  walk_cursor: string | null;
  walk_started_at: number | null;
  complete_through: number | null;
  last_sync_at: number | null;
  last_success_at: number | null;
  last_error_kind: SyncErrorKind | null;
  last_error_message: string | null;
  last_error_at: number | null;
  retry_after_until: number | null;
}

function fromRow(r: Row): SyncState {
  let windows: Window[] = [];
  try {
    const w = JSON.parse(r.walk_windows ?? '[]') as unknown;
    if (Array.isArray(w))
      windows = w.filter((x): x is Window => typeof x?.from === 'string' && typeof x?.to === 'string');
  } catch {
    // A damaged walk is simply restarted: the next sync plans its windows again.
  }
  return {
    fingerprint: r.fingerprint,
    windows,
    cursor: r.walk_cursor,
    walkStartedAt: r.walk_started_at,
    completeThrough: r.complete_through,
    lastSyncAt: r.last_sync_at,
    lastSuccessAt: r.last_success_at,
    lastError: r.last_error_kind
      ? { kind: r.last_error_kind, message: r.last_error_message ?? '', at: r.last_error_at ?? 0 }
      : null,
    retryAfterUntil: r.retry_after_until,
  };
}

/** A key that never synced: no walk, nothing complete. */
export const freshSyncState = (fingerprint: string): SyncState => ({
  fingerprint,
  windows: [],
  cursor: null,
  walkStartedAt: null,
  completeThrough: null,
  lastSyncAt: null,
  lastSuccessAt: null,
  lastError: null,
  retryAfterUntil: null,
});

/** The sync_state table: where a walk stands, so a killed sync continues instead of starting over. */
export class SyncStateRepo {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  load(fingerprint: string): SyncState {
    const r = this.db.prepare('SELECT * FROM sync_state WHERE fingerprint = ?').get(fingerprint) as Row | undefined;
    return r ? fromRow(r) : freshSyncState(fingerprint);
  }

  /** The most recently used key's state, for a status shown when no key can be resolved. */
  latest(): SyncState | null {
    const r = this.db.prepare('SELECT * FROM sync_state ORDER BY coalesce(last_sync_at, 0) DESC LIMIT 1').get() as
      Row | undefined;
    return r ? fromRow(r) : null;
  }

  /** When any key last completed a sync of this cache: the cache's freshness, whichever key is in use now. */
  latestSuccess(): number | null {
    return this.db.prepare('SELECT max(last_success_at) FROM sync_state').pluck().get() as number | null;
  }

  save(s: SyncState): void {
    this.db
      .prepare(
        `INSERT INTO sync_state (fingerprint, walk_windows, walk_cursor, walk_started_at, complete_through, last_sync_at, last_success_at, last_error_kind, last_error_message, last_error_at, retry_after_until)
      VALUES (@fingerprint, @walk_windows, @walk_cursor, @walk_started_at, @complete_through, @last_sync_at, @last_success_at, @last_error_kind, @last_error_message, @last_error_at, @retry_after_until)
      ON CONFLICT (fingerprint) DO UPDATE SET walk_windows = excluded.walk_windows, walk_cursor = excluded.walk_cursor, walk_started_at = excluded.walk_started_at,
        complete_through = excluded.complete_through, last_sync_at = excluded.last_sync_at, last_success_at = excluded.last_success_at,
        last_error_kind = excluded.last_error_kind, last_error_message = excluded.last_error_message, last_error_at = excluded.last_error_at,
        retry_after_until = excluded.retry_after_until`,
      )
      .run({
        fingerprint: s.fingerprint,
        walk_windows: s.windows.length ? JSON.stringify(s.windows) : null,
        walk_cursor: s.cursor,
        walk_started_at: s.walkStartedAt,
        complete_through: s.completeThrough,
        last_sync_at: s.lastSyncAt,
        last_success_at: s.lastSuccessAt,
        last_error_kind: s.lastError?.kind ?? null,
        last_error_message: s.lastError?.message ?? null,
        last_error_at: s.lastError?.at ?? null,
        retry_after_until: s.retryAfterUntil,
      });
  }
}
