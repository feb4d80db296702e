import type { Notice } from '../../../shared/contract/index.ts';
import { desk, on } from './bridge.ts';
import { queue } from './queue.svelte.ts';

type Permission = NotificationPermission | 'unsupported';

/**
 * The browser tab's system notifications of the core's `notices.show` (the desktop app's come from
 * its main process). The browser asks the person once, from a press of "Notify me when batches end".
 */
class BrowserNotices {
  permission = $state<Permission>(typeof Notification === 'undefined' ? 'unsupported' : Notification.permission);
  private started = false;

  start(): void {
    if (this.started || desk.host !== 'web') return;
    this.started = true;
    on('notices.show', ({ notices }) => notices.forEach((n) => this.show(n)));
  }

  /** Called from a press: browsers ask only then. */
  async ask(): Promise<void> {
    if (this.permission === 'unsupported') return;
    this.permission = await Notification.requestPermission();
  }

  private show(n: Notice): void {
    if (this.permission === 'unsupported' || Notification.permission !== 'granted') return;
    const shown = new Notification(n.title, { body: n.body, tag: n.key });
    shown.onclick = () => {
      window.focus();
      if (n.batchId) queue.showNext(n.batchId);
      location.hash = `#${n.screen}`;
      shown.close();
    };
  }
}

export const browserNotices = new BrowserNotices();
