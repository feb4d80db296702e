import type { JobsChanged, QueueStatus } from '../../../shared/contract/jobs.ts';
import { toJobRecord, type JobStore } from '../queue/store.ts';

export type JobsChangedListener = (event: JobsChanged) => void;

/** Why work waits, as JobEvents watches it. */
interface Waits {
  serviceWait: string | null;
  heldBatches: string[];
}

/** Rows per event; more changed since the last one are marked `truncated`. */
const MAX_ROWS = 500;

/** `jobs.changed` events, throttled: at most one per interval, with the rows changed since the last one. */
export class JobEvents {
  private readonly store: JobStore;
  private readonly status: () => QueueStatus;
  private readonly listeners = new Set<JobsChangedListener>();
  private timer: NodeJS.Timeout | null = null;
  private cursor = 0;
  /** Ids already sent whose updated_at is the cursor's millisecond. */
  private readonly sentAtCursor = new Set<string>();

  /**
   * Why work waits, cheap to read (no count): why creates wait, and the batches their budget
   * holds. A change of it is an event though no job changed, so a wait is said while it lasts.
   */
  private readonly waits: () => Waits;
  private lastWait: Waits = { serviceWait: null, heldBatches: [] };

  constructor(
    store: JobStore,
    status: () => QueueStatus,
    waits: () => Waits = () => ({ serviceWait: null, heldBatches: [] }),
  ) {
    this.store = store;
    this.status = status;
    this.waits = waits;
  }

  on(listener: JobsChangedListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  start(intervalMs: number): void {
    this.cursor = Date.now();
    this.timer = setInterval(() => this.emitChanges(), intervalMs);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  emitChanges(): void {
    if (this.listeners.size === 0) {
      this.cursor = Date.now();
      return;
    }
    // `>=` with the ids already sent at the cursor's millisecond: a row written in that same
    // millisecond after the query is neither lost nor sent twice.
    const rows = this.store
      .changedSince(this.cursor, 1001)
      .filter((row) => !(row.u === this.cursor && this.sentAtCursor.has(row.id)));
    const wait = this.waits();
    const before = this.lastWait;
    this.lastWait = wait;
    // Batches held or let go since the last event come with it, their held_by changed.
    const heldMoved = [
      ...wait.heldBatches.filter((id) => !before.heldBatches.includes(id)),
      ...before.heldBatches.filter((id) => !wait.heldBatches.includes(id)),
    ];
    if (rows.length === 0 && wait.serviceWait === before.serviceWait && heldMoved.length === 0) return;
    const truncated = rows.length > MAX_ROWS;
    const sent = rows.slice(0, MAX_ROWS);
    const jobs = this.store.byIds(sent.map((row) => row.id));
    const latest = sent.length ? Math.max(...sent.map((row) => row.u)) : this.cursor;
    if (latest !== this.cursor) this.sentAtCursor.clear();
    this.cursor = latest;
    for (const row of sent) if (row.u === latest) this.sentAtCursor.add(row.id);
    const batchIds = [...new Set([...jobs.map((job) => job.batchId), ...heldMoved])];
    const payload: JobsChanged = {
      batches: batchIds.map((id) => this.store.batch(id)!).filter(Boolean),
      jobs: jobs.map(toJobRecord),
      truncated,
      status: this.status(),
    };
    for (const listener of this.listeners) listener(payload);
  }
}
