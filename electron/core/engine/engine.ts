import { randomUUID } from 'node:crypto';
import {
  getTool,
  isLocalPath,
  resolvePaths,
  TOOLS,
  validateRequest,
  type Slugs,
  type ToolEntry,
} from '../../../shared/catalogue/index.ts';
import type {
  BatchCheckResult,
  BatchRecord,
  BatchStartResult,
  JobRecord,
  JobsChanged,
  QueueStatus,
} from '../../../shared/contract/jobs.ts';
import { DeskError } from '../../../shared/contract/define.ts';
import { DEFAULT_SETTINGS, isAbsolutePath, type Settings } from '../../../shared/settings.ts';
import { ApiClient, ApiError, type ApiTarget, type ClientOptions } from '../api/client.ts';
import { EnvelopeError, ToolClient, type TaskEnvelope } from '../api/tools.ts';
import { acceptsExtension, checkInput, inputCheckOf } from '../batch/preflight.ts';
import { mapLimit, throttled } from '../../../shared/concurrency.ts';
import { scanInputs, type ScannedInput } from '../batch/scan.ts';
import { fileDigest, samePhoto, sha256Of } from '../batch/same-bytes.ts';
import { canonicalPath } from '../paths.ts';
import { fromAnotherSandbox } from '../backend.ts';
import type { Db } from '../db/open.ts';
import { exists, removeQuietly } from '../downloads/download.ts';
import { assertOutputFolder, outputFolderProblem } from '../output-folder.ts';
import {
  KIND_EXTS,
  outputDirOf,
  partPathOf,
  renderName,
  resultNameReader,
  resultPathProblem,
  stemOf,
} from '../downloads/naming.ts';
import { ACTIVE_STATES, ATTENTION, REQUEUE_FRESH, type JobState } from '../queue/states.ts';
import {
  apiProblem,
  canceledMessage,
  createRefused,
  downloadFailed,
  heldBackReason,
  refusedReason,
  SANDBOX_GONE,
  taskFailed,
  waitingMessage,
} from '../queue/job-messages.ts';
import { JobStore, toJobRecord, type DoneOutputs, type JobPatch, type JobRow, type NewJob } from '../queue/store.ts';
import { DEFAULT_POLL, nextPollDelay, type PollPolicy } from './poll-policy.ts';
import {
  batchFieldOf,
  buildParams,
  isLoopback,
  localFileProblem,
  localMediaFields,
  placeholderFor,
  PreflightError,
  withPlaceholders,
} from './request.ts';
import { checkReferences, framesOf, isProbeable, named, type NamedSource } from '../media/check.ts';
import { sniffAudio } from '../media/probe.ts';
import { familyOfTool, FAMILY_LIMITS, type FamilyLimits } from '../../../shared/validation/limits.ts';
import { fetchResults, JobMovedError } from './results.ts';
import { sameFileKey } from '../../../shared/file-names.ts';
import { join, sep } from 'node:path';

export interface EngineOptions {
  db: Db;
  target: () => Promise<ApiTarget>;
  slugs: () => Slugs;
  settings: () => Settings;
  /**
   * Backend.identity(): batches are tagged with it, and only jobs of batches for the backend in use
   * are submitted and polled. Absent (benchmarks, tests of the queue alone): nothing is tagged.
   */
  identity?: () => Promise<string>;
  /** Backend.builtInSandboxUrl(): this process's built-in Sandbox, null when it has not started one. */
  builtInSandboxUrl?: () => Promise<string | null>;
  /** Overrides settings.concurrency (CLI --concurrency, benchmarks). */
  concurrency?: number;
  poll?: Partial<PollPolicy>;
  client?: ClientOptions;
  /** Throttle of `jobs.changed` events. */
  eventIntervalMs?: number;
  /** A holder of the queue that stopped heart-beating this long ago is presumed dead. */
  leaseStaleMs?: number;
  downloadAttempts?: number;
  /** How long expired result links are waited for (FetchDeps.expiredPatienceMs); default: the results' lifetime. */
  expiredPatienceMs?: number;
  /** Pause after a create was rate limited and the server named no Retry-After. */
  defaultBackoffMs?: number;
  /** Whose path rules results keep (process.platform; see resultPathProblem): tests pass win32. */
  platform?: string;
}

type Listener = (e: JobsChanged) => void;

/** A check's progress at most every 200 ms, and its last count: thousands of files, not thousands of events. */
const CHECK_PROGRESS_MS = 200;

/** queue_flags key: the backend of the lease holder (Backend.identity). */
const HOLDER_BACKEND = 'holder_backend';

interface Inflight {
  jobId: string;
  tool: string;
  taskId: string;
  listPath: string;
  params: Record<string, unknown>;
  submittedAt: number;
  nextPollAt: number;
  /** The job as stored when tracking began (saves a re-read when its results arrive). */
  row: JobRow;
}

interface PendingWrite {
  fn: () => unknown;
  resolve: (v: unknown) => void;
  reject: (err: unknown) => void;
}

const HEARTBEAT_MS = 2000;
const RECONCILE_MS = 1500;
const LEASE_STALE_MS = 10_000;

/**
 * The engine: one durable queue in SQLite, driven by whichever process holds the lease. Each job
 * moves through its state machine by compare-and-set updates, so what is on disk is always the
 * truth and any process can be killed at any point.
 */
export class Engine {
  readonly store: JobStore;
  readonly tools: ToolClient;
  private readonly o: EngineOptions;
  private readonly owner = randomUUID();
  private readonly poll: PollPolicy;
  private readonly listeners = new Set<Listener>();
  /** Running batches.check calls by checkId: a newer one stops the older. */
  private readonly checks = new Map<string, AbortController>();
  private readonly polling = new Map<string, Inflight>();
  private readonly busy = new Map<string, Promise<void>>();
  private readonly aborts = new Map<string, AbortController>();
  private readonly groupsInFlight = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private eventTimer: NodeJS.Timeout | null = null;
  private running = false;
  private leased = false;
  private stopping = false;
  private lastHeartbeat = 0;
  private lastReconcile = 0;
  /** The backend in use at the last tick (EngineOptions.identity); null when not told. */
  private here: string | null = null;
  private eventCursor = 0;
  private readonly sentAtCursor = new Set<string>();
  private rateLimitedUntil = 0;
  /**
   * Why creates wait (heldBackReason), from a create the server provably did not take until one
   * gets an answer: unlike rateLimitedUntil it stays set across the retries of one wait, so the
   * Queue says the wait once, and its end once.
   */
  private heldBack: string | null = null;
  /**
   * Jobs picked for submission here whose `submitting` is not committed yet, with their tool. On
   * disk they are still `queued`, so activeByTool does not count them: submitQueued does.
   */
  private readonly preparing = new Map<string, string>();
  private pendingWrites: PendingWrite[] = [];
  private writeScheduled = false;

