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
      // Loaded only with queued jobs: the limiter; the catalogue (zod) only for a held tool's title.
      const [{ pacingRates }, { PaceLimiter }, { heldFor, rememberedScope }] = await Promise.all([
        import('../../core/limits/pacer.ts'),
        import('../../core/limits/limiter.ts'),
        import('../../core/limits/held-at.ts'),
      ]);
      const rates = pacingRates(env);
      const at = rememberedScope(store);
      if (!rates || !at) return [];
      const backend = new QueueLease(store).holderBackend();
      const holds = heldFor(new PaceLimiter(db, { rates }), at, store, backend, () => '');
      if (!holds.length) return [];
      const { limitTitle } = await import('../../core/limits/held.ts');
      return holds.map((h) => ({ ...h, title: limitTitle(h.tool) }));
    },
    close: () => db.close(),
  };
}
