import { randomUUID } from 'node:crypto';
import { getTool, type ToolEntry } from '../../../shared/catalogue/index.ts';
import { throttled } from '../../../shared/concurrency.ts';
import { DeskError } from '../../../shared/contract/define.ts';
import type { BatchBudget, BatchCheckResult, BatchStartResult } from '../../../shared/contract/jobs.ts';
import { isAbsolutePath, metadataSettingsOf } from '../../../shared/settings.ts';
import { assertOutputFolder, outputFolderProblem } from '../output-folder.ts';
import { batchResultsFolder, canonicalPath } from '../paths.ts';
import type { JobStore, NewJob } from '../queue/store.ts';
import { resultPathTooLong, sortInputs } from './input-sort.ts';
import type { EngineOptions } from './options.ts';
import { assertParams } from './params-check.ts';
import { batchFieldOf } from './request.ts';

/** A check's progress at most every 200 ms, and its last count: thousands of files, not thousands of events. */
const CHECK_PROGRESS_MS = 200;

export interface StartRequest {
  tool: string;
  inputs?: string[];
  params?: Record<string, unknown>;
  outDir?: string;
  budget?: BatchBudget;
  /** The project its creates count against (a team budget per project). */
  project?: string;
  /** The tool's price told before Start (BatchEstimator.priceEach), stored with the batch. */
  estimate?: { creditsEach: number | null; basis: string };
}

export interface CheckRequest {
  tool: string;
  inputs: string[];
  params?: Record<string, unknown>;
  outDir?: string;
  checkId?: string;
}

export interface PlannerDeps {
  store: JobStore;
  options: EngineOptions;
  /** Runner.settleGoneSandbox: resumed jobs are reported as they stand. */
  settleGoneSandbox: () => void;
  /** Wakes the loop for the jobs just queued. */
  kick: () => void;
}

/** Plans batches: checks and sorts their inputs, then creates the batch and its jobs (or resumes earlier ones). */
export class BatchPlanner {
  private readonly deps: PlannerDeps;
  /** Running checks by checkId: a newer one stops the older. */
  private readonly checks = new Map<string, AbortController>();

  constructor(deps: PlannerDeps) {
    this.deps = deps;
  }

  private get platform(): string {
    return this.deps.options.platform ?? process.platform;
  }

  /** RESULTS_RULE's folder for a batch given no output folder; '' when Settings name none (the queue alone, in tests). */
  private async ruleFolder(tool: ToolEntry, inputs: readonly string[]): Promise<string> {
    const root = this.deps.options.settings().outputDir;
    return root ? batchResultsFolder(root, tool.title, inputs, this.deps.options.inbox) : '';
  }

