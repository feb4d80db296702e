import type {
  BatchRecord,
  BatchStartResult,
  JobRecord,
  QueueStatus,
  UploadProgress,
} from '../../../shared/contract/index.ts';
import { MOVING_STATES } from '../../../shared/contract/job-states.ts';
import { endedParts, tally } from './batch-tally.ts';
import { copyingText } from './upload.ts';

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
      if (b.finished && !before.finished)
        out.push(
          `${name(b)}: batch ${t.allDone ? 'done' : 'ended'}, ${t.allDone ? `${t.done} of ${t.total}` : endedParts(b).join(' · ')}.`,
        );
      else if (!b.finished && t.needs > tally(before).needs)
        out.push(`${name(b)}: ${plural(t.needs, 'job needs', 'jobs need')} you.`);
    }
    return out;
  }
}

const ENDED = { done: 'done', failed: 'failed', canceled: 'canceled', needs_attention: 'needs you' } as const;

/**
 * News of jobs (or app runs, which share their states) as they end ("Music: done." / "Music:
 * failed: the reason."); one first met is no news.
 */
export class JobNews {
  private seen = new Map<string, JobRecord['state']>();

  of<T extends Pick<JobRecord, 'id' | 'state' | 'error'>>(jobs: readonly T[], name: (j: T) => string): string[] {
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
  return r.batch
    ? `Batch started: ${[`${plural(r.queued, 'job')} queued`, ...parts].join(', ')}.`
    : `Nothing to run: no job was queued${parts.length ? ` (${parts.join(', ')})` : ''}.`;
}

/**
 * News of the queue's wait for the server (QueueStatus.serviceWait): once as it starts, with why, and
 * once as it ends; never at the retries in between, which serviceWait outlasts. A wait already on
 * when the screen opens is no news: the header shows it.
 */
export class HeldBackNews {
  private was: string | null | undefined;

  of(s: QueueStatus | null): string | null {
    if (!s) return null;
    const was = this.was;
    this.was = s.serviceWait;
    if (was === undefined || !was === !s.serviceWait) return null;
    if (s.serviceWait)
      return `Queue waiting: ${s.serviceWait}. Nothing was charged; the jobs are sent again by themselves.`;
    // Over because nothing is left to send (the waiting jobs canceled) is no going on.
    const moving = MOVING_STATES.some((k) => (s.counts[k] ?? 0) > 0);
    return moving ? 'Queue going on: the server takes jobs again.' : 'The queue no longer waits.';
  }
}

/**
 * What a drop's copy to the host says while it runs: nothing within `afterMs`, then that it started,
 * then how far it is at most once per `everyMs`, so a long copy is known to be going without a count
 * every second talking over the form the user fills meanwhile.
 */
export class CopyNews {
  private say: (m: string) => void;
  private afterMs: number;
  private everyMs: number;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private saidAt = 0;

  constructor(say: (m: string) => void, afterMs = 1000, everyMs = 15_000) {
    this.say = say;
    this.afterMs = afterMs;
    this.everyMs = everyMs;
  }

  start(total: number): void {
    this.stop();
    this.timer = setTimeout(() => {
      this.saidAt = Date.now();
      this.say(`Copying ${plural(total, 'file')} to MediaDesk…`);
    }, this.afterMs);
  }

  progress(p: UploadProgress): void {
    if (!this.saidAt || Date.now() - this.saidAt < this.everyMs || p.copied + p.failed >= p.total) return;
    this.saidAt = Date.now();
    this.say(copyingText(p));
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.saidAt = 0;
  }
}
