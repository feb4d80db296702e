import { Notification, type BrowserWindow } from 'electron';
import type { Core } from '../core/index.ts';

/**
 * Taskbar/dock progress while batches run, and an OS notification when one ends, so a designer
 * can leave a long folder running and come back when it is done.
 */
export function wireBatchProgress(core: Core, win: BrowserWindow): () => void {
  const announced = new Set<string>();
  return core.events.onAny((name, payload) => {
    if (name !== 'jobs.changed' || win.isDestroyed()) return;
    const { batches } = payload as {
      batches: {
        id: string;
        tool: string;
        total: number;
        progress: number;
        finished: boolean;
        counts: Record<string, number>;
      }[];
    };
    const running = batches.filter((b) => !b.finished);
    win.setProgressBar(running.length ? running.reduce((n, b) => n + b.progress, 0) / running.length : -1);
    for (const b of batches) {
      if (!b.finished || announced.has(b.id)) continue;
      announced.add(b.id);
      const trouble = (b.counts.failed ?? 0) + (b.counts.needs_attention ?? 0);
      if (Notification.isSupported()) {
        new Notification({
          title: trouble ? 'Batch finished with problems' : 'Batch done',
          body: `${b.tool}: ${b.counts.done ?? 0} of ${b.total} done${trouble ? `, ${trouble} need a look` : ''}`,
        }).show();
      }
    }
  });
}