  constructor(o: EngineOptions) {
    this.o = o;
    this.store = new JobStore(o.db);
    this.tools = new ToolClient(new ApiClient(o.target, o.client));
    this.poll = { ...DEFAULT_POLL, ...o.poll, maxMs: { ...DEFAULT_POLL.maxMs, ...o.poll?.maxMs } };
  }

  // ---- lifecycle ---------------------------------------------------------------------------

  /** Starts driving the queue (or waits for the lease while another process holds it). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = false;
    this.eventCursor = Date.now();
    this.schedule(0);
    this.eventTimer = setInterval(() => this.emitChanges(), this.o.eventIntervalMs ?? 250);
    this.eventTimer.unref?.();
  }

  /**
   * Stops without losing anything: downloads are aborted (their parts resume next time), but a
   * create already sent is awaited so its task_id is stored rather than left ambiguous.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    if (this.eventTimer) clearInterval(this.eventTimer);
    this.timer = this.eventTimer = null;
    for (const a of this.aborts.values()) a.abort();
    await Promise.allSettled([...this.busy.values()]);
    this.emitChanges();
    if (this.leased) this.store.releaseLease(this.owner);
    this.leased = false;
    this.polling.clear();
  }

  get holdsQueue(): boolean {
    return this.leased;
  }

  private get leaseStaleMs(): number {
    return this.o.leaseStaleMs ?? LEASE_STALE_MS;
  }

  /**
   * Applied before every read of job states (here, the Queue's commands, the CLI): a job whose
   * task was in a built-in Sandbox that has ended with its process is queued again, its part
   * files removed (JobStore.requeueGoneSandbox). Any process does it, holding the queue or not.
   */
  private settleGoneSandbox(): void {
    for (const j of this.store.requeueGoneSandbox(SANDBOX_GONE, this.leaseStaleMs)) void this.removeParts(j);
  }

  /**
   * Who may hold live work on a built-in Sandbox: this process's queue owner (recorded on what it
   * sends to its Sandbox) and, now, the live holder of the queue (JobStore.liveHolder). For app runs.
   */
  readonly sandboxOwners = { here: () => this.owner, live: () => this.store.liveHolder(this.leaseStaleMs) };

  /** Jobs by id as they stand (the Sandbox rule applied), for the CLI's progress and reports. */
  jobRows(ids: readonly string[]): JobRow[] {
    this.settleGoneSandbox();
    return this.store.byIds(ids);
  }

  /** The backend batches started here are for (EngineOptions.identity); null when not told. */
  async identity(): Promise<string | null> {
    return this.o.identity ? this.o.identity() : null;
  }

  /** Whether another process that still lives holds the queue (a SIGKILLed one's lease row is no holder). */
  otherHolds(): boolean {
    return !this.leased && this.store.liveHolder(this.leaseStaleMs) !== null;
  }

  /** The backend of the live process that holds the queue, as it last said; null when none or unknown. */
  holderBackend(): string | null {
    return this.store.liveHolder(this.leaseStaleMs) ? this.store.flag(HOLDER_BACKEND) : null;
  }

