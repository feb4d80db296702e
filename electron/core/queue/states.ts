/**
 * The job state machine. Every change of state goes through `canMove`, and the store applies it
 * as a compare-and-set on the stored state, so two processes (or a cancel racing a download) can
 * never both win.
 */
import type { JobState } from '../../../shared/contract/jobs.ts';

const MOVES: Record<JobState, readonly JobState[]> = {
  queued: ['submitting', 'canceled'],
  // queued again only when the server provably did not take the create (429/503, never connected).
  submitting: ['running', 'downloading', 'queued', 'failed', 'needs_attention', 'canceled'],
  // queued again from running or downloading only for the built-in Sandbox, which is free and
  // forgets its tasks when its process ends (REQUEUE_FRESH); a paid task is never sent again unasked.
  running: ['downloading', 'failed', 'canceled', 'needs_attention', 'queued'],
  downloading: ['done', 'failed', 'canceled', 'needs_attention', 'downloading', 'queued'],
  done: [],
  // Retry is always a user's act: back to queued (new create) or to downloading (task already paid).
  failed: ['queued', 'downloading', 'canceled'],
  // needs_attention: a job canceled when its create may have reached the server, retried (Engine.retryJob).
  canceled: ['queued', 'running', 'downloading', 'needs_attention'],
  needs_attention: ['queued', 'running', 'downloading', 'canceled'],
};

export const canMove = (from: JobState, to: JobState): boolean => MOVES[from].includes(to);

/**
 * Where a job goes when the built-in Sandbox that had its task is gone (it ends with the process
 * that started it, and its result URLs with it). Its work is free, so it is queued again by
 * itself rather than put to the user as a lost, paid task.
 */
export const REQUEUE_FRESH = {
  error: null,
  invalid: null,
  taskId: null,
  attemptId: null,
  generated: null,
  planned: null,
  outputs: [] as string[],
  sandboxOf: null,
};
