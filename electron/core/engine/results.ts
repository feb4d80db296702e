import { ensureFolder } from '../output-folder.ts';
import { dirname, join } from 'node:path';
import { getTool, resolvePaths } from '../../../shared/catalogue/index.ts';
import { DEFAULT_SETTINGS, metadataSettingsOf } from '../../../shared/settings.ts';
import { provenanceOf, type Provenance, type ResultMetadata } from '../metadata/result-metadata.ts';
import type { GeneratedItem, ToolClient } from '../api/tools.ts';
import {
  downloadToPart,
  exists,
  ExpiredUrlError,
  placedAs,
  placeWithoutOverwrite,
  removeQuietly,
  sizeOf,
  TransientDownloadError,
  writeTextPart,
  retryWait,
  waitForRenewedLinks,
} from '../downloads/download.ts';
import { realClock, type Clock } from '../clock.ts';
import {
  extensionOf,
  metaPartPathOf,
  outputDirOf,
  partPathOf,
  renderName,
  jobStem,
  withCollisionSuffix,
} from '../downloads/naming.ts';
import { sameFileKey } from '../../../shared/file-names.ts';
import type { JobRow, JobStore } from '../queue/store.ts';
import type { Slugs } from '../../../shared/catalogue/index.ts';

export const urlOf = (g: GeneratedItem) => (typeof g === 'string' ? g : g.url);
const typeOf = (g: GeneratedItem) => (typeof g === 'string' ? undefined : g.content_type);

/** The job was moved by someone else (cancel) while we worked on it. */
export class JobMovedError extends Error {
  override name = 'JobMovedError';
}

export interface FetchDeps {
  store: JobStore;
  tools: ToolClient;
  slugs: Slugs;
  signal: AbortSignal;
  maxAttempts: number;
  /**
   * How long links that expired are waited for when the task hands out no fresh one: a result
   * already paid for is worth waiting for while the service keeps it. Default: until its lifetime ends.
   */
  expiredPatienceMs?: number;
  onBytes?: (n: number) => void;
  /**
   * Commits a store write and resolves after the commit (the engine groups the writes of one
   * event-loop turn into one transaction). Default: at once. Nothing on disk moves until it resolves.
   */
  write?: <T>(fn: () => T) => Promise<T>;
  /** Copies the source's metadata into results and records how they were made; absent: saved as downloaded. */
  metadata?: ResultMetadata;
  /** The time retries wait on (EngineOptions.clock); real time by default. */
  clock?: Clock;
}

export interface FetchedResults {
  outputs: string[];
  /** What was saved but not as asked (its metadata not copied, say), in words for the job. */
  notes: string[];
}

const writeNow = async <T>(fn: () => T): Promise<T> => fn();

/**
 * Output names held by downloads in progress here, by sameFileKey: two jobs whose inputs share a
 * name (photo.jpg, photo.png) must see each other's names as taken from planning on, or both
 * stream into one `.part` file and one paid result is lost.
 */
const inUse = new Map<string, string>();
/** The same by job, so a finished job lets go of its names without a walk over every job's. */
const heldBy = new Map<string, Set<string>>();

const holder = (path: string) => inUse.get(sameFileKey(path));

function take(jobId: string, path: string): void {
  const key = sameFileKey(path);
  inUse.set(key, jobId);
  const held = heldBy.get(jobId);
  if (held) held.add(key);
  else heldBy.set(jobId, new Set([key]));
}

function drop(jobId: string, path: string): void {
  const key = sameFileKey(path);
  inUse.delete(key);
  heldBy.get(jobId)?.delete(key);
}

/** Takes `paths` for `jobId` if no other job holds any of them; all or nothing. Exported for its test. */
export function hold(jobId: string, paths: readonly string[]): boolean {
  if (paths.some((p) => (holder(p) ?? jobId) !== jobId)) return false;
  for (const p of paths) take(jobId, p);
  return true;
}

export function release(jobId: string): void {
  for (const p of heldBy.get(jobId) ?? []) inUse.delete(p);
  heldBy.delete(jobId);
}

