import { randomUUID } from 'node:crypto';
import type { JobStore } from '../queue/store.ts';

/** How often the holder renews the lease; a process waiting for it asks twice as often. */
export const HEARTBEAT_MS = 2000;
const LEASE_STALE_MS = 10_000;
/** queue_flags key: the backend of the lease holder (Backend.identity). */
const HOLDER_BACKEND = 'holder_backend';

/** What a heartbeat found: the lease newly taken, still held, lost to another process, or still not ours. */
export type LeaseBeat = 'gained' | 'kept' | 'lost' | 'waiting';

/**
 * The single-runner lease: one process drives the queue at a time. A holder that stopped
 * heart-beating `staleMs` ago, or whose process on this machine is gone, is presumed dead.
 */
export class QueueLease {
  /** This process's queue owner (queue_lease.owner, jobs.sandbox_of). */
  readonly owner = randomUUID();
  readonly staleMs: number;
  private readonly store: JobStore;
  private held = false;
  private lastHeartbeat = 0;

  constructor(store: JobStore, staleMs = LEASE_STALE_MS) {
    this.store = store;
    this.staleMs = staleMs;
  }

  get isHeld(): boolean {
    return this.held;
  }

  /** Takes the lease, or renews it when a heartbeat is due. */
  heartbeat(now: number): LeaseBeat {
    if (this.held && now - this.lastHeartbeat <= HEARTBEAT_MS) return 'kept';
    const had = this.held;
    this.held = this.store.tryLease(this.owner, this.staleMs);
    this.lastHeartbeat = now;
    if (this.held) return had ? 'kept' : 'gained';
    return had ? 'lost' : 'waiting';
  }

  release(): void {
    if (this.held) this.store.releaseLease(this.owner);
    this.held = false;
  }

  /** The owner of the live process that holds the queue; null when none (a SIGKILLed one's lease row is no holder). */
  liveHolder(): string | null {
    return this.store.liveHolder(this.staleMs);
  }

  /** Whether another process that still lives holds the queue. */
  otherHolds(): boolean {
    return !this.held && this.liveHolder() !== null;
  }

  /** The backend of the live process that holds the queue, as it last said; null when none or unknown. */
  holderBackend(): string | null {
    return this.liveHolder() ? this.store.flag(HOLDER_BACKEND) : null;
  }

  /** Said for the other processes that follow the queue (the CLI), whose jobs may be for another backend. */
  announceBackend(backend: string): void {
    this.store.setFlag(HOLDER_BACKEND, backend);
  }
}
