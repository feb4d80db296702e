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

/** "3 of 20 done", for the tray and its tooltip. */
export const progressWords = (p: WorkProgress) => `${p.settled} of ${p.total} done`;

/** What the tray says while the window is closed: "3 of 20 done", "Paused: 3 of 20 done", "All done". */
export function trayStatus(p: WorkProgress | null, paused: boolean): string {
  if (!p) return 'All done';
  return paused ? `Paused: ${progressWords(p)}` : progressWords(p);
}

/** What the tray shows while the window is closed: its tooltip, the status line of its menu, and the queue's toggle. */
export function trayLabels(p: WorkProgress | null, paused: boolean) {
  const status = trayStatus(p, paused);
  return { toolTip: `MediaDesk: ${status}`, status, toggle: paused ? 'Resume queue' : 'Pause queue' };
}

/** The taskbar/dock bar as Electron's setProgressBar takes it: the fraction settled, or -1 to remove the bar. */
export function taskbarProgress(p: WorkProgress | null, paused: boolean): { value: number; mode: 'normal' | 'paused' } {
  if (!p) return { value: -1, mode: 'normal' };
  return { value: p.settled / p.total, mode: paused ? 'paused' : 'normal' };
}

/** Closing the window keeps MediaDesk running (in the tray) only while work moves: the person comes back for it. */
export const keepsRunningWhenClosed = (p: WorkProgress | null, paused: boolean) => p !== null && !paused;
