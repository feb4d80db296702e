import { randomUUID } from 'node:crypto';
import { getTool, type Slugs } from '../../../shared/catalogue/index.ts';
import { ApiError, placeTaken } from '../api/client.ts';
import { EnvelopeError, type TaskEnvelope } from '../api/tools.ts';
import { sha256Of } from '../batch/same-bytes.ts';
import {
  apiProblem,
  createRefused,
  heldBackReason,
  refusedReason,
  taskFailed,
  waitingMessage,
} from '../queue/job-messages.ts';
import type { JobState } from '../../../shared/contract/jobs.ts';
import { ATTENTION } from '../queue/job-messages.ts';
import type { JobPatch, JobRow } from '../queue/store.ts';
import { BatchBudgets } from '../limits/budget.ts';
import type { LoopContext } from './context.ts';
import type { Downloader } from './downloader.ts';
import type { FirstAsk, Poller } from './poller.ts';
import { isDayHold, waitMessage } from '../limits/limiter.ts';
import type { PaceScope } from '../limits/pacer.ts';
import { buildParams, PreflightError } from './request.ts';
import { Uploader } from './uploader.ts';

const HOUR_MS = 3_600_000;

/** The submit step: queued jobs sent as creates, within the concurrency limits and the server's backoff. */
export class Submitter {
  private readonly context: LoopContext;
  private readonly poller: Poller;
  private readonly downloads: Downloader;
  private backoffUntil = 0;
  /** Until when creates wait for a place in the service's rate windows (pacing; no server refused anything). */
  private pacedUntil = 0;
  /**
   * Why creates wait (heldBackReason), from a create the server provably did not take until one
   * gets an answer: unlike backoffUntil it stays set across the retries of one wait, so the Queue
   * says the wait once, and its end once.
   */
  private heldBackBy: string | null = null;
  /** What the queued jobs of a tool at its daily cap were told (waitMessage), by tool. */
  private readonly cappedSaid = new Map<string, string>();
  /** The same, for the queued jobs of a project whose team budget is spent, by project. */
  private readonly projectSaid = new Map<string, string>();
  /** Jobs picked here whose `submitting` is not committed yet (still `queued` on disk), with their tool. */
  private readonly preparing = new Map<string, string>();
  /** Creates in flight (their uploads too) by job id, with when each began: a server that does not answer is said while it lasts. */
  private readonly sending = new Map<string, number>();
  private readonly budgets: BatchBudgets;
  private readonly uploader: Uploader;

  constructor(context: LoopContext, poller: Poller, downloads: Downloader) {
    this.context = context;
    this.uploader = new Uploader(context.store.db, context.tools.api);
    this.budgets = new BatchBudgets(context.store);
    this.poller = poller;
    this.downloads = downloads;
  }

  /** Until when creates wait after the server refused one for now (0: no wait). */
  get rateLimitedUntil(): number {
    return this.backoffUntil;
  }

  /** Until when creates wait for a place in the rate windows (0: no wait). */
  get pacedFor(): number {
    return this.pacedUntil;
  }

  /** Creates picked whose pacing place is not taken yet: polls leave them those places (creates first). */
  get preparingCount(): number {
    return this.preparing.size;
  }

  /** Why creates wait, in a few words; null when they do not. */
  get serviceWait(): string | null {
    return this.heldBackBy;
  }

  /** Batches whose budget holds their creates (batches.held_by). */
  heldBatchIds(): string[] {
    return this.budgets.heldIds();
  }

  /** Since when the oldest create in flight (with its uploads) has waited; null when none is in flight. */
  get unansweredSince(): number | null {
    let oldest: number | null = null;
    for (const at of this.sending.values()) oldest = oldest === null ? at : Math.min(oldest, at);
    return oldest;
  }

