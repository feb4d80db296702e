import { existsSync } from 'node:fs';
import { NO_ANSWER, NO_ANSWER_MS } from '../../../shared/work-status.ts';
import { DeskError } from '../../../shared/contract/define.ts';
import type { BatchRecord, CapHold, JobRecord, QueueStatus } from '../../../shared/contract/jobs.ts';
import { canceledMessage } from '../queue/job-messages.ts';
import type { JobState } from '../../../shared/contract/jobs.ts';
import { ATTENTION } from '../queue/job-messages.ts';
import { REQUEUE_FRESH } from '../queue/states.ts';
import { settingsKey, toJobRecord, type JobRow, type JobStore } from '../queue/store.ts';
import type { QueueLease } from './lease.ts';
import type { Runner } from './runner.ts';

export type RetryableState = 'failed' | 'canceled' | 'needs_attention';
const RETRYABLE: readonly RetryableState[] = ['failed', 'canceled', 'needs_attention'];
/** Failed jobs are finished: they keep the server's reason, and Retry failed stays theirs. */
const CANCELABLE = ['queued', 'submitting', 'running', 'downloading', 'needs_attention'] as const;
const ALL_ROWS = 1_000_000;

/** The Queue's commands and reads, any process may run them, holding the queue or not. */
export class QueueCommands {
  private readonly store: JobStore;
  private readonly runner: Runner;
  private readonly lease: QueueLease;

  private readonly capHolds: () => CapHold[];

  private readonly teamNote: () => string | null;

  constructor(
    store: JobStore,
    runner: Runner,
    lease: QueueLease,
    capHolds: () => CapHold[] = () => [],
    teamNote: () => string | null = () => null,
  ) {
    this.teamNote = teamNote;
    this.store = store;
    this.runner = runner;
    this.lease = lease;
    this.capHolds = capHolds;
  }

  status(): QueueStatus {
    this.runner.settleGoneSandbox();
    const { rateLimitedUntil } = this.runner.submitter;
    const serviceWait = this.serviceWait();
    const counts = this.store.counts();
    return {
      paused: this.store.flag('paused') === '1',
      rateLimitedUntil: rateLimitedUntil > this.runner.clock.now() ? rateLimitedUntil : null,
      // Nothing left to send (the user canceled what waited): nothing waits.
      serviceWait: (counts.queued ?? 0) + (counts.submitting ?? 0) > 0 ? serviceWait : null,
      capHolds: (counts.queued ?? 0) > 0 ? this.capHolds() : [],
      teamNote: this.teamNote(),
      running: this.lease.isHeld,
      counts,
    };
  }

  /** Why creates wait: a refusal's reason, else a create that has gone unanswered for NO_ANSWER_MS. */
  serviceWait(): string | null {
    const { serviceWait, unansweredSince } = this.runner.submitter;
    if (serviceWait) return serviceWait;
    return unansweredSince !== null && this.runner.clock.now() - unansweredSince >= NO_ANSWER_MS ? NO_ANSWER : null;
  }

  pause(): QueueStatus {
    this.store.setFlag('paused', '1');
    return this.status();
  }

  resume(): QueueStatus {
    this.store.setFlag('paused', null);
    this.runner.kick();
    return this.status();
  }

  jobRows(ids: readonly string[]): JobRow[] {
    this.runner.settleGoneSandbox();
    return this.store.byIds(ids);
  }

  stateCounts(ids: readonly string[]): { state: JobState; error: string | null; n: number }[] {
    this.runner.settleGoneSandbox();
    return this.store.stateCounts(ids);
  }

  listJobs(query: { batchId?: string; state?: JobState; limit: number; offset: number }): {
    jobs: JobRecord[];
    total: number;
  } {
    this.runner.settleGoneSandbox();
    return this.store.listRecords(query);
  }

  listBatches(limit: number, offset: number): BatchRecord[] {
    this.runner.settleGoneSandbox();
    return this.store.batches(limit, offset);
  }

  job(id: string): JobRecord {
    return toJobRecord(this.currentJob(id));
  }

