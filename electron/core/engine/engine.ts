import type {
  BatchBudget,
  BatchCheckResult,
  BatchRecord,
  BatchStartResult,
  JobRecord,
  QueueStatus,
} from '../../../shared/contract/jobs.ts';
import { DeskError } from '../../../shared/contract/define.ts';
import { ApiClient } from '../api/client.ts';
import { BatchBudgets } from '../limits/budget.ts';
import { ToolClient } from '../api/tools.ts';
import { ACTIVE_STATES, type JobState } from '../../../shared/contract/jobs.ts';
import { JobStore, type JobRow } from '../queue/store.ts';
import { QueueCommands, type RetryableState } from './commands.ts';
import { JobEvents, type JobsChangedListener } from './events.ts';
import { QueueLease } from './lease.ts';
import type { ResultMetadata } from '../metadata/result-metadata.ts';
import type { EngineOptions } from './options.ts';
import { BatchPlanner, type CheckRequest, type StartRequest } from './planner.ts';
import { DEFAULT_POLL, type PollPolicy } from './poll-policy.ts';
import { Runner } from './runner.ts';
import { WriteBatcher } from './write-batcher.ts';
import { PaceLimiter } from '../limits/limiter.ts';
import { Pacer } from '../limits/pacer.ts';
import { heldTools } from '../limits/held.ts';
import { PACE_SCOPE_FLAG } from '../limits/held-at.ts';
import { realClock } from '../clock.ts';

export type { EngineOptions } from './options.ts';

const EVENT_INTERVAL_MS = 250;
/**
 * A create's grant is taken before its `submitting` commit, and on a loaded machine its request
 * can reach the server some hundreds of ms later; the service's windows (5 s, 2 min) barely notice.
 */
export const PACE_SAFETY_MS = 1000;

/**
 * The engine: one durable queue in SQLite, driven by whichever process holds the lease. Each job
 * moves through its state machine by compare-and-set updates, so what is on disk is always the
 * truth and any process can be killed at any point. This facade wires the parts together.
 */
export class Engine {
  readonly store: JobStore;
  readonly tools: ToolClient;
  /** Who may hold live work on a built-in Sandbox: this process's queue owner, and the live holder of the queue. */
  readonly sandboxOwners: { here: () => string; live: () => string | null };
  /** The pacing limiter on this engine's connection, shared through the file with every process (core/limits). */
  readonly pacer: Pacer;
  private readonly options: EngineOptions;
  private readonly lease: QueueLease;
  private readonly runner: Runner;
  private readonly planner: BatchPlanner;
  private readonly commands: QueueCommands;
  private readonly events: JobEvents;

  constructor(options: EngineOptions) {
    this.options = options;
    this.store = new JobStore(options.db);
    // Uploads and any other request the steps send without taking a place wait for one here.
    const pace = options.rates ? () => this.pacer.gate() : undefined;
    this.tools = new ToolClient(new ApiClient(options.target, { pace, ...options.client }));
    const poll: PollPolicy = {
      ...DEFAULT_POLL,
      ...options.poll,
      maxMs: { ...DEFAULT_POLL.maxMs, ...options.poll?.maxMs },
    };
    this.lease = new QueueLease(this.store, options.leaseStaleMs);
    const writes = new WriteBatcher(this.store);
    const clock = options.clock ?? realClock;
    this.pacer = new Pacer(
      new PaceLimiter(options.db, {
        rates: options.rates,
        safetyMs: options.paceSafetyMs ?? PACE_SAFETY_MS,
        now: clock.now,
      }),
      {
        target: options.target,
        identity: options.identity,
        planTier: () => options.settings().planTier,
        clock,
        remember: (at) => this.store.setFlag(PACE_SCOPE_FLAG, JSON.stringify(at)),
      },
    );
    this.runner = new Runner({
      store: this.store,
      tools: this.tools,
      options,
      poll,
      lease: this.lease,
      writes,
      pacer: options.rates ? this.pacer : null,
    });
    this.planner = new BatchPlanner({
      store: this.store,
      options,
      settleGoneSandbox: () => this.runner.settleGoneSandbox(),
      kick: () => this.runner.kick(),
    });
    this.commands = new QueueCommands(
      this.store,
      this.runner,
      this.lease,
      () => (options.rates ? heldTools(this.pacer, this.store, this.runner.backendInUse) : []),
      () => this.pacer.team?.note ?? null,
    );
    this.events = new JobEvents(
      this.store,
      () => this.commands.status(),
      () => ({ serviceWait: this.commands.serviceWait(), heldBatches: this.runner.submitter.heldBatchIds() }),
    );
    this.sandboxOwners = { here: () => this.lease.owner, live: () => this.lease.liveHolder() };
  }

