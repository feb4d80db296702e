import { ipcMain, nativeImage, type BrowserWindow, type IpcMainEvent } from 'electron';
import type { Core } from '../core/index.ts';
import { badgeIcon } from './badge-icon.ts';

/**
 * The preload's startDrag: a result dragged out of the gallery into another app. Only from our
 * window's main frame (`trusted`), and only a file MediaDesk wrote in a results folder (core.draggable).
 */
export function wireDragOut(core: Core, win: BrowserWindow, trusted: (e: IpcMainEvent) => boolean): () => void {
  const onDrag = (e: IpcMainEvent, path: unknown) => {
    if (!trusted(e) || typeof path !== 'string') return;
    let file: string;
    try {
      file = core.draggable(path);
    } catch (err) {
      core.log.warn(`drag out refused: ${(err as Error).message}`);
      return;
    }
    const preview = nativeImage.createFromPath(file);
    const icon = preview.isEmpty() ? badgeIcon() : preview.resize({ width: 64 });
    if (!win.isDestroyed()) e.sender.startDrag({ file, icon });
  };
  ipcMain.on('desk:drag', onDrag);
  return () => ipcMain.off('desk:drag', onDrag);
}
