import { getTool, resolvePaths, type Slugs } from '../../../shared/catalogue/index.ts';
import { ApiError } from '../api/client.ts';
import type { TaskEnvelope } from '../api/tools.ts';
import { taskFailed } from '../queue/job-messages.ts';
import { ATTENTION } from '../queue/job-messages.ts';
import { REQUEUE_FRESH } from '../queue/states.ts';
import type { JobRow } from '../queue/store.ts';
import { onBuiltInSandbox, type LoopContext } from './context.ts';
import type { Downloader } from './downloader.ts';
import { nextPollDelay } from './poll-policy.ts';
import type { PaceScope } from '../limits/pacer.ts';

/** A running task this process asks the server about. */
interface TrackedTask {
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

/** The poll step: running tasks asked about, one request per collection per tick. */
export class Poller {
  private readonly context: LoopContext;
  private readonly downloads: Downloader;
  private readonly tracked = new Map<string, TrackedTask>();
  private readonly listsInFlight = new Set<string>();

  constructor(context: LoopContext, downloads: Downloader) {
    this.context = context;
    this.downloads = downloads;
  }

  track(job: JobRow): void {
    const submittedAt = job.submittedAt ?? Date.now();
    this.tracked.set(job.id, {
      jobId: job.id,
      tool: job.tool,
      taskId: job.taskId!,
      params: job.params,
      submittedAt,
      listPath: resolvePaths(getTool(job.tool), job.snapshot.slugs as Slugs, job.params).list,
      nextPollAt: job.nextPollAt ?? Date.now(),
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
    for (const task of this.tracked.values()) wait = Math.min(wait, task.nextPollAt - Date.now());
    return wait;
  }

  async pollDue(): Promise<void> {
    const now = Date.now();
    const groups = new Map<string, TrackedTask[]>();
    for (const task of this.tracked.values())
      (groups.get(task.listPath) ?? groups.set(task.listPath, []).get(task.listPath)!).push(task);
    let pace: PaceScope | null = null;
    for (const [listPath, tasks] of groups) {
      if (this.listsInFlight.has(listPath) || !tasks.some((task) => task.nextPollAt <= now)) continue;
      const listable = getTool(tasks[0].tool).listShown;
      if (this.context.pacer) {
        pace ??= await this.context.pacer.scope();
        if (this.listsInFlight.has(listPath)) continue;
        const grant = listable ? this.context.pacer.poll(pace) : null;
        // Past a rate: asked when a place frees, never sent for a 429.
        if (grant && !grant.go) {
          for (const task of tasks) task.nextPollAt = Math.max(task.nextPollAt, grant.resetsAt);
          continue;
        }
      }
      this.listsInFlight.add(listPath);
      const asked = pace;
      void (
        listable
          ? this.pollList(listPath, tasks, asked)
          : this.pollEach(
              tasks.filter((task) => task.nextPollAt <= now),
              asked,
            )
      )
        .catch(() => {
          // The client already retried; the next tick tries again.
          for (const task of tasks) task.nextPollAt = Date.now() + this.context.poll.minMs;
        })
        .finally(() => {
          this.listsInFlight.delete(listPath);
          this.context.kick();
        });
    }
  }

  /**
   * The list is an optimisation, never the only source: one plain GET (no paging is declared), and
   * every due task it leaves out (it may show only the newest) or shows COMPLETED without results
   * (older deployments) is asked about by id, so no task is lost however many are in flight.
   */
  private async pollList(listPath: string, tasks: TrackedTask[], pace: PaceScope | null): Promise<void> {
    const wanted = new Set(tasks.map((task) => task.taskId));
    const found = new Map<string, TaskEnvelope>();
    for (const envelope of await this.context.tools.list(listPath))
      if (wanted.has(envelope.taskId)) found.set(envelope.taskId, envelope);
    const now = Date.now();
    const missing = tasks.filter((task) => !found.has(task.taskId) && task.nextPollAt <= now);
    const needDetail = tasks.filter(
      (task) => found.get(task.taskId)?.status === 'COMPLETED' && !found.get(task.taskId)!.generated?.length,
    );
    const details = await Promise.all([...missing, ...needDetail].map((task) => this.askById(task, pace)));
    for (const detail of details) if (detail) found.set(detail.taskId, detail);
    this.apply(tasks, found, now);
  }

  private async pollEach(tasks: TrackedTask[], pace: PaceScope | null): Promise<void> {
    const found = new Map<string, TaskEnvelope>();
    for (const detail of await Promise.all(tasks.map((task) => this.askById(task, pace))))
      if (detail) found.set(detail.taskId, detail);
    this.apply(tasks, found);
  }

  /** The task's envelope, or null: a task the server no longer knows is settled here; one paced waits its turn. */
  private async askById(task: TrackedTask, pace: PaceScope | null): Promise<TaskEnvelope | null> {
    const { store, tools, pacer } = this.context;
    if (pacer && pace) {
      const grant = pacer.poll(pace);
      if (!grant.go) {
        task.nextPollAt = grant.resetsAt;
        return null;
      }
    }
    try {
      return await tools.byId(task.tool, task.row.snapshot.slugs as Slugs, task.params, task.taskId);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        this.tracked.delete(task.jobId);
        if (onBuiltInSandbox(store, task.row)) store.move(task.jobId, 'running', 'queued', REQUEUE_FRESH);
        else store.move(task.jobId, 'running', 'needs_attention', { error: ATTENTION.lostTask });
      }
      return null;
    }
  }

  /** `askedUpTo`: tasks due by then were asked about; a later one the list left out was not. */
  private apply(tasks: TrackedTask[], found: Map<string, TaskEnvelope>, askedUpTo = Infinity): void {
    const { store, poll } = this.context;
    const now = Date.now();
    const toDownload: JobRow[] = [];
    store.transaction(() => {
      for (const task of tasks) {
        if (!this.tracked.has(task.jobId)) continue;
        const envelope = found.get(task.taskId);
        const kind = getTool(task.tool).result;
        if (envelope?.status === 'COMPLETED' && envelope.generated?.length) {
          this.tracked.delete(task.jobId);
          if (store.move(task.jobId, 'running', 'downloading', { generated: envelope.generated }))
            toDownload.push({ ...task.row, state: 'downloading', generated: envelope.generated });
        } else if (envelope?.status === 'FAILED') {
          this.tracked.delete(task.jobId);
          store.move(task.jobId, 'running', 'failed', { error: taskFailed(envelope.error) });
        } else if (envelope || (task.nextPollAt <= askedUpTo && task.nextPollAt <= now)) {
          task.nextPollAt = now + nextPollDelay(poll, kind, now - task.submittedAt);
        }
        // Else nothing was learnt of it (a list that left it out, or paced to later) and its turn
        // stays: else a group whose younger tasks fall due first would put it off forever.
      }
    });
    for (const row of toDownload) this.downloads.start(row);
  }
}
