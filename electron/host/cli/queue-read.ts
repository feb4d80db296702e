import type { CapHold } from '../../../shared/contract/jobs.ts';
import { QueueLease } from '../../core/engine/lease.ts';
import { openDatabase } from '../../core/db/open.ts';
import { dbPaths } from '../../core/paths.ts';
import { SANDBOX_GONE } from '../../core/queue/job-messages.ts';
import { QUEUE_MIGRATIONS } from '../../core/queue/migrations.ts';
import { JobStore } from '../../core/queue/store.ts';

export interface QueueReading {
  store: JobStore;
  /** Tools whose queued jobs wait for their daily cap, by the scope a process last paced by; none when none did. */
  capHolds(): Promise<CapHold[]>;
  close(): void;
}

/**
 * The queue's store alone, for `jobs list` whatever the queue holds: no engine, no key, no backend,
 * nothing sent. The one write is the rule every reader of the queue applies (the engine's reads
 * too): jobs in flight on a built-in Sandbox whose process ended are queued again.
 */
export function openQueueForReading(home: string, env: NodeJS.ProcessEnv = process.env): QueueReading {
  const db = openDatabase(dbPaths(home).jobs, QUEUE_MIGRATIONS);
  const store = new JobStore(db);
  // The engine's own lease would judge a holder stale after the same time.
  store.requeueGoneSandbox(SANDBOX_GONE, new QueueLease(store).staleMs);
  return {
    store,
    capHolds: async () => {
      if (!store.counts().queued) return [];
      // Loaded only with queued jobs: the limiter and the catalogue's titles.
      const [{ pacingRates }, { PaceLimiter }, held] = await Promise.all([
        import('../../core/limits/pacer.ts'),
        import('../../core/limits/limiter.ts'),
        import('../../core/limits/held.ts'),
      ]);
      const rates = pacingRates(env);
      if (!rates) return [];
      const at = held.rememberedScope(store);
      return at ? held.heldFor(new PaceLimiter(db, { rates }), at, store, new QueueLease(store).holderBackend()) : [];
    },
    close: () => db.close(),
  };
}
