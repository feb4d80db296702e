import { QueueLease } from '../../core/engine/lease.ts';
import { openDatabase } from '../../core/db/open.ts';
import { dbPaths } from '../../core/paths.ts';
import { QUEUE_MIGRATIONS } from '../../core/queue/migrations.ts';
import { JobStore } from '../../core/queue/store.ts';

/**
 * The queue's store alone, for a read the engine would add nothing to: no job of a gone built-in
 * Sandbox to queue again first, no queued job whose daily cap must be asked of the backend (which
 * opens the whole core). Null otherwise, and the caller opens the engine: the answer is the same.
 */
export function openQueueForReading(home: string): { store: JobStore; close(): void } | null {
  const db = openDatabase(dbPaths(home).jobs, QUEUE_MIGRATIONS);
  const store = new JobStore(db);
  // The engine's own lease would judge a holder stale after the same time.
  if (store.counts().queued > 0 || store.hasGoneSandbox(new QueueLease(store).staleMs)) {
    db.close();
    return null;
  }
  return { store, close: () => db.close() };
}
