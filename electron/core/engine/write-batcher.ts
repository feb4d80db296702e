import type { JobStore } from '../queue/store.ts';

interface PendingWrite {
  fn: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * Job changes requested in one event-loop turn, committed together in one transaction. Each promise
 * settles after the commit, so callers act (send a create, write a file) only once the disk says
 * so; each change is still a compare-and-set, and its own result (moved or not) is what it gives.
 */
export class WriteBatcher {
  private readonly store: JobStore;
  private pending: PendingWrite[] = [];
  private flushScheduled = false;

  constructor(store: JobStore) {
    this.store = store;
  }

  write<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    const results: { ok: boolean; value: unknown }[] = [];
    try {
      this.store.transaction(() => {
        for (const pending of batch) {
          try {
            results.push({ ok: true, value: pending.fn() });
          } catch (err) {
            // One failing statement is rolled back alone; the others still commit.
            results.push({ ok: false, value: err });
          }
        }
      }, true);
    } catch (err) {
      // The commit itself failed (disk full, lock timeout): nothing of the batch was written.
      for (const pending of batch) pending.reject(err);
      return;
    }
    batch.forEach((pending, i) =>
      results[i].ok ? pending.resolve(results[i].value) : pending.reject(results[i].value),
    );
  }
}
