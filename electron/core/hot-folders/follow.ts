import type { JobState } from '../../../shared/contract/jobs.ts';
import type { JobRow } from '../queue/store.ts';
import type { FileRow, HotFolderStore } from './store.ts';

/** What the hot folders need of the engine: the queue's job rows. */
export interface JobReader {
  jobRows(ids: readonly string[]): JobRow[];
}

const FAILED: readonly JobState[] = ['failed', 'canceled', 'needs_attention'];

/** A file's recorded state moved on with its job. */
export interface FileChange {
  row: FileRow;
  state: 'queued' | 'done' | 'failed';
  reason: string | null;
  output: string | null;
}

/**
 * Brings the files queued from hot folders up to their jobs: done with the result's path, failed
 * with why, queued again after a retry from the Queue. Any process may do it; each change is a
 * compare-and-set, so two doing it at once record it once.
 */
export function followJobs(store: HotFolderStore, engine: JobReader): FileChange[] {
  const rows = store.followed();
  if (!rows.length) return [];
  const jobs = new Map(engine.jobRows(rows.map((r) => r.jobId!)).map((j) => [j.id, j]));
  const changes: FileChange[] = [];
  for (const row of rows) {
    const job = jobs.get(row.jobId!);
    if (!job) continue;
    let change: FileChange | null = null;
    if (job.state === 'done' && row.state !== 'done')
      change = { row, state: 'done', reason: null, output: job.outputs.at(-1) ?? null };
    else if (FAILED.includes(job.state) && row.state !== 'failed')
      change = { row, state: 'failed', reason: job.error ?? job.state.replace('_', ' '), output: null };
    else if (!FAILED.includes(job.state) && job.state !== 'done' && row.state === 'failed')
      change = { row, state: 'queued', reason: null, output: null };
    if (change && store.setJobOutcome(row, change.state, change.reason, change.output)) changes.push(change);
  }
  return changes;
}
