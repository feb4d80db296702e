import { getTool, resolvePaths, type Slugs } from '../../../shared/catalogue/index.ts';
import { ApiError, placeTaken } from '../api/client.ts';
import type { TaskEnvelope } from '../api/tools.ts';
import { taskFailed } from '../queue/job-messages.ts';
import { ATTENTION } from '../queue/job-messages.ts';
import { REQUEUE_FRESH } from '../queue/states.ts';
import type { JobRow } from '../queue/store.ts';
import { onBuiltInSandbox, type LoopContext } from './context.ts';
import type { Downloader } from './downloader.ts';
import { byIdDue, firstAskDelay, nextPollDelay } from './poll-policy.ts';
import { UsualDurations } from './usual-durations.ts';
import type { PaceScope } from '../limits/pacer.ts';

/** A running task this process asks the server about. */
interface TrackedTask {
  jobId: string;
  tool: string;
  taskId: string;
  listPath: string;
  params: Record<string, unknown>;
  submittedAt: number;
  /** When its collection's list is next asked for it. */
  nextPollAt: number;
  /** When it was last asked about by id; null: never (see byIdDue). */
  askedAt: number | null;
  /** The backend it was created on (LoopContext.backendInUse), whose durations it teaches. */
  backend: string | null;
  /** Its first ask as planned from its tool's usual duration (Poller.firstAsk); null when none was. */
  first: FirstAsk | null;
  /** A read showed it not yet done. */
  seenRunning: boolean;
  /** The job as stored when tracking began (saves a re-read when its results arrive). */
  row: JobRow;
}

/** When a new task is first asked about: `at`, from its tool's usual duration; `early`: at half of it. */
export interface FirstAsk {
  at: number;
  early: boolean;
}

/** The longest wait before a list that does not answer is asked again (PollPolicy.listRetryMs doubles up to it). */
const LIST_RETRY_MAX_MS = 300_000;
/**
 * Tasks no list shows asked before anything of their tool was seen finished (byIdDue). One while
 * the list shows some of them: those seen ending teach the duration too, so a hung probe holds
 * nothing up, and each more probe costs a request per poll interval until the first ends.
 */
const PROBES = 3;
const PROBES_BESIDE_LIST = 1;

/**
 * The poll step: running tasks asked about, one list request per collection per tick. What a list
 * does not show (a windowed list, or one that does not answer) is asked by id on a schedule that
 * follows how long the tool's tasks usually take.
 */
export class Poller {
  private readonly context: LoopContext;
  private readonly downloads: Downloader;
  private readonly tracked = new Map<string, TrackedTask>();
  private readonly listsInFlight = new Set<string>();
  /** Lists that did not answer (404 and the like): by id only until `retryAt`, then the list again. */
  private readonly listsDown = new Map<string, { retryAt: number; backoffMs: number }>();
  private readonly usual: UsualDurations;

  constructor(context: LoopContext, downloads: Downloader) {
    this.context = context;
    this.downloads = downloads;
    this.usual = new UsualDurations(context.options.db);
  }

  /**
   * When a task of `tool` created now is first asked about: when its tool's tasks usually end on
   * this backend, so a lone task costs about one read; null while nothing of it is known (the usual schedule).
   */
  firstAsk(tool: string, now: number): FirstAsk | null {
    const backend = this.context.backendInUse();
    const usual = this.usual.of(backend, tool);
    if (usual === null) return null;
    const early = this.usual.explore(backend, tool);
    return { at: now + firstAskDelay(this.context.poll, getTool(tool).result, usual, early), early };
  }

  /** Polls a running task; `first`: its first ask as firstAsk planned it (a task just created). */
  track(job: JobRow, first: FirstAsk | null = null): void {
    const submittedAt = job.submittedAt ?? this.context.clock.now();
    this.tracked.set(job.id, {
      jobId: job.id,
      tool: job.tool,
      taskId: job.taskId!,
      params: job.params,
      submittedAt,
      listPath: resolvePaths(getTool(job.tool), job.snapshot.slugs as Slugs, job.params).list,
      nextPollAt: job.nextPollAt ?? this.context.clock.now(),
      askedAt: null,
      backend: this.context.backendInUse(),
      first,
      seenRunning: false,
      row: job,
    });
  }

  isTracked(jobId: string): boolean {
    return this.tracked.has(jobId);
  }

  forget(jobId: string): void {
    this.tracked.delete(jobId);
  }

  forgetAll(): void {
    this.tracked.clear();
  }

