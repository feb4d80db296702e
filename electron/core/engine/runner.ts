import type { ToolClient } from '../api/tools.ts';
import type { Pacer } from '../limits/pacer.ts';
import { SANDBOX_GONE } from '../queue/job-messages.ts';
import { ATTENTION } from '../queue/job-messages.ts';
import { REQUEUE_FRESH } from '../queue/states.ts';
import type { JobStore } from '../queue/store.ts';
import { onBuiltInSandbox, type LoopContext } from './context.ts';
import { Downloader } from './downloader.ts';
import { HEARTBEAT_MS, type QueueLease } from './lease.ts';
import type { EngineOptions } from './options.ts';
import type { PollPolicy } from './poll-policy.ts';
import { Poller } from './poller.ts';
import { Submitter } from './submitter.ts';
import type { WriteBatcher } from './write-batcher.ts';
import { realClock, type Clock, type ClockTimer } from '../clock.ts';

const RECONCILE_MS = 1500;
/** Longest wait between ticks when no poll falls due sooner. */
const IDLE_TICK_MS = 1000;
const MIN_TICK_MS = 5;

export interface RunnerParts {
  store: JobStore;
  tools: ToolClient;
  options: EngineOptions;
  poll: PollPolicy;
  lease: QueueLease;
  writes: WriteBatcher;
  pacer: Pacer | null;
}

/** The loop: while this process holds the lease, each tick submits queued jobs, polls running ones and downloads results. */
export class Runner {
  readonly submitter: Submitter;
  readonly poller: Poller;
  readonly downloads: Downloader;
  /** The time the loop waits on and polls and paces by (EngineOptions.clock); the lease keeps real time. */
  readonly clock: Clock;
  private readonly store: JobStore;
  private readonly options: EngineOptions;
  private readonly lease: QueueLease;
  private readonly tools: ToolClient;
  /** The step each job is in (submit or download), at most one per job. */
  private readonly busy = new Map<string, Promise<void>>();
  private timer: ClockTimer | null = null;
  private running = false;
  private stopping = false;
  private lastReconcile = 0;
  /** The backend in use at the last tick (EngineOptions.identity); null when not told. */
  private backend: string | null = null;
  /** Called at the end of the next tick that starts after they were added (settled()). */
  private tickWaiters: (() => void)[] = [];
  /** A tick is running: a timer that fires meanwhile asks for another after it, never a second at once. */
  private ticking = false;
  private tickAgain = false;

  constructor(parts: RunnerParts) {
    this.store = parts.store;
    this.options = parts.options;
    this.lease = parts.lease;
    this.tools = parts.tools;
    this.clock = parts.options.clock ?? realClock;
    const context: LoopContext = {
      store: parts.store,
      tools: parts.tools,
      options: parts.options,
      poll: parts.poll,
      clock: this.clock,
      lease: parts.lease,
      write: (fn) => parts.writes.write(fn),
      run: (jobId, step) => this.run(jobId, step),
      isBusy: (jobId) => this.busy.has(jobId),
      kick: () => this.kick(),
      backendInUse: () => this.backend,
      pacer: parts.pacer,
      createsPending: () => this.submitter.preparingCount,
    };
    this.downloads = new Downloader(context);
    this.poller = new Poller(context, this.downloads);
    this.submitter = new Submitter(context, this.poller, this.downloads);
  }

  /** The backend in use at the last tick; null when not told. */
  get backendInUse(): string | null {
    return this.backend;
  }

  get isRunning(): boolean {
    return this.running;
  }

  start(): void {
    this.running = true;
    this.stopping = false;
    this.schedule(0);
  }

  /** Stops ticking and waits for the steps in flight; downloads are aborted, creates already sent are awaited. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.running = false;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    for (const w of this.tickWaiters.splice(0)) w();
    this.downloads.abortAll();
    // Polls in flight are free to ask again next time: a server that does not answer must not hold the stop.
    this.tools.api.abortReads();
    await Promise.allSettled([...this.busy.values()]);
    await this.downloads.endMetadata();
  }

  kick(): void {
    if (this.running) this.schedule(0);
  }

  /**
   * Resolves once a whole tick that began after the call ended with no step in flight: the loop
   * has done all it will about the state of now. Tests wait on this, not on time, to show that
   * something did not happen.
   */
  async settled(): Promise<void> {
    for (;;) {
      if (this.running)
        await new Promise<void>((resolve) => {
          this.tickWaiters.push(resolve);
          this.kick();
        });
      if (this.busy.size === 0) return;
      await Promise.allSettled([...this.busy.values()]);
    }
  }

  /** Picks up jobs moved by other processes at the next tick. */
  reconcileSoon(): void {
    this.lastReconcile = 0;
  }

