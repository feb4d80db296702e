import type { JobsChanged } from '../../../shared/contract/jobs.ts';
import type { AppRun } from '../../../shared/contract/team.ts';
import type { EventBus } from '../events.ts';
import type { AppLog } from './index.ts';

const ENDED_BADLY = new Set(['failed', 'needs_attention']);

/** Logs each item that ends failed or needing attention, once per state it reaches; `say` words the line. */
function failureLogger<T extends { id: string; state: string; error: string | null }>(
  log: Pick<AppLog, 'warn'>,
  say: (item: T, state: string) => string,
): (items: readonly T[]) => void {
  const told = new Map<string, string>();
  return (items) => {
    for (const item of items) {
      if (!ENDED_BADLY.has(item.state)) {
        told.delete(item.id);
        continue;
      }
      if (told.get(item.id) === item.state) continue;
      told.set(item.id, item.state);
      log.warn(`${say(item, item.state.replace('_', ' '))}: ${item.error ?? 'no reason given'}`);
    }
  };
}

/**
 * Logs each job that ends failed or needing attention, once per state it reaches, with its
 * error (already redacted, and the log redacts again): the runners' failures, for a support log.
 */
export function logJobFailures(
  engine: { on(event: 'jobs.changed', listener: (e: JobsChanged) => void): () => void },
  log: Pick<AppLog, 'warn'>,
): () => void {
  const tell = failureLogger<JobsChanged['jobs'][number]>(log, (job, state) => `job ${job.id} (${job.tool}) ${state}`);
  return engine.on('jobs.changed', (e) => tell(e.jobs));
}

/** As logJobFailures, for workflow app runs (their changes reach the bus as `apps.changed`). */
export function logAppRunFailures(events: EventBus, log: Pick<AppLog, 'warn'>): () => void {
  const tell = failureLogger<AppRun>(log, (run, state) => `app run ${run.id} (${run.appName}) ${state}`);
  return events.onAny((name, payload) => {
    if (name === 'apps.changed') tell((payload as { runs: AppRun[] }).runs);
  });
}

/** The engine's unexpected failures (EngineOptions.error): in the log, and on stderr as before. */
export function logEngineErrors(log: Pick<AppLog, 'error'>): (message: string) => void {
  return (message) => {
    log.error(`engine: ${message}`);
    console.error(`mediadesk engine: ${message}`);
  };
}
