import { createHash } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import type { Db } from '../db/open.ts';

/** api-spec, Limits: the audit-log search allows 500 requests per day (per key). */
export const AUDIT_DAILY_LIMIT = 500;

/** Identifies a key in the ledger and sync state without storing anything that could be used as it. */
export function keyFingerprint(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex').slice(0, 16);
}

export const utcDay = (at: Date) => at.toISOString().slice(0, 10);

export class BudgetExhaustedError extends Error {
  readonly day: string;
  readonly limit: number;
  constructor(day: string, limit: number) {
    super(
      `the daily budget of ${limit} audit-log requests for this key is used up for ${day} (UTC); sync again after midnight UTC`,
    );
    this.name = 'BudgetExhaustedError';
    this.day = day;
    this.limit = limit;
  }
}

/**
 * Requests per key and UTC day. `reserve` counts a request before it is sent, in its own
 * committed transaction: a crash after sending can only over-count, never under-count, so the
 * client stays under the API's daily limit even across kills.
 */
export class RequestLedger {
  private readonly db: Db;
  readonly limit: number;
  private readonly read: Statement;
  private readonly bump: Statement;

  constructor(db: Db, limit = AUDIT_DAILY_LIMIT) {
    this.db = db;
    this.limit = limit;
    this.read = db.prepare('SELECT requests FROM request_ledger WHERE fingerprint = ? AND day = ?');
    this.bump = db.prepare(`INSERT INTO request_ledger (fingerprint, day, requests) VALUES (?, ?, 1)
      ON CONFLICT (fingerprint, day) DO UPDATE SET requests = requests + 1`);
  }

  used(fingerprint: string, day: string): number {
    return (this.read.get(fingerprint, day) as { requests: number } | undefined)?.requests ?? 0;
  }

  usage(fingerprint: string, at: Date): { day: string; used: number; limit: number; left: number } {
    const day = utcDay(at);
    const used = this.used(fingerprint, day);
    return { day, used, limit: this.limit, left: Math.max(0, this.limit - used) };
  }

  /** Takes one request from today's budget or throws BudgetExhaustedError; returns what is left. */
  reserve(fingerprint: string, at: Date): number {
    const day = utcDay(at);
    return this.db
      .transaction(() => {
        const used = this.used(fingerprint, day);
        if (used >= this.limit) throw new BudgetExhaustedError(day, this.limit);
        this.bump.run(fingerprint, day);
        return this.limit - used - 1;
      })
      .immediate();
  }
}
