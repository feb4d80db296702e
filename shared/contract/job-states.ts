// The job states and the words said about them, without zod: `mediadesk jobs list` and the queue's
// store read them without building the contract's schemas (jobs.ts builds them from these).
import { formatTime } from '../dates.ts';
import { waitingFor } from './backend-identity.ts';
import type { BatchRecord, CapHold } from './jobs.ts';
import type { AppRun } from './team.ts';

/** The queue's job states; the moves between them are the core's (electron/core/queue/states.ts). */
export const JOB_STATES = [
  'queued',
  'submitting',
  'running',
  'downloading',
  'done',
  'failed',
  'canceled',
  'needs_attention',
] as const;
export type JobState = (typeof JOB_STATES)[number];
export const isJobState = (s: string): s is JobState => (JOB_STATES as readonly string[]).includes(s);

/** States in which a job holds a concurrency slot. */
export const ACTIVE_STATES: readonly JobState[] = ['submitting', 'running', 'downloading'];
/** States in which a job moves on by itself: waiting for a slot, or holding one. */
export const MOVING_STATES: readonly JobState[] = ['queued', ...ACTIVE_STATES];
/** States from which nothing happens without the user. */
export const SETTLED_STATES: readonly JobState[] = ['done', 'failed', 'canceled', 'needs_attention'];
/** States in which queued work is driven by its backend (submitted or polled), so can wait for it. */
export const WAITING_STATES: readonly JobState[] = ['queued', 'submitting', 'running'];

/**
 * Why the queue holds its creates back when no job says more: a refused create (429/503) and an
 * unreachable server both set the wait, so neither is named alone. The Queue and the CLI say it.
 */
export const QUEUE_HELD_BACK = 'waiting to submit again: the server is busy or could not be reached';

/** A held tool in plain words, the same in the Queue and the CLI; the reset time is the reader's own. */
export function heldMessage(h: CapHold): string {
  const waiting = h.waiting === 1 ? '1 job waits' : `${h.waiting} jobs wait`;
  return (
    `Held: the daily limit of ${h.limit} job${h.limit === 1 ? '' : 's'} for ${h.title} is reached; ${h.left} left today, ` +
    `resets at ${formatTime(h.resetsAt)} your time (${waiting}).`
  );
}

/** Jobs of the batch its backend still has to submit or poll. */
export const waitingJobs = (b: Pick<BatchRecord, 'counts'>) =>
  WAITING_STATES.reduce((a, s) => a + (b.counts[s] ?? 0), 0);

/** Why the batch's unfinished jobs do not move (see waitingFor); null when they can. */
export function batchWaitingFor(b: Pick<BatchRecord, 'counts' | 'backend'>, inUse: string): string | null {
  return waitingJobs(b) > 0 ? waitingFor(b.backend, inUse) : null;
}

/** Why an unfinished run does not move (see waitingFor); null when it can. */
export function runWaitingFor(r: Pick<AppRun, 'state' | 'backend'>, inUse: string): string | null {
  return WAITING_STATES.includes(r.state) ? waitingFor(r.backend, inUse) : null;
}
