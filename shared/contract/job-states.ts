// The job states and the words said about them, without zod: `mediadesk jobs list` and the queue's
// store read them without building the contract's schemas (jobs.ts builds them from these).
import { formatTime } from '../dates.ts';
import type { CapHold } from './jobs.ts';

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