  /**
   * Queues a tool over files and folders, after every local check (parameters, each input's format,
   * size and dimensions) and before anything is paid for. Inputs whose output exists are skipped;
   * inputs with an unfinished job of an earlier run are resumed, never queued twice.
   */
  async startBatch(req: StartRequest): Promise<BatchStartResult> {
    const { store, options } = this.deps;
    const tool = toolOf(req.tool);
    const settings = options.settings();
    // The batch belongs to the backend in use now; an open job of another backend's batch is not followed.
    const backend = options.identity ? await options.identity() : null;
    this.deps.settleGoneSandbox();
    const inputs = await Promise.all((req.inputs ?? []).map((input) => canonicalPath(input)));
    const outDirRaw = req.outDir ?? (await this.ruleFolder(tool, inputs));
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
    const field = batchFieldOf(tool);
    if (inputs.length && !field)
      throw new DeskError('invalid', `${tool.title} takes no input files; give its parameters only`);
    await assertParams(tool, params, inputs.length > 0);

    const skipped: { path: string; reason: string }[] = [];
    const resumed: string[] = [];
    const newJobs: NewJob[] = [];
    const rejected: { path: string; reason: string }[] = [];
    const renamed: { path: string; reason: string }[] = [];
    if (field && inputs.length) {
      const sorted = await sortInputs(store, tool, inputs, outDir, backend, settings, this.platform, { params });
      renamed.push(...sorted.renamed);
      skipped.push(...sorted.skipped);
      rejected.push(...sorted.rejected);
      resumed.push(...sorted.resumed);
      for (const input of sorted.ready)
        newJobs.push({ id: randomUUID(), inputPath: input.path, relDir: input.relDir, params });
    } else {
      const tooLong = resultPathTooLong(tool, settings.namingTemplate, outDir, '', null, this.platform);
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
      return { batch: null, queued: 0, resumed, skipped, rejected, renamed, jobIds: [], outDir };
    }
    if (newJobs.length === 0 && resumed.length > 0) {
      // A re-run that only resumes earlier jobs reports their batch instead of adding an empty one.
      const batch = store.batch(store.get(resumed[0])!.batchId)!;
      this.deps.kick();
      return { batch, queued: 0, resumed, skipped, rejected, renamed, jobIds: resumed, outDir: batch.outDir };
    }
    const batchId = randomUUID();
    // The open-job check above ran before the awaits of the pre-flight; the insert checks again
    // under the write lock, so a folder started twice at once is queued (and paid for) once.
    const insert = store.insertBatch({
      id: batchId,
      tool: tool.id,
      outDir,
      params,
      roots: inputs,
      snapshot: {
        namingTemplate: settings.namingTemplate,
        slugs: options.slugs(),
        metadata: metadataSettingsOf(settings),
      },
      backend,
      jobs: newJobs,
      estimate: req.estimate,
      budget: req.budget,
      project: req.project ?? null,
    });
    resumed.push(...insert.resumed);
    this.deps.kick();
    const batch = insert.inserted.length ? store.batch(batchId)! : store.batch(store.get(resumed[0])!.batchId)!;
    return {
      batch,
      queued: insert.inserted.length,
      resumed,
      skipped,
      rejected,
      renamed,
      jobIds: [...insert.inserted.map((job) => job.id), ...resumed],
      outDir: batch.outDir,
    };
  }

  /**
   * What a Start over these inputs would queue, skip and reject, told before it (batches.check): the
   * same sortInputs, so the two cannot disagree; Start runs it again, as files change in between. A
   * newer check under the same `checkId` stops this one.
   */
  async checkBatch(
    req: CheckRequest,
    onProgress?: (progress: { checkId: string; checked: number; total: number }) => void,
  ): Promise<BatchCheckResult> {
    const { store, options } = this.deps;
    const tool = toolOf(req.tool);
    if (!batchFieldOf(tool))
      throw new DeskError('invalid', `${tool.title} takes no input files; give its parameters only`);
    // Parameters Start would refuse are refused here, the same way, before any input is read.
    if (req.params) await assertParams(tool, req.params, true);
    const stop = new AbortController();
    if (req.checkId) {
      this.checks.get(req.checkId)?.abort();
      this.checks.set(req.checkId, stop);
    }
    try {
      const backend = options.identity ? await options.identity() : null;
      const inputs = await Promise.all(req.inputs.map((input) => canonicalPath(input)));
      // A folder Start would refuse is reported at Start; the inputs are still checked.
      const outDirRaw = req.outDir ?? (await this.ruleFolder(tool, inputs));
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
      const sorted = await sortInputs(store, tool, inputs, usable, backend, options.settings(), this.platform, {
        params: req.params,
        signal: stop.signal,
        onChecked: progress,
      });
      return {
        ready: sorted.ready.length,
        resumed: sorted.resumed.length,
        skipped: sorted.skipped,
        rejected: sorted.rejected,
        renamed: sorted.renamed,
        outDir,
      };
    } finally {
      if (req.checkId && this.checks.get(req.checkId) === stop) this.checks.delete(req.checkId);
    }
  }
}

/** The catalogue entry of `id`; an unknown tool is the request's fault. */
function toolOf(id: string): ToolEntry {
  try {
    return getTool(id);
  } catch (err) {
    throw new DeskError('invalid', (err as Error).message);
  }
}
