import type { BatchRecord } from '../../../shared/contract/index.ts';

/**
 * What a batch came to. The core's `progress` counts settled jobs, canceled and failed included,
 * so a batch canceled after 59 of 290 would read "290/290": progress shown to people counts done.
 */
export function tally(b: BatchRecord) {
  const n = (s: keyof BatchRecord['counts']) => b.counts[s] ?? 0;
  const done = n('done');
  return {
    done,
    canceled: n('canceled'),
    failed: n('failed'),
    needs: n('needs_attention'),
    total: b.total,
    allDone: b.total > 0 && done === b.total,
  };
}

/** "59 done · 231 canceled · 2 failed · 1 need you": the states a finished batch ended in. */
export function endedParts(b: BatchRecord): string[] {
  const t = tally(b);
  return [t.done ? `${t.done} done` : '', ...unfinishedParts(b)].filter(Boolean);
}

/** "231 canceled · 2 failed · 1 need you": the jobs that settled without a result. */
export function unfinishedParts(b: BatchRecord): string[] {
  const t = tally(b);
  return [
    t.canceled ? `${t.canceled} canceled` : '',
    t.failed ? `${t.failed} failed` : '',
    t.needs ? `${t.needs} need you` : '',
  ].filter(Boolean);
}

/**
 * What batches started together came to, once every one is over ("Finished: 2 done, 1 failed."),
 * so a "queued" line does not stay after its work ends; null while any still runs.
 */
export function finishedLine(batches: readonly BatchRecord[]): string | null {
  if (!batches.length || batches.some((b) => !b.finished)) return null;
  const sum = (s: keyof BatchRecord['counts']) => batches.reduce((n, b) => n + (b.counts[s] ?? 0), 0);
  const parts = [
    sum('done') ? `${sum('done')} done` : '',
    sum('canceled') ? `${sum('canceled')} canceled` : '',
    sum('failed') ? `${sum('failed')} failed` : '',
    sum('needs_attention') ? `${sum('needs_attention')} need you` : '',
  ].filter(Boolean);
  return `Finished: ${parts.join(', ') || 'nothing ran'}.`;
}