  on(_event: 'jobs.changed', fn: Listener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /**
   * A job's state change, committed with every other change requested in the same event-loop
   * turn in one transaction (one commit per turn instead of one per change). The promise settles
   * after the commit, and callers act (send a create, write a file) only then, so the rule stands:
   * what is on disk is the truth before anything it describes happens. Each change is still a
   * compare-and-set; its own result (moved or not) is what the promise gives.
   */
  private write<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pendingWrites.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (!this.writeScheduled) {
        this.writeScheduled = true;
        setImmediate(() => this.flushWrites());
      }
    });
  }

  private flushWrites(): void {
    this.writeScheduled = false;
    const batch = this.pendingWrites;
    this.pendingWrites = [];
    if (batch.length === 0) return;
    const results: { ok: boolean; v: unknown }[] = [];
    try {
      this.store.transaction(() => {
        for (const w of batch) {
          try {
            results.push({ ok: true, v: w.fn() });
          } catch (err) {
            // One failing statement is rolled back alone; the others still commit.
            results.push({ ok: false, v: err });
          }
        }
      }, true);
    } catch (err) {
      // The commit itself failed (disk full, lock timeout): nothing of the batch was written.
      for (const w of batch) w.reject(err);
      return;
    }
    batch.forEach((w, i) => (results[i].ok ? w.resolve(results[i].v) : w.reject(results[i].v)));
  }

  // ---- commands ------------------------------------------------------------------------------

  status(): QueueStatus {
    this.settleGoneSandbox();
    const until = this.rateLimitedUntil > Date.now() ? this.rateLimitedUntil : null;
    const counts = this.store.counts();
    // Nothing left to send (the user canceled what waited): nothing waits.
    const heldBack = (counts.queued ?? 0) + (counts.submitting ?? 0) > 0 ? this.heldBack : null;
    return {
      paused: this.store.flag('paused') === '1',
      rateLimitedUntil: until,
      heldBack,
      running: this.leased,
      counts,
    };
  }

  pause(): QueueStatus {
    this.store.setFlag('paused', '1');
    return this.status();
  }

  resume(): QueueStatus {
    this.store.setFlag('paused', null);
    this.kick();
    return this.status();
  }

  listJobs(q: { batchId?: string; state?: JobState; limit: number; offset: number }): {
    jobs: JobRecord[];
    total: number;
  } {
    this.settleGoneSandbox();
    const r = this.store.list(q);
    return { jobs: r.jobs.map(toJobRecord), total: r.total };
  }

  listBatches(limit = 50, offset = 0): BatchRecord[] {
    this.settleGoneSandbox();
    return this.store.batches(limit, offset);
  }

  job(id: string): JobRecord {
    this.settleGoneSandbox();
    const j = this.store.get(id);
    if (!j) throw new DeskError('not_found', `no job ${id}`);
    return toJobRecord(j);
  }

  cancelJob(id: string): JobRecord {
    this.settleGoneSandbox();
    const j = this.store.get(id);
    if (!j) throw new DeskError('not_found', `no job ${id}`);
    if (j.state === 'done' || j.state === 'canceled')
      throw new DeskError('conflict', `job ${id} is ${j.state}; there is nothing to cancel`);
    // A task already sent keeps running on the server (the API has no cancel); we stop waiting for it.
    let submitted: boolean | 'maybe' = !!j.taskId;
    if (!submitted && (j.state === 'needs_attention' || j.state === 'submitting')) submitted = 'maybe';
    // The attempt id stays only on a job whose create may have reached the server: its Retry asks
    // first (retryJob). One never sent, or provably refused (429, 503), forgets it.
    const patch = { error: canceledMessage(submitted), ...(submitted === false && { attemptId: null }) };
    if (!this.store.move(id, j.state, 'canceled', patch)) return this.cancelJob(id);
    this.aborts.get(id)?.abort();
    this.polling.delete(id);
    void this.removeParts(this.store.get(id)!);
    return this.job(id);
  }

  /**
   * Retry is always the user's act. A task already paid for is never sent again: with its results
   * known it goes back to downloading, still running on the server it goes back to polling; only a
   * task that failed, was never created, or may not exist is submitted anew.
   */
  retryJob(id: string): JobRecord {
    this.settleGoneSandbox();
    const j = this.store.get(id);
    if (!j) throw new DeskError('not_found', `no job ${id}`);
    if (!['failed', 'canceled', 'needs_attention'].includes(j.state))
      throw new DeskError(
        'conflict',
        `job ${id} is ${j.state}; only failed, canceled or needs-attention jobs can be retried`,
      );
    let ok: boolean;
    // Canceled when its create may have reached the server (it needed you, or was being sent): a
    // Retry, or a batch's Retry failed, puts it back where the user is asked, never sends it again
    // unasked. From there, its own Retry (may be charged again) sends it.
    if (j.state === 'canceled' && !j.taskId && j.attemptId)
      ok = this.store.move(id, j.state, 'needs_attention', { error: ATTENTION.canceledMaybeSent });
    else if (j.taskId && j.generated?.length)
      ok = this.store.move(id, j.state, 'downloading', { error: null, invalid: null, outputs: [], planned: null });
    else if (j.taskId && j.state === 'canceled')
      ok = this.store.move(id, j.state, 'running', { error: null, nextPollAt: Date.now() });
    else ok = this.store.move(id, j.state, 'queued', REQUEUE_FRESH);
    if (!ok) throw new DeskError('conflict', `job ${id} changed while retrying; try again`);
    this.lastReconcile = 0;
    this.kick();
    return this.job(id);
  }

  cancelBatch(id: string): BatchRecord {
    if (!this.store.batch(id)) throw new DeskError('not_found', `no batch ${id}`);
    // Failed jobs are finished: they keep the server's reason, and Retry failed stays theirs.
    for (const s of ['queued', 'submitting', 'running', 'downloading', 'needs_attention'] as const) {
      for (const j of this.store.list({ batchId: id, state: s, limit: 1_000_000, offset: 0 }).jobs) {
        try {
          this.cancelJob(j.id);
        } catch {
          // finished meanwhile
        }
      }
    }
    return this.store.batch(id)!;
  }

  retryBatch(
    id: string,
    states: readonly ('failed' | 'canceled' | 'needs_attention')[] = ['failed', 'canceled', 'needs_attention'],
  ): BatchRecord {
    if (!this.store.batch(id)) throw new DeskError('not_found', `no batch ${id}`);
    for (const s of states) {
      for (const j of this.store.list({ batchId: id, state: s, limit: 1_000_000, offset: 0 }).jobs) {
        try {
          this.retryJob(j.id);
        } catch {
          // moved meanwhile
        }
      }
    }
    return this.store.batch(id)!;
  }

  /**
   * Queues a tool over files and folders. Everything that can be checked locally is checked here,
   * before anything is paid for: parameters against the catalogue, each input's format, size and
   * dimensions. Inputs whose output exists are skipped; inputs with an unfinished job of an earlier
   * run are resumed, never queued twice.
   */
  async startBatch(req: {
    tool: string;
    inputs?: string[];
    params?: Record<string, unknown>;
    outDir?: string;
  }): Promise<BatchStartResult> {
    let tool: ToolEntry;
    try {
      tool = getTool(req.tool);
    } catch (err) {
      throw new DeskError('invalid', (err as Error).message);
    }
    const settings = this.o.settings();
    // The batch belongs to the backend in use now; an open job of another backend's batch is not followed.
    const backend = this.o.identity ? await this.o.identity() : null;
    // Jobs it resumes are reported as they stand.
    this.settleGoneSandbox();
    const outDirRaw = req.outDir ?? settings.outputDir;
    if (!outDirRaw)
      throw new DeskError('invalid', 'choose an output folder (or set one in Settings)', [
        { field: 'outDir', reason: 'is required' },
      ]);
    // The CLI resolves its --out against the shell's folder; the app's processes have no folder a user would mean.
    if (!isAbsolutePath(outDirRaw))
      throw new DeskError('invalid', `output folder: ${outDirRaw} is not a full path`, [
        { field: 'outDir', reason: 'must be a full path' },
      ]);
    const outDir = await canonicalPath(outDirRaw);
    assertOutputFolder(outDir);
    const params = { ...(req.params ?? {}) };
    // Canonical, as outDir: the open-job and output checks compare paths as strings.
    const inputs = await Promise.all((req.inputs ?? []).map((i) => canonicalPath(i)));
    const field = batchFieldOf(tool);
    if (inputs.length && !field)
      throw new DeskError('invalid', `${tool.title} takes no input files; give its parameters only`);
    await this.assertParams(tool, params, inputs.length > 0);
    if (
      field &&
      inputs.length &&
      !field.encodings.includes('base64') &&
      !field.encodings.includes('dataUri') &&
      !isLoopback((await this.o.target()).baseUrl)
    ) {
      throw new DeskError(
        'invalid',
        `${tool.title} takes ${field.name} only as an HTTPS URL; local files can be sent only to the Sandbox`,
      );
    }

    const skipped: { path: string; reason: string }[] = [];
    const resumed: string[] = [];
    const newJobs: NewJob[] = [];
    const rejected: { path: string; reason: string }[] = [];
    if (field && inputs.length) {
      const sorted = await this.sortInputs(tool, inputs, outDir, backend, settings);
      skipped.push(...sorted.skipped);
      rejected.push(...sorted.rejected);
      resumed.push(...sorted.resumed);
      for (const input of sorted.ready)
        newJobs.push({ id: randomUUID(), inputPath: input.path, relDir: input.relDir, params });
    } else {
      const tooLong = this.resultPathProblem(tool, settings.namingTemplate, outDir, '', null);
      if (tooLong)
        throw new DeskError('invalid', `output folder: its results cannot be written: ${tooLong}`, [
          { field: 'outDir', reason: tooLong },
        ]);
      newJobs.push({ id: randomUUID(), inputPath: null, relDir: '', params });
    }
    if (field && inputs.length && newJobs.length === 0 && resumed.length === 0) {
      // Nothing to run: no batch, so the queue does not fill with empty ones.
      if (!skipped.length && !rejected.length)
        throw new DeskError(
          'invalid',
          `no files to process: ${inputs.length === 1 ? `${inputs[0]} is an empty folder` : 'the folders are empty'}`,
        );
      return { batch: null, queued: 0, resumed, skipped, rejected, jobIds: [] };
    }
    if (newJobs.length === 0 && resumed.length > 0) {
      // A re-run that only resumes earlier jobs reports their batch instead of adding an empty one.
      const batch = this.store.batch(this.store.get(resumed[0])!.batchId)!;
      this.kick();
      return { batch, queued: 0, resumed, skipped, rejected, jobIds: resumed };
    }
    const batchId = randomUUID();
    // The open-job check above ran before the awaits of the pre-flight; the insert checks again
    // under the write lock, so a folder started twice at once is queued (and paid for) once.
    const ins = this.store.insertBatch({
      id: batchId,
      tool: tool.id,
      outDir,
      params,
      roots: inputs,
      snapshot: { namingTemplate: settings.namingTemplate, slugs: this.o.slugs() },
      backend,
      jobs: newJobs,
    });
    resumed.push(...ins.resumed);
    this.kick();
    const batch = ins.inserted.length
      ? this.store.batch(batchId)!
      : this.store.batch(this.store.get(resumed[0])!.batchId)!;
    return {
      batch,
      queued: ins.inserted.length,
      resumed,
      skipped,
      rejected,
      jobIds: [...ins.inserted.map((j) => j.id), ...resumed],
    };
  }

  /**
   * The parameters as the server would judge them (validateRequest), with the batch field filled
   * per input when `withInputs`, and what only this machine can check (local files, references):
   * refused as `invalid`, each problem naming its field, before anything is walked or paid for.
   * Start and batches.check both run it, so a check cannot pass what a Start refuses.
   */
  private async assertParams(tool: ToolEntry, params: Record<string, unknown>, withInputs: boolean): Promise<void> {
    const field = batchFieldOf(tool);
    if (field && params[field.name] !== undefined && withInputs)
      throw new DeskError(
        'invalid',
        `${field.name} is filled from the input files; do not also pass it as a parameter`,
      );
    // Local paths in media fields (reference lists, keyframes) are encoded at submission; validate with stand-ins.
    const stood = withPlaceholders(tool, params);
    const probe =
      field && withInputs
        ? { ...stood, [field.name]: field.kind === 'mediaList' ? [placeholderFor(field)] : placeholderFor(field) }
        : stood;
    const v = validateRequest(tool, probe);
    if (!v.ok)
      throw new DeskError(
        'invalid',
        `${tool.title}: ${v.invalid.map((p) => `${p.field} ${p.reason}`).join('; ')}`,
        v.invalid,
      );
    const localFields = localMediaFields(tool, params);
    if (localFields.length) {
      const canUpload = isLoopback((await this.o.target()).baseUrl);
      const problems = localFields
        .map((f) => ({ field: f.name, reason: localFileProblem(tool, f, canUpload) }))
        .filter((p): p is { field: string; reason: string } => p.reason !== null);
      if (problems.length)
        throw new DeskError(
          'invalid',
          problems.map((p) => p.reason).join('; '),
          problems.map((p) => ({
            field: p.field,
            reason:
              p.field === 'reference_videos'
                ? 'must be an HTTPS URL or an upl_vid_ id (local files only with the Sandbox)'
                : 'must be an HTTPS URL (local files only with the Sandbox)',
          })),
        );
    }
    await this.enforceReferences(tool, params);
  }

  /**
   * What a Start over these inputs would queue, skip and reject, told before it (batches.check):
   * sortInputs, as startBatch runs it, so the two cannot disagree; Start still runs it again, as
   * files change in between. A newer check under the same `checkId` stops this one.
   */
  async checkBatch(
    req: { tool: string; inputs: string[]; params?: Record<string, unknown>; outDir?: string; checkId?: string },
    onProgress?: (p: { checkId: string; checked: number; total: number }) => void,
  ): Promise<BatchCheckResult> {
    let tool: ToolEntry;
    try {
      tool = getTool(req.tool);
    } catch (err) {
      throw new DeskError('invalid', (err as Error).message);
    }
    if (!batchFieldOf(tool))
      throw new DeskError('invalid', `${tool.title} takes no input files; give its parameters only`);
    // Parameters Start would refuse are refused here, the same way, before any input is read.
    if (req.params) await this.assertParams(tool, req.params, true);
    const stop = new AbortController();
    if (req.checkId) {
      this.checks.get(req.checkId)?.abort();
      this.checks.set(req.checkId, stop);
    }
    try {
      const backend = this.o.identity ? await this.o.identity() : null;
      const inputs = await Promise.all(req.inputs.map((i) => canonicalPath(i)));
      // A folder Start would refuse is said at Start; the inputs are still checked.
      const outDirRaw = req.outDir ?? this.o.settings().outputDir;
      const outDir = outDirRaw && isAbsolutePath(outDirRaw) ? await canonicalPath(outDirRaw) : null;
      const usable = outDir && !outputFolderProblem(outDir) ? outDir : null;
      const checkId = req.checkId;
      const emit =
        checkId && onProgress
          ? throttled(onProgress, CHECK_PROGRESS_MS, (p) => (p.checked < p.total ? '' : 'last'))
          : null;
      const progress = emit
        ? (checked: number, total: number) => emit({ checkId: checkId!, checked, total })
        : undefined;
      const sorted = await this.sortInputs(tool, inputs, usable, backend, this.o.settings(), {
        signal: stop.signal,
        onChecked: progress,
      });
      return {
        ready: sorted.ready.length,
        resumed: sorted.resumed.length,
        skipped: sorted.skipped,
        rejected: sorted.rejected,
      };
    } finally {
      if (req.checkId && this.checks.get(req.checkId) === stop) this.checks.delete(req.checkId);
    }
  }

  /**
   * Sorts a batch's inputs as Start does, before anything is paid for: the walk (folders, links,
   * results of earlier batches), each file's format, size and dimensions (checkInput), then against
   * the queue and the output folder (resumed, output exists, results that cannot be written). Reads
   * only. `outDir` null (batches.check with no usable folder): what depends on it is left out.
   */
  private async sortInputs(
    tool: ToolEntry,
    inputs: readonly string[],
    outDir: string | null,
    backend: string | null,
    settings: Settings,
    hooks: { signal?: AbortSignal; onChecked?: (checked: number, total: number) => void } = {},
  ) {
    const check = inputCheckOf(tool)!;
    const skipped: { path: string; reason: string }[] = [];
    const resumed: string[] = [];
    const ready: ScannedInput[] = [];
    const made = outDir ? this.store.doneOutputs(tool.id, outDir) : null;
    // Results met in the walk are not inputs: an earlier batch's in a folder inside a chosen one (a new
    // tool over the shoot must not pay for them again), and this tool's own in the output folder.
    const earlier = new Map<string, string>();
    for (const root of inputs) {
      for (const [path, by] of this.store.resultsBelow(root))
        earlier.set(
          path,
          `is a result of an earlier ${by} batch; choose its folder itself to use its results as inputs`,
        );
    }
    for (const path of made?.byOutput.keys() ?? [])
      earlier.set(path, `is a result of an earlier ${tool.id} batch into this output folder`);
    // An output folder that is (or holds) a chosen folder, results beside the photos: walked, its results skipped by name.
    const holdsInput = !!outDir && inputs.some((r) => r === outDir || r.startsWith(outDir + sep));
    // Results the queue does not know (a fresh data folder, another machine's, a drop the web host copied anew) are known by
    // name, as this template or the default one (another machine's) writes them, beside the photo they are named after.
    const byName = resultNameReader([settings.namingTemplate, DEFAULT_SETTINGS.namingTemplate], TOOLS);
    const scan = await scanInputs(
      inputs,
      (ext) => acceptsExtension(check, ext),
      holdsInput || !outDir ? [] : [outDir],
      earlier,
      byName,
    );
    const rejected = scan.rejected;
    skipped.push(...scan.duplicates, ...scan.results);
    let checked = 0;
    const reasons = await mapLimit(scan.inputs, 8, async (i) => {
      if (hooks.signal?.aborted) throw new DeskError('conflict', 'a newer check of these inputs replaced this one');
      const reason = await checkInput(check, i.path);
      hooks.onChecked?.(++checked, scan.inputs.length);
      return reason;
    });
    const folderProblems = new Map<string, string | null>();
    for (const [n, input] of scan.inputs.entries()) {
      if (reasons[n]) {
        rejected.push({ path: input.path, reason: reasons[n]! });
        continue;
      }
      if (!outDir || !made) {
        ready.push(input);
        continue;
      }
      const open = this.store.openJobFor(tool.id, input.path, outDir, backend);
      if (open) {
        resumed.push(open.id);
        continue;
      }
      const existing = await this.existingOutput(tool, settings.namingTemplate, outDir, input.relDir, input.path, made);
      if (existing) {
        skipped.push({ path: input.path, reason: `its output ${existing} already exists` });
        continue;
      }
      // Its results' sub-folder (see outputDirOf), checked as the output folder is, before anything is paid.
      if (!folderProblems.has(input.relDir))
        folderProblems.set(input.relDir, outputFolderProblem(outputDirOf(outDir, input.relDir)));
      const folderProblem =
        folderProblems.get(input.relDir) ??
        this.resultPathProblem(tool, settings.namingTemplate, outDir, input.relDir, input.path);
      if (folderProblem) {
        rejected.push({ path: input.path, reason: `its results cannot be written: ${folderProblem}` });
        continue;
      }
      ready.push(input);
    }
    return { ready, resumed, skipped, rejected };
  }

  /**
   * The reference rules (duration, fps, size, pixels, aspect, counts, mentions) on the files and
   * URLs the request cites, probed here, before anything is uploaded or paid for. The renderer
   * runs the same shared rules for instant feedback; this is the enforcement.
   */
  private async enforceReferences(tool: ToolEntry, params: Record<string, unknown>): Promise<void> {
    const family = familyOfTool(tool.id);
    if (!family) return;
    const lim = FAMILY_LIMITS[family];
    const fields = [lim.videos?.field, lim.images?.field].filter((f): f is string => !!f && f !== tool.batchField);
    // Uploaded ids cannot be probed here; the server checks those. Inline data is decoded and probed.
    const sources: (NamedSource & { field: string })[] = [];
    for (const f of fields) {
      listOf(params[f]).forEach((x, i) => {
        if (isProbeable(x)) sources.push({ field: f, ...named(x, Array.isArray(params[f]) ? `${f} ${i + 1}` : f) });
      });
    }
    const invalid = await this.audioProblems(tool, params);
    // Frames (image, image_end) given as a URL, a path or inline data are probed from the body by checkReferences.
    const report =
      sources.length || framesOf(family, params).length
        ? await checkReferences({ family, sources, body: params })
        : null;
    if (report && !report.ok) {
      invalid.push(
        ...report.references.flatMap((r, i) => r.errors.map((e) => ({ field: sources[i].field, reason: e.message }))),
        ...report.frames.flatMap((f) => f.errors.map((e) => ({ field: f.field, reason: e.message }))),
        ...report.errors
          .filter((e) => !report.references.some((r) => r.errors.some((x) => x.message === e.message)))
          .map((e) => ({ field: fieldOfRule(e.rule, lim), reason: e.message })),
      );
    }
    if (!invalid.length) return;
    throw new DeskError('invalid', `${tool.title}: ${invalid.map((p) => p.reason).join('; ')}`, invalid);
  }

  /** Local audio references whose content is not what the tool takes (the shared rules only see names). */
  private async audioProblems(
    tool: ToolEntry,
    params: Record<string, unknown>,
  ): Promise<{ field: string; reason: string }[]> {
    const out: { field: string; reason: string }[] = [];
    for (const f of tool.fields) {
      if (f.kind !== 'mediaList' || f.media !== 'audio') continue;
      for (const x of listOf(params[f.name])) {
        if (typeof x !== 'string' || !isLocalPath(x)) continue;
        const sniffed = await sniffAudio(x).catch((err: unknown) => ({
          ok: false as const,
          found: `unreadable (${err instanceof Error ? err.message : String(err)})`,
        }));
        if (!sniffed.ok)
          out.push({ field: f.name, reason: `${x}: not an MP3 or WAV file (its content is ${sniffed.found})` });
      }
    }
    return out;
  }

  /** Why this input's results would have a path too long for the system we run on, or null. */
  private resultPathProblem(
    tool: ToolEntry,
    template: string,
    outDir: string,
    relDir: string,
    inputPath: string | null,
  ): string | null {
    const fix = 'choose an output folder with a shorter path or a shorter naming template, or shorten the name';
    const problem = resultPathProblem(
      { outDir, relDir, template, tool: tool.id, kind: tool.result, inputPath },
      this.o.platform ?? process.platform,
    );
    return problem && `${problem}; ${fix}`;
  }

  /**
   * The result of an earlier run of this input, if one is there: what the queue knows this input
   * made, else a file with the name its result would get. A file of that name made from another
   * input (IMG_0001.jpg of a second memory card, photo.jpg beside photo.png) is not this input's
   * result: skipping on the name alone left such inputs never processed.
   */
  private async existingOutput(
    tool: ToolEntry,
    template: string,
    outDir: string,
    relDir: string,
    inputPath: string,
    made: DoneOutputs,
  ): Promise<string | null> {
    for (const p of made.byInput.get(inputPath) ?? []) if (await exists(p)) return p;
    const dir = outputDirOf(outDir, relDir);
    const stem = renderName(
      template,
      { name: stemOf(inputPath, ''), tool: tool.id, ext: '__EXT__', batch: '', date: new Date() },
      0,
    );
    let digest: Promise<string> | undefined;
    const digestOfInput = () => (digest ??= fileDigest(inputPath));
    for (const ext of KIND_EXTS[tool.result]) {
      const p = join(dir, stem.replace('__EXT__', ext));
      if (!(await exists(p))) continue;
      // Made from another path: the same photo if it holds the same bytes (a folder dropped again in the web host arrives under a new path).
      // By its exact name first; on macOS and Windows the file found may carry the name in another case or form.
      const from = made.byOutput.get(p) ?? made.byOutputKey.get(sameFileKey(p));
      if (!from || (await samePhoto(from, inputPath, digestOfInput))) return p;
    }
    return null;
  }

  // ---- the loop ------------------------------------------------------------------------------

  private kick(): void {
    if (this.running) this.schedule(0);
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
  }

  private async tick(): Promise<void> {
    this.timer = null;
    if (!this.running) return;
    const now = Date.now();
    try {
      if (!this.leased || now - this.lastHeartbeat > HEARTBEAT_MS) {
        const had = this.leased;
        this.leased = this.store.tryLease(this.owner, this.leaseStaleMs);
        this.lastHeartbeat = now;
        if (this.leased && !had) {
          // Newly the holder: say our backend again (learnBackend), whoever held the queue meanwhile.
          this.here = null;
          await this.recover();
        }
        if (!this.leased) {
          if (had) this.abandon();
          return this.schedule(HEARTBEAT_MS / 2);
        }
      }
      await this.learnBackend();
      if (now - this.lastReconcile > RECONCILE_MS) this.reconcile();
      this.submitQueued();
      this.pollDue();
    } catch (err) {
      // A failure of one tick (disk full, locked DB) must not stop the queue; it is retried.
      console.error(`mediadesk engine: ${(err as Error).message}`);
    }
    let wait = 1000;
    for (const f of this.polling.values()) wait = Math.min(wait, f.nextPollAt - Date.now());
    this.schedule(Math.max(5, wait));
  }

  /**
   * Which backend is in use now. After a switch, the jobs tracked for the old one stop being
   * polled here (their task ids mean nothing on the new one) and the new one's are picked up.
   */
  private async learnBackend(): Promise<void> {
    if (!this.o.identity) return;
    const here = await this.o.identity();
    if (here === this.here) return;
    const had = this.here;
    this.here = here;
    this.store.adoptUnowned(here);
    // Said for the other processes that follow the queue (the CLI), whose jobs may be for another backend.
    this.store.setFlag(HOLDER_BACKEND, here);
    if (had !== null) {
      this.polling.clear();
      this.lastReconcile = 0;
    }
  }

  /** Boot after a crash or kill: each job continues from its stored state. */
  private async recover(): Promise<void> {
    // Before anything is tracked: another process's Sandbox, and its tasks, ended with it.
    this.settleGoneSandbox();
    for (const j of this.store.inState('submitting')) {
      // The create may have reached the server: never send it again without the user. Except on the
      // built-in Sandbox, which stopped with the process that was sending it, and is free.
      if (this.onBuiltInSandbox(j)) this.store.move(j.id, 'submitting', 'queued', REQUEUE_FRESH);
      else this.store.move(j.id, 'submitting', 'needs_attention', { error: ATTENTION.interruptedSubmit });
    }
    await this.removeStaleParts();
    this.lastReconcile = 0;
  }

  /** Another process took the queue (we stalled): stop acting on its jobs. */
  private abandon(): void {
    for (const a of this.aborts.values()) a.abort();
    this.polling.clear();
  }

  /** Picks up jobs moved by other processes (retry from the CLI) and running jobs after boot. */
  private reconcile(): void {
    this.lastReconcile = Date.now();
    for (const j of this.store.inStateFor('running', this.here))
      if (!this.polling.has(j.id) && !this.busy.has(j.id)) this.track(j);
    // Downloads go on whatever the backend: result URLs are absolute and lapse.
    for (const j of this.store.inState('downloading')) if (!this.busy.has(j.id)) this.startDownload(j);
    for (const id of this.polling.keys()) {
      const j = this.store.get(id);
      if (!j || j.state !== 'running') this.polling.delete(id);
    }
  }

  private track(j: JobRow): void {
    const submittedAt = j.submittedAt ?? Date.now();
    this.polling.set(j.id, {
      jobId: j.id,
      tool: j.tool,
      taskId: j.taskId!,
      params: j.params,
      submittedAt,
      listPath: resolvePaths(getTool(j.tool), j.snapshot.slugs as Slugs, j.params).list,
      nextPollAt: j.nextPollAt ?? Date.now(),
      row: j,
    });
  }

  private limits(): { global: number; perTool: Record<string, number> } {
    const s = this.o.settings();
    return { global: this.o.concurrency ?? s.concurrency, perTool: s.perToolConcurrency };
  }

  private submitQueued(): void {
    if (this.stopping || this.store.flag('paused') === '1' || Date.now() < this.rateLimitedUntil) return;
    const { global, perTool } = this.limits();
    const active = this.store.activeByTool();
    // They hold a slot already: uncounted, every tick before their commit started another round,
    // up to three times the concurrency in flight, each with its input in memory and its requests.
    for (const tool of this.preparing.values()) active.set(tool, (active.get(tool) ?? 0) + 1);
    let total = [...active.values()].reduce((a, n) => a + n, 0);
    if (total >= global) return;
    // Jobs being prepared here are still `queued` on disk; read just past them, not the whole queue.
    const candidates = this.store.inStateFor('queued', this.here, global - total + this.preparing.size + 8);
    for (const j of candidates) {
      if (total >= global) break;
      if (this.busy.has(j.id)) continue;
      const cap = perTool[j.tool];
      if (cap !== undefined && (active.get(j.tool) ?? 0) >= cap) continue;
      active.set(j.tool, (active.get(j.tool) ?? 0) + 1);
      total++;
      this.run(j.id, () => this.submit(j));
    }
  }

  private run(jobId: string, fn: () => Promise<void>): void {
    const p = fn()
      .catch((err) => console.error(`mediadesk engine: job ${jobId}: ${(err as Error).stack ?? err}`))
      .finally(() => {
        this.busy.delete(jobId);
        this.kick();
      });
    this.busy.set(jobId, p);
  }

  /**
   * One create. `submitting` (with a fresh attempt id) is committed before the request leaves,
   * and the task_id the moment the answer arrives: a crash in between is found at boot and put
   * to the user, never re-sent.
   */
  private async submit(j: JobRow): Promise<void> {
    const tool = getTool(j.tool);
    const slugs = j.snapshot.slugs as Slugs;
    let params: Record<string, unknown>;
    let attempt: JobPatch;
    let sent: Promise<JobPatch> = Promise.resolve({});
    this.preparing.set(j.id, j.tool);
    try {
      try {
        const target = await this.o.target();
        // Picked for the backend of the last tick; if it changed since, the next tick picks again.
        if (this.o.identity && (await this.o.identity()) !== this.here) return;
        params = await buildParams(tool, j.params, j.inputPath, this.tools, isLoopback(target.baseUrl), (bytes) => {
          // What the result will be made from: a later drop of the same photo is known by it (samePhoto).
          // Not recorded if hashing fails: such a job is then compared by reading both files, as jobs from before schema 5 are.
          sent = sha256Of(bytes).then(
            (sha) => ({ inputSize: bytes.length, inputSha256: sha }),
            () => ({}),
          );
        });
      } catch (err) {
        if (err instanceof PreflightError) {
          // Through submitting, so the state machine's one path to failed is kept; nothing was sent.
          await this.write(() => {
            if (this.store.move(j.id, 'queued', 'submitting', {}))
              this.store.move(j.id, 'submitting', 'failed', { error: err.message, invalid: err.invalid });
          });
          return;
        }
        // An upload failed for now or the backend is unreachable: nothing was paid; the job says
        // why it waits (the Queue, `mediadesk jobs`) and is tried again shortly.
        this.backoff(
          err instanceof ApiError ? err.retryAfterSec : undefined,
          heldBackReason(err instanceof ApiError ? err : null),
        );
        let reason = err instanceof Error ? err.message : String(err);
        if (err instanceof ApiError) reason = refusedReason(err);
        await this.write(() => this.store.patch(j.id, 'queued', { error: waitingMessage(reason) }));
        return;
      }
      // On the built-in Sandbox the task lives in this process's: recorded, so that once this process
      // no longer holds the queue, every reader knows the task is gone (JobStore.requeueGoneSandbox).
      attempt = {
        attemptId: randomUUID(),
        attempts: j.attempts + 1,
        error: null,
        invalid: null,
        sandboxOf: this.here === 'sandbox' ? this.owner : null,
        ...(await sent),
      };
      // Committed before the request leaves (write() resolves after the commit).
      if (!(await this.write(() => this.store.move(j.id, 'queued', 'submitting', attempt)))) return;
    } finally {
      this.preparing.delete(j.id);
    }
    let env: TaskEnvelope;
    try {
      env = await this.tools.create(j.tool, slugs, params);
    } catch (err) {
      await this.onCreateError(j, err);
      return;
    }
    this.serverAnswered();
    const now = Date.now();
    const base = {
      taskId: env.taskId,
      submittedAt: now,
      expiresAt: tool.resultTtlHours ? now + tool.resultTtlHours * 3_600_000 : null,
    };
    let to: JobState;
    let patch: JobPatch;
    if (env.status === 'COMPLETED' && env.generated?.length)
      [to, patch] = ['downloading', { ...base, generated: env.generated }];
    else if (env.status === 'FAILED') [to, patch] = ['failed', { ...base, error: taskFailed(env.error) }];
    else [to, patch] = ['running', { ...base, nextPollAt: now + this.poll.firstMs }];
    const moved = await this.write(() => {
      if (this.store.move(j.id, 'submitting', to, patch)) return true;
      // Canceled while the create was in flight: keep the task id so the user can find the charge.
      const cur = this.store.get(j.id);
      if (cur) this.store.patch(j.id, cur.state, { taskId: env.taskId });
      return false;
    });
    if (!moved) return;
    // The row as just committed, without reading it back.
    const row: JobRow = { ...j, ...attempt, ...patch, state: to, invalid: [], error: patch.error ?? null } as JobRow;
    if (row.state === 'running') this.track(row);
    else if (row.state === 'downloading') this.startDownload(row, true);
  }

  private async onCreateError(j: JobRow, err: unknown): Promise<void> {
    if (
      err instanceof ApiError &&
      !err.mayHaveReachedServer &&
      (err.status === 429 || err.status === 503 || err.kind !== 'http')
    ) {
      // Provably not processed: requeue, and pause submissions instead of hammering.
      this.backoff(err.retryAfterSec, heldBackReason(err));
      await this.write(() =>
        this.store.move(j.id, 'submitting', 'queued', { error: waitingMessage(refusedReason(err)) }),
      );
      return;
    }
    // The server took it or turned it down for good: the queue no longer waits for it.
    this.serverAnswered();
    if (err instanceof ApiError && err.kind === 'http' && err.status! >= 400 && err.status! < 500) {
      await this.write(() =>
        this.store.move(j.id, 'submitting', 'failed', { error: createRefused(err), invalid: err.invalidParams }),
      );
    } else {
      let detail = String(err);
      if (err instanceof ApiError) detail = apiProblem(err);
      else if (err instanceof EnvelopeError) detail = err.message;
      await this.write(() =>
        this.store.move(j.id, 'submitting', 'needs_attention', { error: ATTENTION.ambiguousCreate(detail) }),
      );
    }
  }

  private backoff(retryAfterSec: number | undefined, why: string): void {
    this.heldBack ??= why;
    this.rateLimitedUntil = Math.max(
      this.rateLimitedUntil,
      Date.now() + (retryAfterSec !== undefined ? retryAfterSec * 1000 : (this.o.defaultBackoffMs ?? 2000)),
    );
  }

  /** A create got an answer: the wait is over, unless a refusal since put it off (creates sent together). */
  private serverAnswered(): void {
    if (Date.now() >= this.rateLimitedUntil) this.heldBack = null;
  }

  // ---- polling ---------------------------------------------------------------------------------

  /** One request per collection per tick, whatever the number of tasks in it. */
  private pollDue(): void {
    const now = Date.now();
    const groups = new Map<string, Inflight[]>();
    for (const f of this.polling.values()) {
      const key = `${f.listPath}`;
      (groups.get(key) ?? groups.set(key, []).get(key)!).push(f);
    }
    for (const [listPath, items] of groups) {
      if (this.groupsInFlight.has(listPath) || !items.some((f) => f.nextPollAt <= now)) continue;
      this.groupsInFlight.add(listPath);
      const listable = getTool(items[0].tool).listShown;
      void (listable ? this.pollList(listPath, items) : this.pollEach(items.filter((f) => f.nextPollAt <= now)))
        .catch(() => {
          // The client already retried; the next tick tries again.
          for (const f of items) f.nextPollAt = Date.now() + this.poll.minMs;
        })
        .finally(() => {
          this.groupsInFlight.delete(listPath);
          this.kick();
        });
    }
  }

  /**
   * The list is an optimisation, never the only source: one plain GET (no paging, which the list
   * endpoints do not declare), and every due task it does not show (the service may list only the
   * newest) or shows COMPLETED without results (older deployments list only task_id and status)
   * is asked about by id. So no task is lost however many are in flight.
   */
  private async pollList(listPath: string, items: Inflight[]): Promise<void> {
    const want = new Set(items.map((f) => f.taskId));
    const found = new Map<string, TaskEnvelope>();
    for (const e of await this.tools.list(listPath)) if (want.has(e.taskId)) found.set(e.taskId, e);
    const now = Date.now();
    const missing = items.filter((f) => !found.has(f.taskId) && f.nextPollAt <= now);
    const needDetail = items.filter(
      (f) => found.get(f.taskId)?.status === 'COMPLETED' && !found.get(f.taskId)!.generated?.length,
    );
    const details = await Promise.all([...missing, ...needDetail].map((f) => this.byIdQuiet(f)));
    for (const d of details) if (d) found.set(d.taskId, d);
    this.apply(items, found, now);
  }

  private async pollEach(items: Inflight[]): Promise<void> {
    const found = new Map<string, TaskEnvelope>();
    for (const d of await Promise.all(items.map((f) => this.byIdQuiet(f)))) if (d) found.set(d.taskId, d);
    this.apply(items, found);
  }

  private async byIdQuiet(f: Inflight): Promise<TaskEnvelope | null> {
    try {
      return await this.tools.byId(f.tool, f.row.snapshot.slugs as Slugs, f.params, f.taskId);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        this.polling.delete(f.jobId);
        if (this.onBuiltInSandbox(f.row)) this.store.move(f.jobId, 'running', 'queued', REQUEUE_FRESH);
        else this.store.move(f.jobId, 'running', 'needs_attention', { error: ATTENTION.lostTask });
      }
      return null;
    }
  }

  /** `askedUpTo`: tasks due by then were asked about; a later one the list left out was not. */
  private apply(items: Inflight[], found: Map<string, TaskEnvelope>, askedUpTo = Infinity): void {
    const now = Date.now();
    const toDownload: JobRow[] = [];
    this.store.transaction(() => {
      for (const f of items) {
        if (!this.polling.has(f.jobId)) continue;
        const e = found.get(f.taskId);
        const kind = getTool(f.tool).result;
        if (e?.status === 'COMPLETED' && e.generated?.length) {
          this.polling.delete(f.jobId);
          if (this.store.move(f.jobId, 'running', 'downloading', { generated: e.generated }))
            toDownload.push({ ...f.row, state: 'downloading', generated: e.generated });
        } else if (e?.status === 'FAILED') {
          this.polling.delete(f.jobId);
          this.store.move(f.jobId, 'running', 'failed', { error: taskFailed(e.error) });
        } else if (e || f.nextPollAt <= askedUpTo) {
          f.nextPollAt = now + nextPollDelay(this.poll, kind, now - f.submittedAt);
        }
        // Else it was not due and nothing was learnt of it (a list that left it out): its turn
        // stays as it was, or a group whose younger tasks fall due first would put it off forever.
      }
    });
    for (const row of toDownload) this.startDownload(row, true);
  }

  // ---- downloads -------------------------------------------------------------------------------

  private startDownload(j: JobRow, fresh = false): void {
    if (this.busy.has(j.id) && !fresh) return;
    if (this.busy.has(j.id)) return;
    const ac = new AbortController();
    this.aborts.set(j.id, ac);
    this.run(j.id, async () => {
      try {
        if (await this.resultsGoneWithSandbox(j)) {
          await this.write(() => this.store.move(j.id, 'downloading', 'queued', REQUEUE_FRESH));
          return;
        }
        const write = <T>(fn: () => T) => this.write(fn);
        await fetchResults(j, {
          store: this.store,
          tools: this.tools,
          slugs: j.snapshot.slugs as Slugs,
          signal: ac.signal,
          maxAttempts: this.o.downloadAttempts ?? 8,
          expiredPatienceMs: this.o.expiredPatienceMs,
          write,
        });
        await this.write(() => this.store.move(j.id, 'downloading', 'done', { error: null }));
      } catch (err) {
        if (ac.signal.aborted || err instanceof JobMovedError) return;
        const msg = err instanceof ApiError ? err.describe() : (err as Error).message;
        await this.write(() => this.store.move(j.id, 'downloading', 'failed', { error: downloadFailed(msg) }));
      } finally {
        this.aborts.delete(j.id);
      }
    });
  }

  /** Whether the job's batch was started on the built-in Sandbox (see REQUEUE_FRESH). */
  private onBuiltInSandbox(j: JobRow): boolean {
    return this.store.backendOf(j.batchId) === 'sandbox';
  }

  /**
   * Results of the built-in Sandbox are served by the Sandbox that made them, which lives in one
   * process: URLs of another one (an earlier run of the app, a stopped CLI) lead nowhere, and
   * retrying them for minutes helps no one. Unknown without builtInSandboxUrl (tests of the queue alone).
   */
  private async resultsGoneWithSandbox(j: JobRow): Promise<boolean> {
    const first = j.generated?.[0];
    // A text result (image-to-prompt) is the result itself, not a URL.
    const url = typeof first === 'string' ? first : first?.url;
    if (!this.o.builtInSandboxUrl || !url || !/^https?:\/\//i.test(url) || !this.onBuiltInSandbox(j)) return false;
    return fromAnotherSandbox(url, await this.o.builtInSandboxUrl());
  }

  private async removeParts(j: JobRow): Promise<void> {
    for (const p of j.planned ?? []) await removeQuietly(partPathOf(p));
  }

  /**
   * Removes `.part` files left by a crash, but only ours: parts of planned outputs of jobs that are
   * not downloading now (a user's unrelated `.part` file is never touched).
   */
  private async removeStaleParts(): Promise<void> {
    const rows = this.store.db
      .prepare("SELECT id, state, planned, outputs FROM jobs WHERE planned IS NOT NULL AND state != 'done'")
      .all() as { id: string; state: JobState; planned: string; outputs: string }[];
    for (const r of rows) {
      const planned = JSON.parse(r.planned) as string[];
      const doneCount = (JSON.parse(r.outputs) as string[]).length;
      for (const [i, p] of planned.entries()) {
        if (r.state === 'downloading' && i >= doneCount) continue;
        await removeQuietly(partPathOf(p));
      }
    }
    const done = this.store.db
      .prepare("SELECT planned FROM jobs WHERE planned IS NOT NULL AND state = 'done' AND updated_at > ?")
      .all(Date.now() - 86_400_000) as { planned: string }[];
    for (const r of done) for (const p of JSON.parse(r.planned) as string[]) await removeQuietly(partPathOf(p));
  }

  // ---- events ----------------------------------------------------------------------------------

  /** Throttled: at most one event per interval, with the rows changed since the last one. */
  private emitChanges(): void {
    if (this.listeners.size === 0) {
      this.eventCursor = Date.now();
      return;
    }
    // `>=` with the ids already sent at the cursor's millisecond: a row written in that same
    // millisecond after the query is neither lost nor sent twice.
    const rows = (
      this.store.db
        .prepare('SELECT id, updated_at AS u FROM jobs WHERE updated_at >= ? ORDER BY updated_at LIMIT 1001')
        .all(this.eventCursor) as { id: string; u: number }[]
    ).filter((r) => !(r.u === this.eventCursor && this.sentAtCursor.has(r.id)));
    if (rows.length === 0) return;
    const truncated = rows.length > 500;
    const jobs = this.store.byIds(rows.slice(0, 500).map((r) => r.id));
    const max = Math.max(...rows.slice(0, 500).map((r) => r.u));
    if (max !== this.eventCursor) this.sentAtCursor.clear();
    this.eventCursor = max;
    for (const r of rows.slice(0, 500)) if (r.u === max) this.sentAtCursor.add(r.id);
    const batchIds = [...new Set(jobs.map((j) => j.batchId))];
    const payload: JobsChanged = {
      batches: batchIds.map((id) => this.store.batch(id)!).filter(Boolean),
      jobs: jobs.map(toJobRecord),
      truncated,
      status: this.status(),
    };
    for (const fn of this.listeners) fn(payload);
  }
}

export const isActive = (s: JobState) => ACTIVE_STATES.includes(s);

/** A field that takes one value or a list, as a list. */
/** The request field a reference rule's error is shown on. */
function fieldOfRule(rule: string, lim: FamilyLimits): string {
  if (rule.endsWith('.mention')) return 'prompt';
  if (rule.startsWith('video.')) return lim.videos?.field ?? 'references';
  if (rule.startsWith('image.')) return lim.images?.field ?? 'references';
  return rule.startsWith('audio.') ? 'reference_audios' : 'prompt';
}

function listOf(v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  return v === undefined ? [] : [v];
}
