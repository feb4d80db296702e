import type { BatchRecord, BatchStartResult, JobRecord } from '../../../shared/contract/index.ts';
import { endedParts, tally } from './batch-tally.ts';

/* What is news of batches and jobs, in the words an Announcer says. */

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * News of batches as they change: one finished ("Upscale: batch done, 6 of 6." / "…: batch ended,
 * 4 done · 2 canceled.") or has more jobs that need you. A batch first met (the screen opening) is
 * no news; its later changes are.
 */
export class BatchNews {
  private seen = new Map<string, BatchRecord>();

  of(batches: readonly BatchRecord[], name: (b: BatchRecord) => string): string[] {
    const out: string[] = [];
    for (const b of batches) {
      const before = this.seen.get(b.id);
      this.seen.set(b.id, b);
      if (!before) continue;
      const t = tally(b);
      if (b.finished && !before.finished) out.push(`${name(b)}: batch ${t.allDone ? 'done' : 'ended'}, ${t.allDone ? `${t.done} of ${t.total}` : endedParts(b).join(' · ')}.`);
      else if (!b.finished && t.needs > tally(before).needs) out.push(`${name(b)}: ${plural(t.needs, 'job needs', 'jobs need')} you.`);
    }
    return out;
  }
}

const ENDED = { done: 'done', failed: 'failed', canceled: 'canceled', needs_attention: 'needs you' } as const;

/** News of jobs as they end ("Music: done." / "Music: failed: the reason."); a job first met is no news. */
export class JobNews {
  private seen = new Map<string, JobRecord['state']>();

  of(jobs: readonly JobRecord[], name: (j: JobRecord) => string): string[] {
    const out: string[] = [];
    for (const j of jobs) {
      const before = this.seen.get(j.id);
      this.seen.set(j.id, j.state);
      if (!before || before === j.state || !(j.state in ENDED)) continue;
      out.push(`${name(j)}: ${ENDED[j.state as keyof typeof ENDED]}${j.error ? `: ${j.error}` : ''}.`);
    }
    return out;
  }
}

/** What a Start came to: "Batch started: 12 jobs queued, 2 skipped, 1 rejected." */
export function startedNews(r: BatchStartResult): string {
  const parts = [
    r.resumed.length ? `${r.resumed.length} resumed` : '',
    r.skipped.length ? `${r.skipped.length} skipped` : '',
    r.rejected.length ? `${r.rejected.length} rejected` : '',
  ].filter(Boolean);
  return r.batch ? `Batch started: ${[`${plural(r.queued, 'job')} queued`, ...parts].join(', ')}.` : `Nothing to run: no job was queued${parts.length ? ` (${parts.join(', ')})` : ''}.`;
}
