import { ipcMain, type BrowserWindow, type IpcMainEvent, type IpcMainInvokeEvent } from 'electron';
import { COMMAND_NAMES, EVENT_NAMES } from '../../shared/contract/index.ts';
import type { Core } from '../core/index.ts';
import { wireDragOut } from './drag.ts';
import { CHOSEN_CHANNEL, chosenPath, trustedIpcSender } from './policy.ts';

/**
 * One channel per contract command, each validated by the core's dispatcher. Messages from any
 * frame but our window's main frame (an iframe, another window) are refused before dispatch.
 */
export function wireIpc(core: Core, win: BrowserWindow, rendererUrl: string): () => void {
  const trusted = (e: IpcMainInvokeEvent | IpcMainEvent) =>
    trustedIpcSender(
      {
        ourWindow: e.sender === win.webContents,
        mainFrame: e.senderFrame !== null && e.senderFrame === win.webContents.mainFrame,
        url: e.senderFrame?.url ?? null,
      },
      rendererUrl,
    );

  const onContract = (e: IpcMainEvent) => {
    e.returnValue = trusted(e) ? { commands: COMMAND_NAMES, events: EVENT_NAMES } : { commands: [], events: [] };
  };
  ipcMain.on('desk:contract', onContract);
  // The preload's pathForFile: a file or folder the person dropped or chose, which PATH_FIELDS' `read` and `input` then allow.
  const onChosen = (e: IpcMainEvent, path: unknown) => {
    const granted = chosenPath(trusted(e), path);
    if (granted) core.pathPolicy?.grant(granted);
    e.returnValue = true;
  };
  ipcMain.on(CHOSEN_CHANNEL, onChosen);

  for (const name of COMMAND_NAMES) {
    ipcMain.handle(`desk:cmd:${name}`, async (e, payload: unknown) => {
      if (!trusted(e)) return { ok: false, error: { code: 'forbidden', message: 'IPC from an untrusted frame' } };
      // Never rejects, and its reply is one a structured clone carries (replyProblem): a result
      // too deep, circular or huge comes back as an error naming the command.
      return core.dispatch(name, payload);
    });
  }
  const off = core.events.onAny((name, payload) => {
    if (!win.isDestroyed()) win.webContents.send(`desk:event:${name}`, payload);
  });
  const offDrag = wireDragOut(core, win, trusted);
  return () => {
    off();
    offDrag();
    ipcMain.off('desk:contract', onContract);
    ipcMain.off(CHOSEN_CHANNEL, onChosen);
    for (const name of COMMAND_NAMES) ipcMain.removeHandler(`desk:cmd:${name}`);
  };
}
