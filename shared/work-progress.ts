import type { BatchRecord } from './contract/jobs.ts';

/** Jobs settled of the jobs in unfinished batches: what the tab title, the taskbar and the tray show. */
export interface WorkProgress {
  settled: number;
  total: number;
}

/** Progress over the batches that are not finished; null when none is (nothing runs). */
export function workProgress(
  batches: Iterable<Pick<BatchRecord, 'finished' | 'total' | 'progress'>>,
): WorkProgress | null {
  let settled = 0;
  let total = 0;
  for (const b of batches) {
    if (b.finished) continue;
    settled += Math.round(b.progress * b.total);
    total += b.total;
  }
  return total > 0 ? { settled, total } : null;
}

/** "3 of 20 done", for the tray and its tooltip (desktopWork). */
export const progressWords = (p: WorkProgress) => `${p.settled} of ${p.total} done`;
