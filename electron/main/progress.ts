import { Notification, type BrowserWindow } from 'electron';
import type { Notice } from '../../shared/contract/notices.ts';
import { desktopWork } from '../../shared/work-status.ts';
import type { Core } from '../core/index.ts';

/**
 * Taskbar/dock progress over the running batches, and the core's notices (core/notices decides
 * which, once) as system notifications; clicking one opens the window on its screen.
 */
export function wireBatchProgress(
  core: Core,
  win: () => BrowserWindow | null,
  open: (notice: Notice) => void,
): () => void {
  return core.events.onAny((name, payload) => {
    const w = win();
    if (name === 'jobs.changed' && w && !w.isDestroyed()) {
      const { value, mode } = desktopWork(core.notices?.unfinished() ?? [], core.engine.status()).bar;
      w.setProgressBar(value, { mode });
    }
    if (name !== 'notices.show' || !Notification.isSupported()) return;
    for (const notice of (payload as { notices: Notice[] }).notices) {
      const shown = new Notification({ title: notice.title, body: notice.body });
      shown.on('click', () => open(notice));
      shown.show();
    }
  });
}
