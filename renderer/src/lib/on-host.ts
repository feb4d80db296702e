import { DeskError } from '../../../shared/contract/errors.ts';
import { call, desk } from './bridge.ts';

const ON_HOST = {
  folder: 'Opens in the file manager of the computer running MediaDesk',
  file: 'Opens on the computer running MediaDesk',
};

/** In a browser, Open acts on the computer running MediaDesk, not the browser's: said on each such button. */
export const onHostTitle = (what: keyof typeof ON_HOST): string | undefined =>
  desk.download ? ON_HOST[what] : undefined;

/** "Show in folder" shows the host's file manager: only under Electron, where that is the person's. */
export const canReveal = (): boolean => desk.download === null;

/** What a browser tab shows itself (the host's /media serves them); other files are downloaded. */
const VIEWABLE = /\.(png|jpe?g|webp|gif|mp4|mp3|wav|txt)$/i;

/**
 * Open a result for the person: under Electron in its default app; in a browser in a new tab when
 * the tab can show it, else as a download, never on the host's screen. Says what it did.
 */
export async function openResult(path: string): Promise<'opened' | 'tab' | 'downloaded'> {
  if (!desk.download) {
    await call('shell.open', { path });
    return 'opened';
  }
  if (VIEWABLE.test(path)) {
    // Asked first: a refused file would only show as an error page in the new tab.
    const res = await fetch(desk.mediaUrl(path), { headers: { range: 'bytes=0-0' } });
    if (!res.ok) {
      const why = ((await res.json().catch(() => ({}))) as { message?: string }).message;
      throw new DeskError(res.status === 404 ? 'not_found' : 'forbidden', why ?? `${path} cannot be shown`);
    }
    window.open(desk.mediaUrl(path), '_blank', 'noopener');
    return 'tab';
  }
  await desk.download(path);
  return 'downloaded';
}

/** The system's open dialog (`files.choose`): served by the desktop app's main process only, as Show in folder is. */
export const canChoose = (): boolean => desk.download === null;