  /** Forgets tasks whose job is no longer running (moved by another process, or gone). */
  forgetSettled(): void {
    for (const id of this.tracked.keys()) {
      const job = this.context.store.get(id);
      if (!job || job.state !== 'running') this.tracked.delete(id);
    }
  }

  /** How long until a tracked task is due, at most `ceilingMs`. */
  msUntilDue(ceilingMs: number): number {
    let wait = ceilingMs;
    for (const task of this.tracked.values()) wait = Math.min(wait, task.nextPollAt - this.context.clock.now());
    return wait;
  }

  /** Whether a list answered and its tasks are polled through it (false while it does not answer). */
  listAnswers(listPath: string): boolean {
    return !this.listsDown.has(listPath);
  }

  async pollDue(): Promise<void> {
    const now = this.context.clock.now();
    const groups = new Map<string, TrackedTask[]>();
    for (const task of this.tracked.values())
      (groups.get(task.listPath) ?? groups.set(task.listPath, []).get(task.listPath)!).push(task);
    let pace: PaceScope | null = null;
    for (const [listPath, tasks] of groups) {
      if (this.listsInFlight.has(listPath)) continue;
      const down = this.listsDown.get(listPath);
      const listable = getTool(tasks[0].tool).listShown && (!down || down.retryAt <= now);
      const byId = listable ? [] : this.dueById(tasks, now);
      if (listable ? !tasks.some((task) => task.nextPollAt <= now) : byId.length === 0) continue;
      if (this.context.pacer) {
        pace ??= await this.context.pacer.scope();
        if (this.listsInFlight.has(listPath)) continue;
        const grant = listable ? await this.pollGrant(pace) : null;
        // Past a rate: asked when a place frees, never sent for a 429.
        if (grant && !grant.go) {
          for (const task of tasks) task.nextPollAt = Math.max(task.nextPollAt, grant.resetsAt);
          continue;
        }
      }
      this.listsInFlight.add(listPath);
      const asked = pace;
      void (listable ? this.pollList(listPath, tasks, asked) : this.pollEach(byId, asked))
        .catch(() => {
          // The client already retried; the next tick tries again.
          for (const task of tasks) task.nextPollAt = this.context.clock.now() + this.context.poll.minMs;
        })
        .finally(() => {
          this.listsInFlight.delete(listPath);
          this.context.kick();
        });
    }
  }

  /** A poll's pacing grant; creates being prepared keep their places first (they peeked them). */
  private pollGrant(pace: PaceScope) {
    return this.context.pacer!.poll(pace, this.context.createsPending?.() ?? 0);
  }

  /** Tasks no list shows that are due to be asked by id: the oldest few probe a tool not yet learned. */
  private dueById(tasks: TrackedTask[], now: number, probes = PROBES): TrackedTask[] {
    const { poll } = this.context;
    const oldest = [...tasks].sort((a, b) => a.submittedAt - b.submittedAt).slice(0, probes);
    return tasks.filter((task) =>
      byIdDue(
        poll,
        getTool(task.tool).result,
        task,
        this.usual.of(task.backend, task.tool),
        oldest.includes(task),
        now,
      ),
    );
  }

  /**
   * The list is an optimisation, never the only source: one plain GET (no paging is declared), and
   * every task it leaves out (a window of the newest) or shows COMPLETED without results (older
   * deployments) is asked about by id (dueById), so no task is lost however many are in flight. A
   * list that does not answer leaves its tasks to by-id polling and is tried again later.
   */
  private async pollList(listPath: string, tasks: TrackedTask[], pace: PaceScope | null): Promise<void> {
    const wanted = new Set(tasks.map((task) => task.taskId));
    const found = new Map<string, TaskEnvelope>();
    let listed: TaskEnvelope[];
    try {
      listed = await placeTaken(() => this.context.tools.list(listPath));
    } catch (err) {
      if (!listDoesNotAnswer(err)) throw err;
      const before = this.listsDown.get(listPath);
      const backoffMs = before ? Math.min(LIST_RETRY_MAX_MS, before.backoffMs * 2) : this.context.poll.listRetryMs;
      this.listsDown.set(listPath, { retryAt: this.context.clock.now() + backoffMs, backoffMs });
      return this.pollEach(this.dueById(tasks, this.context.clock.now()), pace);
    }
    this.listsDown.delete(listPath);
    for (const envelope of listed) if (wanted.has(envelope.taskId)) found.set(envelope.taskId, envelope);
    const now = this.context.clock.now();
    const missing = this.dueById(
      tasks.filter((task) => !found.has(task.taskId)),
      now,
      found.size > 0 ? PROBES_BESIDE_LIST : PROBES,
    );
    const needDetail = tasks.filter(
      (task) => found.get(task.taskId)?.status === 'COMPLETED' && !found.get(task.taskId)!.generated?.length,
    );
    for (const detail of await this.askEach([...needDetail, ...missing], pace))
      if (detail) found.set(detail.taskId, detail);
    this.apply(tasks, found, now, true);
  }

