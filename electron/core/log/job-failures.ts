import type { JobsChanged } from '../../../shared/contract/jobs.ts';
import type { AppLog } from './index.ts';

const ENDED_BADLY = new Set(['failed', 'needs_attention']);

/**
 * Logs each job that ends failed or needing attention, once per state it reaches, with its
 * error (already redacted, and the log redacts again): the runners' failures, for a support log.
 */
export function logJobFailures(
  engine: { on(event: 'jobs.changed', listener: (e: JobsChanged) => void): () => void },
  log: Pick<AppLog, 'warn'>,
): () => void {
  const told = new Map<string, string>();
  return engine.on('jobs.changed', (e) => {
    for (const job of e.jobs) {
      if (!ENDED_BADLY.has(job.state)) {
        told.delete(job.id);
        continue;
      }
      if (told.get(job.id) === job.state) continue;
      told.set(job.id, job.state);
      log.warn(`job ${job.id} (${job.tool}) ${job.state.replace('_', ' ')}: ${job.error ?? 'no reason given'}`);
    }
  });
}
