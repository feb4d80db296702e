import { contextBridge, ipcRenderer, webUtils } from 'electron';
import { CHOSEN_CHANNEL } from '../main/policy.ts';

/**
 * The renderer's only door to the app: the contract's commands and events, nothing else.
 * The preload is sandboxed (no Node), so the list of names comes from main, which derives it
 * from the contract; main validates every payload again on arrival.
 */
const { commands, events } = ipcRenderer.sendSync('desk:contract') as { commands: string[]; events: string[] };
const commandSet = new Set(commands);
const eventSet = new Set(events);

const desk = {
  host: 'electron' as const,
  async invoke(name: string, req: unknown): Promise<unknown> {
    if (!commandSet.has(name)) throw new Error(`unknown command "${name}"`);
    const reply = (await ipcRenderer.invoke(`desk:cmd:${name}`, req)) as {
      ok: boolean;
      result?: unknown;
      error?: { code: string; message: string; invalid?: unknown };
    };
    if (reply.ok) return reply.result;
    // Plain data crosses the bridge; the renderer's bridge rebuilds a DeskError from it.
    throw Object.assign(new Error(reply.error?.message ?? 'failed'), { desk: reply.error });
  },
  on(name: string, listener: (payload: unknown) => void): () => void {
    if (!eventSet.has(name)) throw new Error(`unknown event "${name}"`);
    const channel = `desk:event:${name}`;
    const wrapped = (_e: Electron.IpcRendererEvent, payload: unknown) => listener(payload);
    ipcRenderer.on(channel, wrapped);
    return () => {
      ipcRenderer.off(channel, wrapped);
    };
  },
  /** A file the person dropped or chose: main is told, so the core reads it (a page cannot make a File of any path). */
  pathForFile(file: File): string | null {
    const path = webUtils.getPathForFile(file) || null;
    if (path) ipcRenderer.sendSync(CHOSEN_CHANNEL, path);
    return path;
  },
  /** Served by main's desk-media: protocol, which asks the core's MediaGate first. */
  mediaUrl(path: string): string {
    return `desk-media://local/?path=${encodeURIComponent(path)}`;
  },
  upload: null,
  download: null,
  /** Main checks the path (core.draggable) and starts the system's drag of the file. */
  startDrag(path: string): void {
    ipcRenderer.send('desk:drag', path);
  },
  downloadUrl: null,
};

contextBridge.exposeInMainWorld('desk', desk);