  // ---- lifecycle ---------------------------------------------------------------------------

  /** Starts driving the queue (or waits for the lease while another process holds it). */
  start(): void {
    if (this.runner.isRunning) return;
    this.runner.start();
    this.events.start(this.options.eventIntervalMs ?? EVENT_INTERVAL_MS);
  }

  /** Resolves when the loop has done all it will about the state of now (Runner.settled). */
  settled(): Promise<void> {
    return this.runner.settled();
  }

  /**
   * Stops without losing anything: downloads are aborted (their parts resume next time), but a
   * create already sent is awaited so its task_id is stored rather than left ambiguous.
   */
  async stop(): Promise<void> {
    this.events.stop();
    await this.runner.stop();
    this.events.emitChanges();
    this.lease.release();
    this.runner.poller.forgetAll();
  }

  /** Writes metadata and provenance into results, one exiftool for the engine; ended by stop(). */
  get resultMetadata(): ResultMetadata {
    return this.runner.downloads.metadata;
  }

  /** Whether running tasks of a collection are polled through its list (false while it does not answer). */
  listAnswers(listPath: string): boolean {
    return this.runner.poller.listAnswers(listPath);
  }

  get holdsQueue(): boolean {
    return this.lease.isHeld;
  }

  /** Whether another process that still lives holds the queue (a SIGKILLed one's lease row is no holder). */
  otherHolds(): boolean {
    return this.lease.otherHolds();
  }

  /** The backend of the live process that holds the queue, as it last said; null when none or unknown. */
  holderBackend(): string | null {
    return this.lease.holderBackend();
  }

  /** The backend batches started here are for (EngineOptions.identity); null when not told. */
  async identity(): Promise<string | null> {
    return this.options.identity ? this.options.identity() : null;
  }

  on(_event: 'jobs.changed', listener: JobsChangedListener): () => void {
    return this.events.on(listener);
  }

  // ---- commands ------------------------------------------------------------------------------

  /** Jobs by id as they stand (the Sandbox rule applied), for the CLI's progress and reports. */
  jobRows(ids: readonly string[]): JobRow[] {
    return this.commands.jobRows(ids);
  }

  /**
   * How many of `ids` are in each state, and the distinct errors of the queued ones: the CLI's
   * progress over a batch of any size, in memory by state, not by job.
   */
  stateCounts(ids: readonly string[]): { state: JobState; error: string | null; n: number }[] {
    return this.commands.stateCounts(ids);
  }

  /** Whether a job or app run of this data folder wrote `path`. */
  isResult(path: string): boolean {
    return this.store.isResult(path);
  }

  status(): QueueStatus {
    return this.commands.status();
  }

  /** The status once the backend and key in use are known, so a process that does not drive the queue says what holds it too. */
  async statusNow(): Promise<QueueStatus> {
    if (this.options.rates && !this.pacer.lastScope && this.store.counts().queued > 0) await this.pacer.scope();
    return this.commands.status();
  }

  pause(): QueueStatus {
    return this.commands.pause();
  }

  resume(): QueueStatus {
    return this.commands.resume();
  }

  listJobs(query: { batchId?: string; state?: JobState; limit: number; offset: number }): {
    jobs: JobRecord[];
    total: number;
  } {
    return this.commands.listJobs(query);
  }

  listBatches(limit = 50, offset = 0): BatchRecord[] {
    return this.commands.listBatches(limit, offset);
  }

  job(id: string): JobRecord {
    return this.commands.job(id);
  }

  cancelJob(id: string): JobRecord {
    return this.commands.cancelJob(id);
  }

  retryJob(id: string): JobRecord {
    return this.commands.retryJob(id);
  }

  cancelBatch(id: string): BatchRecord {
    return this.commands.cancelBatch(id);
  }

  retryBatch(id: string, states?: readonly RetryableState[]): BatchRecord {
    return this.commands.retryBatch(id, states);
  }

  /** Changes or removes a batch's budget; a batch its budget held goes on by itself when the new one allows. */
  setBudget(id: string, budget: BatchBudget | null): BatchRecord {
    const batch = this.store.batch(id);
    if (!batch) throw new DeskError('not_found', `no batch ${id}`);
    new BatchBudgets(this.store).set(id, budget, batch.estimate?.credits != null);
    this.runner.kick();
    return this.store.batch(id)!;
  }

  startBatch(req: StartRequest): Promise<BatchStartResult> {
    return this.planner.startBatch(req);
  }

  checkBatch(
    req: CheckRequest,
    onProgress?: (progress: { checkId: string; checked: number; total: number }) => void,
  ): Promise<BatchCheckResult> {
    return this.planner.checkBatch(req, onProgress);
  }
}

export const isActive = (state: JobState) => ACTIVE_STATES.includes(state);
