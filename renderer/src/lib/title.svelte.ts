/**
 * The window title: "MediaDesk — 12/20" while a batch runs, "MediaDesk — batch done" at the end
 * (or "batch ended: 59 done, 231 canceled" when it was canceled part-way).
 * The web host has no taskbar, so the tab title is where progress shows when the tab is hidden.
 */
const BASE = 'MediaDesk';

class TitleStore {
  status = $state('');
  set(status: string) {
    this.status = status;
    document.title = status ? `${BASE} — ${status}` : BASE;
  }
}

export const title = new TitleStore();