  async submitQueued(): Promise<void> {
    const { store } = this.context;
    if (store.flag('paused') === '1' || this.context.clock.now() < Math.max(this.backoffUntil, this.pacedUntil)) return;
    const { global, perTool } = this.limits();
    const active = store.activeByTool();
    // They hold a slot already: uncounted, every tick before their commit started another round,
    // up to three times the concurrency in flight, each with its input in memory and its requests.
    for (const tool of this.preparing.values()) active.set(tool, (active.get(tool) ?? 0) + 1);
    let total = [...active.values()].reduce((sum, n) => sum + n, 0);
    if (total >= global) return;
    const backend = this.context.backendInUse();
    // Tools at their daily cap, re-checked every tick: their jobs wait, the other tools' go on.
    const capped = new Map<string, string>();
    // Projects whose team budget is spent: their batches wait, other projects' jobs of the same tool go on.
    const heldProjects = new Map<string, string>();
    const projectOf = new Map<string, string | null>();
    let pace: PaceScope | null = null;
    while (total < global) {
      // Jobs being prepared here are still `queued` on disk; read just past them, not the whole queue.
      const candidates = store.inStateFor(
        'queued',
        backend,
        global - total + this.preparing.size + 8,
        [...capped.keys()],
        [...this.budgets.heldIds(), ...[...heldProjects.keys()].flatMap((p) => store.queuedBatchesOfProject(p))],
      );
      if (candidates.length === 0) break;
      if (this.context.pacer && !pace) {
        pace = await this.context.pacer.scope();
        if (store.flag('paused') === '1') return;
      }
      const heldBefore = capped.size + heldProjects.size;
      for (const job of candidates) {
        if (total >= global) break;
        if (this.context.isBusy(job.id) || capped.has(job.tool)) continue;
        const cap = perTool[job.tool];
        if (cap !== undefined && (active.get(job.tool) ?? 0) >= cap) continue;
        if (!this.budgets.allows(job.batchId, this.preparing.keys())) continue;
        if (!projectOf.has(job.batchId)) projectOf.set(job.batchId, store.projectOf(job.batchId));
        const project = projectOf.get(job.batchId)!;
        if (project !== null && heldProjects.has(project)) continue;
        if (pace) {
          // Taken by submit() once the input is ready; here only what will fit is started.
          const grant = await this.context.pacer!.peek(
            pace,
            job.tool,
            this.preparing.size,
            this.preparingOf(job.tool),
            project,
          );
          if (!grant.go && grant.reason === 'project_budget' && project !== null) {
            heldProjects.set(project, grant.left === 0 ? waitMessage(grant) : '');
            continue;
          }
          if (!grant.go && isDayHold(grant.reason)) {
            capped.set(job.tool, grant.left === 0 ? waitMessage(grant, getTool(job.tool).title) : '');
            continue;
          }
          if (!grant.go) {
            this.pacedUntil = Math.max(this.pacedUntil, grant.resetsAt);
            break;
          }
        }
        // The peek awaited: the row may be stale by now, the job sent (or canceled) meanwhile.
        if (pace && !this.stillQueued(job)) continue;
        active.set(job.tool, (active.get(job.tool) ?? 0) + 1);
        total++;
        this.preparing.set(job.id, job.tool);
        this.context.run(job.id, () => this.submit(job, pace));
      }
      if (capped.size + heldProjects.size === heldBefore || this.context.clock.now() < this.pacedUntil) break;
    }
    this.sayHeld(capped, this.cappedSaid, (tool, error, was) => store.noteQueuedOfTool(tool, backend, error, was));
    this.sayHeld(heldProjects, this.projectSaid, (project, error, was) =>
      store.noteQueuedOfProject(project, backend, error, was),
    );
  }

  /**
   * Writes a held tool's (or project's) wait on its queued jobs, and takes it back from one no
   * longer held; `said` remembers what each was told, `note` writes it (the store's noteQueuedOf…).
   */
  private sayHeld(
    held: Map<string, string>,
    said: Map<string, string>,
    note: (key: string, error: string | null, was?: string | null) => void,
  ): void {
    for (const [key, was] of said)
      if (held.get(key) !== was && held.get(key) !== '') {
        note(key, null, was);
        said.delete(key);
      }
    for (const [key, message] of held) {
      if (message === '' || said.get(key) === message) continue;
      note(key, message);
      said.set(key, message);
    }
  }

  private limits(): { global: number; perTool: Record<string, number> } {
    const settings = this.context.options.settings();
    return { global: this.context.options.concurrency ?? settings.concurrency, perTool: settings.perToolConcurrency };
  }

  /** Whether the job is still queued on disk: a row read before an await may have been sent or canceled since. */
  private stillQueued(job: JobRow): boolean {
    return this.context.store.get(job.id)?.state === 'queued';
  }

  private preparingOf(tool: string): number {
    let n = 0;
    for (const t of this.preparing.values()) if (t === tool) n++;
    return n;
  }

  /**
   * The pacing grant, taken after the input is ready and just before `submitting` is committed, so
   * the request reaches the server right after it. On a wait nothing was written: the job stays queued.
   */
  private async paced(job: JobRow, pace: PaceScope | null): Promise<boolean> {
    if (!pace) return true;
    const grant = await this.context.pacer!.create(pace, job.tool, this.context.store.projectOf(job.batchId));
    if (grant.go) return true;
    // Past a rate: nothing more is sent until a place frees, so the server never says 429 to pacing.
    if (!isDayHold(grant.reason)) this.pacedUntil = Math.max(this.pacedUntil, grant.resetsAt);
    return false;
  }