/** Output paths reserved for each result, so a resumed download continues the same part file. */
async function plan(job: JobRow, items: GeneratedItem[], store: JobStore): Promise<string[]> {
  const tool = getTool(job.tool);
  const dir = outputDirOf(job.outDir, job.relDir);
  const name = jobStem(tool, job);
  const planned: string[] = [];
  for (let i = 0; i < items.length; i++) {
    const ext = extensionOf(tool.result === 'text' ? null : urlOf(items[i]), typeOf(items[i]), tool.result);
    const base = join(
      dir,
      renderName(
        job.snapshot.namingTemplate,
        { name, tool: job.tool, ext, batch: job.batchId, date: new Date(job.createdAt) },
        i,
      ),
    );
    for (let k = 1; ; k++) {
      const p = withCollisionSuffix(base, k);
      if (planned.some((q) => sameFileKey(q) === sameFileKey(p)) || (holder(p) ?? job.id) !== job.id) continue;
      // Held before the first await, so a job planning meanwhile sees it taken; let go again if a
      // file is there, or the part file of another job's paused download (resuming it would
      // splice that job's bytes into this result). Our own part, from before a Retry, is ours.
      take(job.id, p);
      if ((await exists(p)) || ((await exists(partPathOf(p))) && store.plannedBy(p, job.id))) {
        drop(job.id, p);
        continue;
      }
      planned.push(p);
      break;
    }
  }
  return planned;
}

/**
 * Brings every result of a job to its final file: streamed into `<final>.part`, flushed, then
 * linked into place without overwriting anything, recorded, and only then the part removed. Each
 * step is recorded so a crash at any point resumes without a partial or duplicated output.
 */
export async function fetchResults(job: JobRow, deps: FetchDeps): Promise<FetchedResults> {
  try {
    return await fetchHeld(job, deps);
  } finally {
    // What was placed is protected by its file, a paused download by its part file.
    release(job.id);
  }
}

async function fetchHeld(job: JobRow, deps: FetchDeps): Promise<FetchedResults> {
  const { store } = deps;
  const write = deps.write ?? writeNow;
  const tool = getTool(job.tool);
  let items = job.generated ?? [];
  if (items.length === 0) {
    const env = await deps.tools.byId(job.tool, deps.slugs, job.params, job.taskId!);
    items = env.generated ?? [];
    if (items.length === 0) throw new Error('the task completed without any result');
    if (!(await write(() => store.patch(job.id, 'downloading', { generated: items })))) throw new JobMovedError();
  }
  // A resumed job keeps its names (its part file is there), unless a job running now holds one.
  let planned =
    job.planned &&
    job.planned.length === (tool.result === 'text' ? 1 : items.length) &&
    hold(job.id, job.planned.slice(job.outputs.length))
      ? job.planned
      : null;
  // A name planned just now did not exist a moment ago: no earlier run can have placed a part there.
  const fresh = !planned;
  if (!planned) {
    planned = await plan(job, tool.result === 'text' ? [items.map(urlOf).join('\n')] : items, store);
    if (!(await write(() => store.patch(job.id, 'downloading', { planned })))) throw new JobMovedError();
  }
  // The folders of the names planned (a resumed job's were planned by the build that planned them).
  for (const dir of new Set(planned.slice(job.outputs.length).map((p) => dirname(p)))) await ensureFolder(dir);
  const outputs = [...job.outputs];
  const notes: string[] = [];
  const note = (n: string | null) => n && !notes.includes(n) && notes.push(n);
  const settings = metadataSettingsOf(job.snapshot.metadata ?? DEFAULT_SETTINGS);
  const provenance = deps.metadata && tool.result !== 'text' ? provenanceFor(job, deps) : null;
  for (let i = outputs.length; i < planned.length; i++) {
    const base = planned[i];
    // The part is named after the planned output and never renamed, so a resumed run finds it.
    const part = partPathOf(base);
    // The part with the metadata written in: the one placed when there is one.
    const twin = metaPartPathOf(base);
    const placed = fresh ? null : await placedAs([part, twin], base);
    if (placed) {
      // The last run placed this file but died before recording it.
      if (!(await write(() => store.patch(job.id, 'downloading', { outputs: [...outputs, placed] }))))
        throw new JobMovedError();
      outputs.push(placed);
      if (provenance && settings.provenanceSidecar) note(await deps.metadata!.writeSidecar(placed, provenance));
      await removeQuietly(part);
      await removeQuietly(twin);
      continue;
    }
    if (tool.result === 'text') await writeTextPart(part, items.map(urlOf).join('\n'));
    else items = await downloadWithRetries(job, i, items, part, deps);
    let finished = part;
    if (provenance) {
      const meta = await deps.metadata!.writeInto(part, twin, {
        final: base,
        source: job.inputPath,
        provenance,
        settings,
      });
      note(meta.problem);
      if (meta.written) finished = twin;
    }
    let k = 1;
    let final = base;
    while (!(await placeWithoutOverwrite(finished, final))) {
      // A file appeared at our name since we planned it (the user's, or another job's): never replace it.
      final = withCollisionSuffix(base, ++k);
    }
    if (!(await write(() => store.patch(job.id, 'downloading', { outputs: [...outputs, final] })))) {
      await removeQuietly(part);
      await removeQuietly(twin);
      throw new JobMovedError();
    }
    outputs.push(final);
    if (provenance && settings.provenanceSidecar) note(await deps.metadata!.writeSidecar(final, provenance));
    await removeQuietly(part);
    await removeQuietly(twin);
  }
  return { outputs, notes: notes.map((n) => `saved; ${n}`) };
}

