import type { ToolClient } from '../api/tools.ts';
import type { Pacer } from '../limits/pacer.ts';
import type { JobRow, JobStore } from '../queue/store.ts';
import type { QueueLease } from './lease.ts';
import type { EngineOptions } from './options.ts';
import type { PollPolicy } from './poll-policy.ts';
import type { Clock } from '../clock.ts';

/** What the loop's steps (submit, poll, download) share; the Runner provides it. */
export interface LoopContext {
  readonly store: JobStore;
  readonly tools: ToolClient;
  readonly options: EngineOptions;
  readonly poll: PollPolicy;
  /** EngineOptions.clock, or real time. */
  readonly clock: Clock;
  readonly lease: QueueLease;
  /** WriteBatcher.write: settles once the change is committed. */
  readonly write: <T>(fn: () => T) => Promise<T>;
  /** Runs a step of one job; a job has at most one step at a time (isBusy), and the loop runs after it. */
  readonly run: (jobId: string, step: () => Promise<void>) => void;
  readonly isBusy: (jobId: string) => boolean;
  /** Runs the loop's next tick at once. */
  readonly kick: () => void;
  /** Paces creates and polls to the service's limits; null when the engine is not paced (EngineOptions.rates). */
  readonly pacer: Pacer | null;
  /** Creates picked to be sent whose pacing places are not taken yet: polls leave those places to them. */
  readonly createsPending?: () => number;
  /** The backend in use at the last tick (EngineOptions.identity); null when not told. */
  readonly backendInUse: () => string | null;
}

/** Whether the job's batch was started on the built-in Sandbox (see REQUEUE_FRESH). */
export function onBuiltInSandbox(store: JobStore, job: JobRow): boolean {
  return store.backendOf(job.batchId) === 'sandbox';
}