  private async pollEach(tasks: TrackedTask[], pace: PaceScope | null): Promise<void> {
    const found = new Map<string, TaskEnvelope>();
    const now = this.context.clock.now();
    for (const detail of await this.askEach(tasks, pace)) if (detail) found.set(detail.taskId, detail);
    this.apply(tasks, found, now);
  }

  /** Asks each task by id, as many as the pacing grants now; the rest wait their turn (still due). */
  private async askEach(tasks: TrackedTask[], pace: PaceScope | null): Promise<(TaskEnvelope | null)[]> {
    let granted = tasks.length;
    if (this.context.pacer && pace) {
      granted = 0;
      while (granted < tasks.length && (await this.pollGrant(pace)).go) granted++;
    }
    return Promise.all(tasks.slice(0, granted).map((task) => this.askById(task)));
  }

  /** The task's envelope, or null: a task the server no longer knows is settled here. */
  private async askById(task: TrackedTask): Promise<TaskEnvelope | null> {
    const { store, tools } = this.context;
    task.askedAt = this.context.clock.now();
    try {
      return await placeTaken(() => tools.byId(task.tool, task.row.snapshot.slugs as Slugs, task.params, task.taskId));
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        this.tracked.delete(task.jobId);
        if (onBuiltInSandbox(store, task.row)) store.move(task.jobId, 'running', 'queued', REQUEUE_FRESH);
        else store.move(task.jobId, 'running', 'needs_attention', { error: ATTENTION.lostTask });
      }
      return null;
    }
  }

  /**
   * `found`: what was learnt by `askedAt`. `listed`: a list was read for every task of `tasks`
   * (their next turns move on together, so one list serves them all); else only the due ones were asked.
   */
  private apply(tasks: TrackedTask[], found: Map<string, TaskEnvelope>, askedAt: number, listed = false): void {
    const { store, poll } = this.context;
    const now = this.context.clock.now();
    const toDownload: JobRow[] = [];
    store.transaction(() => {
      for (const task of tasks) {
        if (!this.tracked.has(task.jobId)) continue;
        const envelope = found.get(task.taskId);
        const kind = getTool(task.tool).result;
        if (envelope?.status === 'COMPLETED' && envelope.generated?.length) {
          this.tracked.delete(task.jobId);
          this.learn(task, askedAt, true);
          if (store.move(task.jobId, 'running', 'downloading', { generated: envelope.generated }))
            toDownload.push({ ...task.row, state: 'downloading', generated: envelope.generated });
        } else if (envelope?.status === 'FAILED') {
          this.tracked.delete(task.jobId);
          this.learn(task, askedAt, false);
          store.move(task.jobId, 'running', 'failed', { error: taskFailed(envelope.error) });
        } else {
          if (envelope) task.seenRunning = true;
          if (!listed && task.nextPollAt > askedAt) continue;
          // Not before the tool's tasks usually end: at a few in flight most lists would find nothing.
          const usual = this.usual.of(task.backend, task.tool);
          task.nextPollAt = Math.max(
            now + nextPollDelay(poll, kind, now - task.submittedAt),
            usual === null ? 0 : task.submittedAt + usual,
          );
        }
      }
      this.usual.save();
    });
    for (const row of toDownload) this.downloads.start(row);
  }

  /**
   * The age at which a task was seen ended, as its tool's duration. Seen at its planned first ask,
   * the age that ask was due at: the loop's lateness would otherwise lengthen the usual duration
   * a little with every lone task. An early ask that found it done: the tool got faster. A failure
   * teaches its age but never that.
   */
  private learn(task: TrackedTask, askedAt: number, completed: boolean): void {
    const age = askedAt - task.submittedAt;
    if (!task.first || task.seenRunning) return this.usual.record(task.backend, task.tool, age);
    const usual = this.usual.of(task.backend, task.tool);
    const sample = Math.min(age, task.first.at - task.submittedAt);
    const faster = completed && task.first.early && usual !== null && sample < usual;
    this.usual.record(task.backend, task.tool, sample, faster);
  }
}

/** A list that is not there (404, 405, 410, 501): its tasks are asked by id until it answers again. */
function listDoesNotAnswer(err: unknown): boolean {
  return err instanceof ApiError && err.kind === 'http' && [404, 405, 410, 501].includes(err.status!);
}
