import { basename, dirname } from 'node:path';
import { findTool } from '../../../shared/catalogue/index.ts';
import type { HotFolderRecord } from '../../../shared/contract/hot-folders.ts';
import type { BatchRecord, JobRecord, JobsChanged, QueueStatus } from '../../../shared/contract/jobs.ts';
import { batchWorkState, workLine } from '../../../shared/work-status.ts';
import type { Notice } from '../../../shared/contract/notices.ts';
import type { AppRun } from '../../../shared/contract/team.ts';

/** The keys of the notices already told; durable (ToldFile) so a restart does not tell them again. */
export interface ToldSet {
  has(key: string): boolean;
  add(keys: readonly string[]): void;
}

const NOUNS: Record<string, [string, string]> = {
  image: ['image', 'images'],
  video: ['video', 'videos'],
  audio: ['track', 'tracks'],
  text: ['prompt', 'prompts'],
};
const toolTitle = (id: string) => findTool(id)?.title ?? id;
const count = (n: number, [one, many]: [string, string]) => `${n} ${n === 1 ? one : many}`;
const fileName = (path: string | null) => (path ? basename(path) : 'a prompt');

/** What came of a batch or burst: "18 done, 2 failed, 1 needs you"; only the parts that happened. */
function outcome(done: number, failed: number, needs: number, canceled: number): string {
  return [
    `${done} done`,
    failed ? `${failed} failed` : '',
    needs ? `${needs} need${needs === 1 ? 's' : ''} you` : '',
    canceled ? `${canceled} canceled` : '',
  ]
    .filter(Boolean)
    .join(', ');
}

interface Burst {
  pending: number;
  /** Done and failed files when the burst began: the notice counts what came after. */
  done: number;
  failed: number;
}

/**
 * Decides which system notices the queue's events make: a batch that ended, jobs that need the
 * person, a workflow-app run that ended, a hot folder whose burst of files all settled. Each
 * notice has a key naming that end, told once (`told`), whichever host shows it.
 */
export class NoticeDecider {
  private readonly told: ToldSet;
  /** Pending files per hot folder as last seen, and the counts its current burst began from. */
  private readonly bursts = new Map<string, Burst>();

  constructor(told: ToldSet) {
    this.told = told;
  }

  /** From a `jobs.changed` event; `hotFolders` as listed now (their batches are told as bursts instead). */
  fromJobs(
    e: Pick<JobsChanged, 'batches' | 'jobs'> & { status?: QueueStatus },
    hotFolders: readonly HotFolderRecord[],
  ): Notice[] {
    const fromHotFolder = (job: JobRecord) =>
      !!job.input && hotFolders.some((f) => f.tool === job.tool && dirname(job.input!) === f.folder);
    const hotBatches = new Set(e.jobs.filter(fromHotFolder).map((j) => j.batchId));
    const notices: Notice[] = [];
    for (const b of e.batches) {
      if (b.finished && !hotBatches.has(b.id)) notices.push(...this.batchEnd(b));
      if (!b.finished) notices.push(...this.needsYou(b, e.jobs), ...this.held(b, e.status));
    }
    return [...notices, ...this.fromHotFolders(hotFolders)];
  }

  private batchEnd(b: BatchRecord): Notice[] {
    const c = (s: keyof BatchRecord['counts']) => b.counts[s] ?? 0;
    const [done, failed, needs, canceled] = [c('done'), c('failed'), c('needs_attention'), c('canceled')];
    const key = `batch:${b.id}:${done}:${failed}:${needs}:${canceled}`;
    // A batch the person canceled whole ends as they asked: nothing to tell.
    if (done + failed + needs === 0) return this.once(key, null);
    const tool = findTool(b.tool);
    const clean = failed + needs + canceled === 0;
    return this.once(key, {
      title: `${toolTitle(b.tool)}: ${clean ? `${count(done, NOUNS[tool?.result ?? 'image'] ?? NOUNS.image)} done` : outcome(done, failed, needs, canceled)}`,
      body: failed + needs ? 'See what needs a look in the Queue.' : `Results are in ${b.outDir}`,
      screen: 'queue',
      batchId: b.id,
    });
  }