  /**
   * Applied before every read of job states (the loop, the Queue's commands, the CLI): a job whose
   * task was in a built-in Sandbox that ended with its process is queued again, its part files
   * removed (JobStore.requeueGoneSandbox). Any process does it, holding the queue or not.
   */
  settleGoneSandbox(): void {
    for (const job of this.store.requeueGoneSandbox(SANDBOX_GONE, this.lease.staleMs))
      void this.downloads.removeParts(job);
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = this.clock.setTimeout(() => void this.tick(), ms);
  }

  private async tick(): Promise<void> {
    this.timer = null;
    if (!this.running) return;
    // Two at once would both pick a job whose pacing grant is still being asked for, and pay a grant twice.
    if (this.ticking) {
      this.tickAgain = true;
      return;
    }
    this.ticking = true;
    const waiters = this.tickWaiters.splice(0);
    try {
      await this.tickOnce();
    } finally {
      this.ticking = false;
      for (const w of waiters) w();
      if (this.tickAgain) {
        this.tickAgain = false;
        this.schedule(0);
      }
    }
  }

  private async tickOnce(): Promise<void> {
    const now = Date.now();
    try {
      const beat = this.lease.heartbeat(now);
      if (beat === 'gained') {
        // Newly the holder: announce our backend again (learnBackend), whoever held the queue meanwhile.
        this.backend = null;
        await this.recover();
      } else if (beat === 'lost' || beat === 'waiting') {
        if (beat === 'lost') this.abandon();
        return this.schedule(HEARTBEAT_MS / 2);
      }
      await this.learnBackend();
      if (now - this.lastReconcile > RECONCILE_MS) this.reconcile();
      if (!this.stopping) await this.submitter.submitQueued();
      await this.poller.pollDue();
    } catch (err) {
      // A failure of one tick (disk full, locked DB) must not stop the queue; it is retried.
      this.failed((err as Error).message);
    }
    // A paced wait for a place in the rate's window ends the idle wait when it frees.
    const paced = this.submitter.pacedFor - this.clock.now();
    const idle = paced > 0 ? Math.min(IDLE_TICK_MS, paced) : IDLE_TICK_MS;
    this.schedule(Math.max(MIN_TICK_MS, this.poller.msUntilDue(idle)));
  }

  /**
   * Which backend is in use now. After a switch, the jobs tracked for the old one stop being
   * polled here (their task ids mean nothing on the new one) and the new one's are picked up.
   */
  private async learnBackend(): Promise<void> {
    if (!this.options.identity) return;
    const backend = await this.options.identity();
    if (backend === this.backend) return;
    const previous = this.backend;
    this.backend = backend;
    this.store.adoptUnowned(backend);
    this.lease.announceBackend(backend);
    if (previous !== null) {
      this.poller.forgetAll();
      this.lastReconcile = 0;
    }
  }

  /** Boot after a crash or kill: each job continues from its stored state. */
  private async recover(): Promise<void> {
    // Before anything is tracked: another process's Sandbox, and its tasks, ended with it.
    this.settleGoneSandbox();
    for (const job of this.store.inState('submitting')) {
      // The create may have reached the server: never send it again without the user. Except on the
      // built-in Sandbox, which stopped with the process that was sending it, and is free.
      if (onBuiltInSandbox(this.store, job)) this.store.move(job.id, 'submitting', 'queued', REQUEUE_FRESH);
      else this.store.move(job.id, 'submitting', 'needs_attention', { error: ATTENTION.interruptedSubmit });
    }
    await this.downloads.removeStaleParts();
    this.lastReconcile = 0;
  }

  /** Another process took the queue (we stalled): stop acting on its jobs. */
  private abandon(): void {
    this.downloads.abortAll();
    this.poller.forgetAll();
  }

  /** Picks up jobs moved by other processes (retry from the CLI) and running jobs after boot. */
  private reconcile(): void {
    this.lastReconcile = Date.now();
    for (const job of this.store.inStateFor('running', this.backend))
      if (!this.poller.isTracked(job.id) && !this.busy.has(job.id)) this.poller.track(job);
    // Downloads go on whatever the backend: result URLs are absolute and lapse.
    for (const job of this.store.inState('downloading')) if (!this.busy.has(job.id)) this.downloads.start(job);
    this.poller.forgetSettled();
  }

  private failed(message: string): void {
    (this.options.error ?? ((m) => console.error(`mediadesk engine: ${m}`)))(message);
  }

  private run(jobId: string, step: () => Promise<void>): void {
    const done = step()
      .catch((err) => this.failed(`job ${jobId}: ${(err as Error).stack ?? err}`))
      .finally(() => {
        this.busy.delete(jobId);
        this.kick();
      });
    this.busy.set(jobId, done);
  }
}