function provenanceFor(job: JobRow, deps: FetchDeps): Provenance {
  const tool = getTool(job.tool);
  return provenanceOf({
    tool: tool.id,
    toolTitle: tool.title,
    modelPath: resolvePaths(tool, deps.slugs, job.params).create,
    params: job.params,
    taskId: job.taskId,
    inputPath: job.inputPath,
  });
}

/** How long the service keeps a job's results: its tool's lifetime, else the spec's 24 h, from its submission. */
export const DEFAULT_RESULT_LIFETIME_MS = 24 * 3_600_000;
const keptUntil = (job: JobRow) => job.expiresAt ?? (job.submittedAt ?? job.createdAt) + DEFAULT_RESULT_LIFETIME_MS;

async function downloadWithRetries(
  job: JobRow,
  i: number,
  items: GeneratedItem[],
  part: string,
  deps: FetchDeps,
): Promise<GeneratedItem[]> {
  let lastError: Error | null = null;
  const clock = deps.clock ?? realClock;
  const waitUntil = deps.expiredPatienceMs !== undefined ? clock.now() + deps.expiredPatienceMs : keptUntil(job);
  let expiredRounds = 0;
  // Attempts that moved bytes do not count: a flaky link that keeps delivering is worth following
  // (bounded overall so a pathological server cannot keep a slot forever).
  for (let attempt = 1, rounds = 0; attempt <= deps.maxAttempts && rounds < 200; attempt++, rounds++) {
    if (deps.signal.aborted) throw new Error('stopped');
    const partBytes = await sizeOf(part);
    try {
      await downloadToPart(urlOf(items[i]), part, { signal: deps.signal, onBytes: deps.onBytes, partBytes });
      return items;
    } catch (err) {
      if (deps.signal.aborted) throw err;
      lastError = err as Error;
      if (err instanceof ExpiredUrlError) {
        // Result links expire (24 h for video): the task itself hands out a fresh one, and while the
        // service keeps the results a link it cannot renew now may work later; neither uses up tries.
        await removeQuietly(part);
        const env = await deps.tools.byId(job.tool, deps.slugs, job.params, job.taskId!);
        attempt--;
        if (env.generated?.length && urlOf(env.generated[i] ?? '') !== urlOf(items[i])) {
          items = env.generated;
          if (!(await (deps.write ?? writeNow)(() => deps.store.patch(job.id, 'downloading', { generated: items }))))
            throw new JobMovedError();
          continue;
        }
        rounds--;
        await waitForRenewedLinks(err, ++expiredRounds, waitUntil, deps.signal, clock);
        continue;
      } else if (!(err instanceof TransientDownloadError)) {
        throw err;
      } else if ((await sizeOf(part)) > partBytes) {
        attempt--;
      }
      await retryWait(Math.min(5000, 100 * 2 ** attempt * (0.5 + Math.random())), deps.signal, clock);
    }
  }
  throw new Error(`${lastError?.message ?? 'the transfer did not complete'}; tried ${deps.maxAttempts} times`);
}