  /**
   * One create. `submitting` (with a fresh attempt id) is committed before the request leaves, and
   * the task_id the moment the answer arrives: a crash in between is found at boot and put to the
   * user, never re-sent.
   */
  private async submit(job: JobRow, pace: PaceScope | null = null): Promise<void> {
    // Its uploads and its create: either may be what the service does not answer.
    this.sending.set(job.id, this.context.clock.now());
    try {
      await this.submitOne(job, pace);
    } finally {
      this.sending.delete(job.id);
    }
  }

  private async submitOne(job: JobRow, pace: PaceScope | null): Promise<void> {
    const { store, tools, options, write } = this.context;
    const tool = getTool(job.tool);
    const slugs = job.snapshot.slugs as Slugs;
    let params: Record<string, unknown>;
    let attempt: JobPatch;
    let sent: Promise<JobPatch> = Promise.resolve({});
    this.preparing.set(job.id, job.tool);
    try {
      try {
        // Picked for the backend of the last tick; if it changed since, the next tick picks again.
        if (options.identity && (await options.identity()) !== this.context.backendInUse()) return;
        const gate = options.beforeCreate ? await options.beforeCreate(job) : null;
        if (gate) {
          if ('wait' in gate && job.error === waitingMessage(gate.wait)) return;
          await write(() =>
            'wait' in gate
              ? store.patch(job.id, 'queued', { error: waitingMessage(gate.wait) })
              : store.move(job.id, 'queued', 'canceled', { error: gate.cancel }),
          );
          return;
        }
        // Uploads are recorded per backend (Uploader), and their request-url is paced as any request.
        const beforeRequest = async () => {
          const grant = pace ? await this.context.pacer!.request(pace) : null;
          if (grant && !grant.go) throw new PacedWait(grant.resetsAt);
        };
        const upload = (bytes: Buffer, type: string) =>
          this.uploader.assetUrl(this.context.backendInUse(), bytes, type, beforeRequest);
        params = await buildParams(tool, job.params, job.inputPath, upload, (bytes) => {
          // What the result is made from, so a later drop of the same photo is known by it (samePhoto);
          // if hashing fails, such a job is compared by reading both files, as jobs from before schema 5 are.
          sent = sha256Of(bytes).then(
            (sha) => ({ inputSize: bytes.length, inputSha256: sha }),
            () => ({}),
          );
        });
      } catch (err) {
        if (err instanceof PacedWait) {
          // The upload waits for a place in the rate windows; nothing was sent and the job stays queued.
          this.pacedUntil = Math.max(this.pacedUntil, err.resetsAt);
          return;
        }
        if (err instanceof PreflightError) {
          // Through submitting, so the state machine's one path to failed is kept; nothing was sent.
          await write(() => {
            if (store.move(job.id, 'queued', 'submitting', {}))
              store.move(job.id, 'submitting', 'failed', { error: err.message, invalid: err.invalid });
          });
          return;
        }
        // An upload failed for now or the backend is unreachable: nothing was paid; the job says
        // why it waits (the Queue, `mediadesk jobs`) and is tried again shortly.
        this.backoff(
          err instanceof ApiError ? err.retryAfterSec : undefined,
          heldBackReason(err instanceof ApiError ? err : null),
        );
        const reason = err instanceof ApiError ? refusedReason(err) : messageOf(err);
        await write(() => store.patch(job.id, 'queued', { error: waitingMessage(reason) }));
        return;
      }
      // On the built-in Sandbox the task lives in this process's: recorded, so that once this process
      // no longer holds the queue, every reader knows the task is gone (JobStore.requeueGoneSandbox).
      attempt = {
        attemptId: randomUUID(),
        attempts: job.attempts + 1,
        error: null,
        invalid: null,
        sandboxOf: this.context.backendInUse() === 'sandbox' ? this.context.lease.owner : null,
        ...(await sent),
      };
      // Canceled while its input was read or uploaded: no create's place is taken for it.
      if (!this.stillQueued(job) || !(await this.paced(job, pace))) return;
      // Committed before the request leaves (write() resolves after the commit).
      if (!(await write(() => store.move(job.id, 'queued', 'submitting', attempt)))) return;
    } finally {
      this.preparing.delete(job.id);
    }
    let envelope: TaskEnvelope;
    try {
      // Its place was taken above (paced): the client's own pacing must not count it twice.
      envelope = await placeTaken(() => tools.create(job.tool, slugs, params));
    } catch (err) {
      await this.onCreateError(job, err);
      return;
    }
    this.serverAnswered();
    const now = this.context.clock.now();
    const base = {
      taskId: envelope.taskId,
      submittedAt: now,
      expiresAt: tool.resultTtlHours ? now + tool.resultTtlHours * HOUR_MS : null,
    };
    let to: JobState;
    let patch: JobPatch;
    let first: FirstAsk | null = null;
    if (envelope.status === 'COMPLETED' && envelope.generated?.length)
      [to, patch] = ['downloading', { ...base, generated: envelope.generated }];
    else if (envelope.status === 'FAILED') [to, patch] = ['failed', { ...base, error: taskFailed(envelope.error) }];
    else {
      first = this.poller.firstAsk(job.tool, now);
      [to, patch] = ['running', { ...base, nextPollAt: first?.at ?? now + this.context.poll.firstMs }];
    }
    const moved = await write(() => {
      if (store.move(job.id, 'submitting', to, patch)) return true;
      // Canceled while the create was in flight: keep the task id so the user can find the charge.
      const current = store.get(job.id);
      if (current) store.patch(job.id, current.state, { taskId: envelope.taskId });
      return false;
    });
    if (!moved) return;
    // The row as just committed, without reading it back.
    const row = { ...job, ...attempt, ...patch, state: to, invalid: [], error: patch.error ?? null } as JobRow;
    if (row.state === 'running') this.poller.track(row, first);
    else if (row.state === 'downloading') this.downloads.start(row);
  }

