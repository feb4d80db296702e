import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Statement } from 'better-sqlite3';
import type { Db } from '../../db/open.ts';
import { isAlive } from '../store/records.ts';

/** How long a lease holds without renewal: a holder that stops (killed, frozen) hands over after it. */
export const LEASE_MS = 30_000;
/** Renewed this often while held, well inside LEASE_MS. */
export const LEASE_RENEW_MS = 10_000;

/** The process forwarding a sink now. */
export interface LeaseHolder {
  host: string;
  pid: number;
  expiresAt: number;
}

/**
 * One process forwards a sink at a time (audit.db, migration 11): two processes on one data folder
 * would otherwise both send every event. A lease expires unless renewed, so a killed holder hands
 * over; one whose pid is gone from this machine hands over at once.
 */
export class ForwardLeases {
  private readonly db: Db;
  private readonly token = randomUUID();
  private readonly host: string;
  private readonly pid: number;
  private readonly read: Statement;
  private readonly put: Statement;
  private readonly extend: Statement;
  private readonly drop: Statement;

  constructor(db: Db, me: { host?: string; pid?: number } = {}) {
    this.db = db;
    this.host = me.host ?? hostname();
    this.pid = me.pid ?? process.pid;
    this.read = db.prepare('SELECT host, pid, token, expires_at FROM forward_leases WHERE sink_id = ?');
    this.put = db.prepare(
      'INSERT OR REPLACE INTO forward_leases (sink_id, host, pid, token, expires_at) VALUES (?, ?, ?, ?, ?)',
    );
    this.extend = db.prepare('UPDATE forward_leases SET expires_at = ? WHERE sink_id = ? AND token = ?');
    this.drop = db.prepare('DELETE FROM forward_leases WHERE sink_id = ? AND token = ?');
  }

  /** Another process that holds the sink's lease now, or null. */
  holder(sinkId: string, now: number): LeaseHolder | null {
    const r = this.read.get(sinkId) as { host: string; pid: number; token: string; expires_at: number } | undefined;
    if (!r || r.token === this.token || r.expires_at <= now) return null;
    if (r.host === this.host && !isAlive(r.pid)) return null;
    return { host: r.host, pid: r.pid, expiresAt: r.expires_at };
  }

  /** Takes the sink's lease; null when taken, else who holds it. */
  acquire(sinkId: string, now: number): LeaseHolder | null {
    return this.db
      .transaction(() => {
        const other = this.holder(sinkId, now);
        if (!other) this.put.run(sinkId, this.host, this.pid, this.token, now + LEASE_MS);
        return other;
      })
      .immediate();
  }

  /** Extends a lease this process holds; false when it has been taken over meanwhile. */
  renew(sinkId: string, now: number): boolean {
    return this.extend.run(now + LEASE_MS, sinkId, this.token).changes === 1;
  }

  release(sinkId: string): void {
    this.drop.run(sinkId, this.token);
  }
}

/** What a process that finds the sink's lease taken says. */
export const heldText = (sinkId: string, h: LeaseHolder, host = hostname()) =>
  `another process (pid ${h.pid}${h.host === host ? '' : ` on ${h.host}`}) is forwarding to sink ${sinkId}; nothing was sent`;