  /** Jobs of a running batch that stopped for a decision; the batch's end notice counts them once it ends. */
  /**
   * A batch its budget paused, or held at its tool's daily cap: told once per hold, in the words of
   * the Studio and the Queue (shared/work-status.ts). A wait for the service passes by itself: not told.
   */
  private held(b: BatchRecord, status: QueueStatus | undefined): Notice[] {
    const state = batchWorkState(b, status ?? null);
    if (state?.kind !== 'budget' && state?.kind !== 'capped') return [];
    const sent = Object.entries(b.counts).reduce((n, [s, k]) => (s === 'queued' ? n : n + k), 0);
    return this.once(`${state.kind === 'budget' ? 'held' : 'capped'}:${b.id}:${sent}`, {
      title: `${toolTitle(b.tool)}: ${state.label}`,
      body: workLine(state),
      screen: 'queue',
      batchId: b.id,
    });
  }

  private needsYou(b: BatchRecord, jobs: readonly JobRecord[]): Notice[] {
    const fresh = jobs
      .filter((j) => j.batchId === b.id && j.state === 'needs_attention')
      .map((j) => ({ job: j, key: `needs:${j.id}:${j.attempts}` }))
      .filter(({ key }) => !this.told.has(key));
    if (!fresh.length) return [];
    this.told.add(fresh.map((f) => f.key));
    const first = fresh[0].job;
    return [
      {
        key: fresh.map((f) => f.key).join(' '),
        title:
          fresh.length === 1
            ? `A job needs you: ${fileName(first.input)}`
            : `${fresh.length} jobs need you: ${toolTitle(b.tool)}`,
        body:
          fresh.length === 1
            ? `${toolTitle(b.tool)}: ${first.error ?? 'decide in the Queue what to do with it'}`
            : 'Decide in the Queue what to do with them.',
        screen: 'queue',
        batchId: b.id,
      },
    ];
  }

  /** From an `apps.changed` event: each run that ended (one the person canceled is not told). */
  fromApps(runs: readonly AppRun[]): Notice[] {
    return runs.flatMap((r) => {
      const key = `app:${r.id}:${r.state}:${r.attempts}`;
      const words: Partial<Record<AppRun['state'], [string, string]>> = {
        done: [`${r.appName}: run finished`, `Results are in ${r.outDir}`],
        failed: [`${r.appName}: run failed`, r.error ?? 'See why in Workflow apps.'],
        needs_attention: [`A job needs you: ${r.appName}`, r.error ?? 'Decide in Workflow apps what to do with it.'],
        canceled: ['', ''],
      };
      const said = words[r.state];
      if (!said) return [];
      return this.once(key, said[0] ? { title: said[0], body: said[1], screen: 'apps', batchId: null } : null);
    });
  }

  /** A hot folder's burst ends when its waiting and queued files, more than none, are all settled. */
  fromHotFolders(folders: readonly HotFolderRecord[]): Notice[] {
    const notices: Notice[] = [];
    for (const f of folders) {
      const pending = f.counts.waiting + f.counts.queued;
      const seen = this.bursts.get(f.id);
      if (!seen || (seen.pending === 0 && pending > 0)) {
        this.bursts.set(f.id, { pending, done: f.counts.done, failed: f.counts.failed });
        continue;
      }
      const ended = seen.pending > 0 && pending === 0;
      const [done, failed] = [Math.max(0, f.counts.done - seen.done), Math.max(0, f.counts.failed - seen.failed)];
      if (pending === 0) this.bursts.set(f.id, { pending, done: f.counts.done, failed: f.counts.failed });
      if (!ended || done + failed === 0) continue;
      const name = basename(f.folder);
      notices.push(
        ...this.once(`hot:${f.id}:${f.counts.done}:${f.counts.failed}`, {
          title: `Hot folder ${name}: ${failed ? outcome(done, failed, 0, 0) : `${count(done, NOUNS.image)} done`}`,
          body: failed ? 'See what failed in Hot folders.' : `Results are in ${f.outDir}`,
          screen: 'hot-folders',
          batchId: null,
        }),
      );
    }
    return notices;
  }

  /** The notice under `key` unless it was told; either way `key` is told from now on. */
  private once(key: string, notice: Omit<Notice, 'key'> | null): Notice[] {
    if (this.told.has(key)) return [];
    this.told.add([key]);
    return notice ? [{ key, ...notice }] : [];
  }
}