  private async onCreateError(job: JobRow, err: unknown): Promise<void> {
    const { store, write } = this.context;
    if (
      err instanceof ApiError &&
      !err.mayHaveReachedServer &&
      (err.status === 429 || err.status === 503 || err.kind !== 'http')
    ) {
      // Provably not processed: requeue. A 429 whose reset is further off than any rate window is
      // a daily limit: the limiter holds that tool until then (a learned cap), the others go on;
      // else submissions pause instead of hammering.
      if (!this.learnDailyLimit(job.tool, err)) this.backoff(err.retryAfterSec, heldBackReason(err));
      await write(() => store.move(job.id, 'submitting', 'queued', { error: waitingMessage(refusedReason(err)) }));
      return;
    }
    // The server took it or turned it down for good: the queue no longer waits for it.
    this.serverAnswered();
    if (err instanceof ApiError && err.kind === 'http' && err.status! >= 400 && err.status! < 500) {
      await write(() =>
        store.move(job.id, 'submitting', 'failed', { error: createRefused(err), invalid: err.invalidParams }),
      );
    } else {
      const detail = err instanceof ApiError ? apiProblem(err) : envelopeDetail(err);
      await write(() =>
        store.move(job.id, 'submitting', 'needs_attention', { error: ATTENTION.ambiguousCreate(detail) }),
      );
    }
  }

  private learnDailyLimit(tool: string, err: ApiError): boolean {
    const { pacer } = this.context;
    const at = pacer?.lastScope;
    if (!pacer || !at || err.status !== 429 || err.retryAfterSec === undefined) return false;
    const r = pacer.limiter.rates;
    if (err.retryAfterSec <= Math.max(r.burstWindowSec, r.averageWindowSec)) return false;
    pacer.limiter.learnCap(at.scope, tool, pacer.limiter.now() + err.retryAfterSec * 1000);
    return true;
  }

  private backoff(retryAfterSec: number | undefined, why: string): void {
    this.heldBackBy ??= why;
    this.backoffUntil = Math.max(
      this.backoffUntil,
      this.context.clock.now() +
        (retryAfterSec !== undefined ? retryAfterSec * 1000 : (this.context.options.defaultBackoffMs ?? 2000)),
    );
  }

  /** A create got an answer: the wait is over, unless a refusal since put it off (creates sent together). */
  private serverAnswered(): void {
    if (this.context.clock.now() >= this.backoffUntil) this.heldBackBy = null;
  }
}

/** An upload's request-url would pass the service's rate: it waits until `resetsAt`. */
class PacedWait extends Error {
  readonly resetsAt: number;
  constructor(resetsAt: number) {
    super('waiting for a place in the rate windows');
    this.resetsAt = resetsAt;
  }
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));
const envelopeDetail = (err: unknown) => (err instanceof EnvelopeError ? err.message : String(err));
