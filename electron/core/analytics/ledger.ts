import { createHash } from 'node:crypto';
import type { UsageBudget } from '../../../shared/contract/team.ts';
import type { Db } from '../db/open.ts';

/** The service allows 100 credit-usage requests a day per key (api-notes). */
export const CREDIT_USAGE_DAILY_LIMIT = 100;

/** The ledger and the cache are keyed by a hash prefix: the key itself is never written anywhere. */
export const keyHashOf = (apiKey: string) => createHash('sha256').update(apiKey).digest('hex').slice(0, 16);

/** The service's quota day is the UTC day (its Retry-After counts to midnight UTC). */
export const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * Requests spent per key and UTC day, in mediadesk.db so the desktop app, the web host and the
 * CLI share one count. A request is counted BEFORE it is sent: a crash after sending can only
 * over-count, never let the budget be exceeded.
 */
export class UsageLedger {
  private readonly db: Db;
  private readonly limit: number;
  private readonly now: () => number;

  constructor(db: Db, opts: { limit?: number; now?: () => number } = {}) {
    this.db = db;
    this.limit = opts.limit ?? CREDIT_USAGE_DAILY_LIMIT;
    this.now = opts.now ?? Date.now;
  }

  budget(keyHash: string): UsageBudget {
    const day = utcDay(this.now());
    const used =
      (
        this.db.prepare('SELECT count FROM usage_ledger WHERE key_hash = ? AND day = ?').get(keyHash, day) as
          { count: number } | undefined
      )?.count ?? 0;
    return { day, used, limit: this.limit, remaining: Math.max(0, this.limit - used) };
  }

  /** Takes `n` requests of today's budget atomically; false (and nothing taken) if they do not fit. */
  take(keyHash: string, n = 1): boolean {
    if (n > this.limit) return false;
    const day = utcDay(this.now());
    // One statement: concurrent processes cannot both take the last request.
    const r = this.db
      .prepare(
        `INSERT INTO usage_ledger (key_hash, day, count) VALUES (?, ?, ?)
      ON CONFLICT (key_hash, day) DO UPDATE SET count = count + excluded.count WHERE count + excluded.count <= ?`,
      )
      .run(keyHash, day, n, this.limit);
    return r.changes === 1;
  }

  /** The server said 429: someone else spent this key's budget too. Believe it for the rest of the day. */
  exhaust(keyHash: string): void {
    const day = utcDay(this.now());
    this.db
      .prepare(
        `INSERT INTO usage_ledger (key_hash, day, count) VALUES (?, ?, ?) ON CONFLICT (key_hash, day) DO UPDATE SET count = MAX(count, excluded.count)`,
      )
      .run(keyHash, day, this.limit);
  }
}

export interface CacheEntry {
  response: unknown;
  fetchedAt: number;
}

/** Credit-usage answers by normalized request body: viewing the same chart again costs nothing. */
export class UsageCache {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }
  static bodyHash(body: unknown): string {
    return createHash('sha256').update(JSON.stringify(body)).digest('hex');
  }
  get(keyHash: string, body: unknown): CacheEntry | null {
    const r = this.db
      .prepare('SELECT response, fetched_at FROM usage_cache WHERE key_hash = ? AND body_hash = ?')
      .get(keyHash, UsageCache.bodyHash(body)) as { response: string; fetched_at: number } | undefined;
    return r ? { response: JSON.parse(r.response), fetchedAt: r.fetched_at } : null;
  }
  put(keyHash: string, body: unknown, response: unknown, fetchedAt: number): void {
    this.db
      .prepare(
        `INSERT INTO usage_cache (key_hash, body_hash, body, response, fetched_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (key_hash, body_hash) DO UPDATE SET response = excluded.response, fetched_at = excluded.fetched_at`,
      )
      .run(keyHash, UsageCache.bodyHash(body), JSON.stringify(body), JSON.stringify(response), fetchedAt);
  }
}
