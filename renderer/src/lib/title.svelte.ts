/**
 * The window title: "12/20 · MediaDesk" while batches run, "batch done · MediaDesk" at the end
 * (or "batch ended: 59 done, 231 canceled · MediaDesk" when it was canceled part-way). Progress
 * comes first, so a narrow tab still shows it: the web host has no taskbar.
 */
const BASE = 'MediaDesk';

class TitleStore {
  status = $state('');
  set(status: string) {
    this.status = status;
    document.title = status ? `${status} · ${BASE}` : BASE;
  }
}

export const title = new TitleStore();
