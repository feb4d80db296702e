import type { Slugs } from '../../../shared/catalogue/index.ts';
import { ApiError } from '../api/client.ts';
import { fromAnotherSandbox } from '../backend.ts';
import { removeQuietly } from '../downloads/download.ts';
import { metaPartPathOf, partPathOf } from '../downloads/naming.ts';
import { ResultMetadata } from '../metadata/result-metadata.ts';
import { downloadFailed } from '../queue/job-messages.ts';
import { REQUEUE_FRESH } from '../queue/states.ts';
import type { JobRow } from '../queue/store.ts';
import { onBuiltInSandbox, type LoopContext } from './context.ts';
import { fetchResults, JobMovedError } from './results.ts';

const DAY_MS = 86_400_000;

const removePartsOf = async (planned: string) => {
  await removeQuietly(partPathOf(planned));
  await removeQuietly(metaPartPathOf(planned));
};

/** The download step: a job's results fetched into its output folder, and the part files it leaves. */
export class Downloader {
  private readonly context: LoopContext;
  private readonly aborts = new Map<string, AbortController>();
  /** One exiftool process for this engine's results (and the app runs' and creations'), started at first use. */
  readonly metadata: ResultMetadata;

  constructor(context: LoopContext) {
    this.context = context;
    this.metadata = new ResultMetadata({ warn: context.options.warn, maxProcs: context.options.metadataProcs });
  }

  /** Starts fetching a `downloading` job's results, unless a step of that job is running. */
  start(job: JobRow): void {
    const { store, options } = this.context;
    if (this.context.isBusy(job.id)) return;
    const abort = new AbortController();
    this.aborts.set(job.id, abort);
    this.context.run(job.id, async () => {
      try {
        if (await this.resultsGoneWithSandbox(job)) {
          await this.context.write(() => store.move(job.id, 'downloading', 'queued', REQUEUE_FRESH));
          return;
        }
        const { notes } = await fetchResults(job, {
          store,
          tools: this.context.tools,
          slugs: job.snapshot.slugs as Slugs,
          signal: abort.signal,
          maxAttempts: options.downloadAttempts ?? 8,
          expiredPatienceMs: options.expiredPatienceMs,
          write: (fn) => this.context.write(fn),
          metadata: this.metadata,
          clock: this.context.clock,
        });
        const error = notes.length ? notes.join('; ') : null;
        await this.context.write(() => store.move(job.id, 'downloading', 'done', { error }));
      } catch (err) {
        if (abort.signal.aborted || err instanceof JobMovedError) return;
        const message = err instanceof ApiError ? err.describe() : (err as Error).message;
        await this.context.write(() => store.move(job.id, 'downloading', 'failed', { error: downloadFailed(message) }));
      } finally {
        this.aborts.delete(job.id);
      }
    });
  }

  /** Stops a job's download; its part files stay and resume next time. */
  abort(jobId: string): void {
    this.aborts.get(jobId)?.abort();
  }

  abortAll(): void {
    for (const abort of this.aborts.values()) abort.abort();
  }

  /** Ends the exiftool process once no download runs; the next result starts another. */
  endMetadata(): Promise<void> {
    return this.metadata.end();
  }

  async removeParts(job: JobRow): Promise<void> {
    for (const path of job.planned ?? []) await removePartsOf(path);
  }

  /**
   * Removes `.part` files left by a crash, but only ours: parts of planned outputs of jobs that are
   * not downloading now (a user's unrelated `.part` file is never touched).
   */
  async removeStaleParts(): Promise<void> {
    for (const row of this.context.store.unfinishedPlans()) {
      const doneCount = row.outputs.length;
      for (const [i, path] of row.planned.entries()) {
        if (row.state === 'downloading' && i >= doneCount) continue;
        await removePartsOf(path);
      }
    }
    const done = this.context.store.plansDoneSince(Date.now() - DAY_MS);
    for (const planned of done) for (const path of planned) await removePartsOf(path);
  }

  /**
   * Results of the built-in Sandbox are served by the Sandbox that made them, in one process: URLs
   * of another one (an earlier run of the app, a stopped CLI) lead nowhere, and retrying them helps
   * no one. Unknown without builtInSandboxUrl (tests of the queue alone).
   */
  private async resultsGoneWithSandbox(job: JobRow): Promise<boolean> {
    const first = job.generated?.[0];
    // A text result (image-to-prompt) is the result itself, not a URL.
    const url = typeof first === 'string' ? first : first?.url;
    const { options, store } = this.context;
    if (!options.builtInSandboxUrl || !url || !/^https?:\/\//i.test(url) || !onBuiltInSandbox(store, job)) return false;
    return fromAnotherSandbox(url, await options.builtInSandboxUrl());
  }
}