  cancelJob(id: string): JobRecord {
    const job = this.currentJob(id);
    if (job.state === 'done' || job.state === 'canceled')
      throw new DeskError('conflict', `job ${id} is ${job.state}; there is nothing to cancel`);
    // A task already sent keeps running on the server (the API has no cancel); we stop waiting for it.
    let submitted: boolean | 'maybe' = !!job.taskId;
    if (!submitted && (job.state === 'needs_attention' || job.state === 'submitting')) submitted = 'maybe';
    // The attempt id stays only on a job whose create may have reached the server: its Retry asks
    // first (retryJob). One never sent, or provably refused (429, 503), forgets it.
    const patch = { error: canceledMessage(submitted), ...(submitted === false && { attemptId: null }) };
    if (!this.store.move(id, job.state, 'canceled', patch)) return this.cancelJob(id);
    this.runner.downloads.abort(id);
    this.runner.poller.forget(id);
    void this.runner.downloads.removeParts(this.store.get(id)!);
    return this.job(id);
  }

  /**
   * Retry is always the user's act. A task already paid for is never sent again: with its results
   * known it goes back to downloading, still running on the server it goes back to polling; only a
   * task that failed, was never created, or may not exist is submitted anew.
   */
  retryJob(id: string): JobRecord {
    const job = this.currentJob(id);
    if (!(RETRYABLE as readonly JobState[]).includes(job.state))
      throw new DeskError(
        'conflict',
        `job ${id} is ${job.state}; only failed, canceled or needs-attention jobs can be retried`,
      );
    let moved: boolean;
    // Canceled when its create may have reached the server: a Retry (or a batch's Retry failed) puts
    // it back where the user is asked, never sends it unasked; from there its own Retry sends it.
    if (job.state === 'canceled' && !job.taskId && job.attemptId)
      moved = this.store.move(id, job.state, 'needs_attention', { error: ATTENTION.canceledMaybeSent });
    else if (job.taskId && job.generated?.length)
      moved = this.store.move(id, job.state, 'downloading', { error: null, invalid: null, outputs: [], planned: null });
    else if (job.taskId && job.state === 'canceled')
      moved = this.store.move(id, job.state, 'running', { error: null, nextPollAt: this.runner.clock.now() });
    else {
      const made = this.madeSince(job);
      if (made)
        throw new DeskError(
          'conflict',
          `job ${id} is not sent again: a later job already made ${made} from its input with the same settings; delete that result to make it anew`,
        );
      // A task the service accepted was charged, and stays so when the job is sent anew: the report counts it.
      const earlierCharges = job.taskId
        ? [...job.earlierCharges, { taskId: job.taskId, at: job.submittedAt ?? job.updatedAt }]
        : job.earlierCharges;
      moved = this.store.move(id, job.state, 'queued', { ...REQUEUE_FRESH, earlierCharges });
    }
    if (!moved) throw new DeskError('conflict', `job ${id} changed while retrying; try again`);
    this.runner.reconcileSoon();
    this.runner.kick();
    return this.job(id);
  }

  /** A result still on disk that a finished job made from this job's input, tool, settings and output folder. */
  private madeSince(job: JobRow): string | null {
    if (!job.inputPath) return null;
    const done = this.store.doneOutputs(job.tool, job.outDir);
    const settings = settingsKey(job.params);
    return (
      (done.byInput.get(job.inputPath) ?? []).find(
        (out) => done.byOutput.get(out)?.settings === settings && existsSync(out),
      ) ?? null
    );
  }

  cancelBatch(id: string): BatchRecord {
    return this.forEachJob(id, CANCELABLE, (jobId) => this.cancelJob(jobId));
  }

  retryBatch(id: string, states: readonly RetryableState[] = RETRYABLE): BatchRecord {
    return this.forEachJob(id, states, (jobId) => this.retryJob(jobId));
  }

  /** Applies `act` to the batch's jobs in `states`; one that fails (the job changed meanwhile) does not stop the rest. */
  private forEachJob(batchId: string, states: readonly JobState[], act: (jobId: string) => unknown): BatchRecord {
    if (!this.store.batch(batchId)) throw new DeskError('not_found', `no batch ${batchId}`);
    for (const state of states) {
      for (const job of this.store.list({ batchId, state, limit: ALL_ROWS, offset: 0 }).jobs) {
        try {
          act(job.id);
        } catch {
          // changed meanwhile
        }
      }
    }
    return this.store.batch(batchId)!;
  }

  /** The job as it stands (the Sandbox rule applied), or not_found. */
  private currentJob(id: string): JobRow {
    this.runner.settleGoneSandbox();
    const job = this.store.get(id);
    if (!job) throw new DeskError('not_found', `no job ${id}`);
    return job;
  }
}
