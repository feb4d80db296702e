import type { z } from 'zod';
import { foundationCommands, foundationEvents } from './foundation.ts';
import { mediaCommands } from './media.ts';
import { lorasCommands, lorasEvents } from './loras.ts';
import { jobsCommands, jobsEvents } from './jobs.ts';
import { auditCommands, auditEvents } from './audit.ts';
import { auditForwardCommands } from './audit-forward.ts';
import { teamCommands, teamEvents } from './team.ts';
import { reportCommands } from './report.ts';
import { hotFoldersCommands } from './hot-folders.ts';
import { limitsCommands } from './limits.ts';
import { noticesEvents } from './notices.ts';
import { handOffEvents } from './handoff.ts';
import { presetsCommands } from './presets.ts';
import { pricesCommands } from './prices.ts';
import { supportCommands } from './support.ts';
import { teamServerCommands } from './team-server.ts';

export * from './define.ts';
export * from './foundation.ts';
export * from './media.ts';
export * from './loras.ts';
export * from './jobs.ts';
export * from './audit.ts';
export * from './audit-forward.ts';
export * from './team.ts';
export * from './report.ts';
export * from './hot-folders.ts';
export * from './limits.ts';
export * from './notices.ts';
export * from './handoff.ts';
export * from './presets.ts';
export * from './prices.ts';
export * from './support.ts';
export * from './team-server.ts';

/** Every command of every area. An area adds its module here; transports derive everything from this. */
export const COMMANDS = {
  ...foundationCommands,
  ...mediaCommands,
  ...lorasCommands,
  ...jobsCommands,
  ...auditCommands,
  ...auditForwardCommands,
  ...teamCommands,
  ...reportCommands,
  ...hotFoldersCommands,
  ...limitsCommands,
  ...presetsCommands,
  ...pricesCommands,
  ...supportCommands,
  ...teamServerCommands,
};

export const EVENTS = {
  ...foundationEvents,
  ...jobsEvents,
  ...auditEvents,
  ...teamEvents,
  ...lorasEvents,
  ...noticesEvents,
  ...handOffEvents,
};

export type Commands = typeof COMMANDS;
export type CommandName = keyof Commands;
export type Events = typeof EVENTS;
export type EventName = keyof Events;
export type Req<K extends CommandName> = z.input<Commands[K]['request']>;
export type Res<K extends CommandName> = z.output<Commands[K]['response']>;
export type EventPayload<K extends EventName> = z.output<Events[K]>;

export const COMMAND_NAMES = Object.keys(COMMANDS) as CommandName[];
export const EVENT_NAMES = Object.keys(EVENTS) as EventName[];

/** A dropped file that did not reach the inbox: its path in the drop, and what happened, for the user. */
export interface UploadFailure {
  relPath: string;
  message: string;
}
/**
 * `folder` holds every file that arrived, none of `failed` (not even a part). `paths`: each given
 * file's place, in order (null where it failed), at its relative path with names every system holds
 * (`con.jpg` is `con_.jpg`; of `Photo.JPG` and `photo.jpg` the second is `photo-2.jpg`).
 */
export interface UploadResult {
  folder: string;
  paths: (string | null)[];
  failed: UploadFailure[];
}
/** Settled so far of `total`: `copied` arrived, `failed` did not. */
export interface UploadProgress {
  copied: number;
  failed: number;
  total: number;
}

/** The shape every bridge (preload, WebSocket) gives the renderer as `window.desk`. */
export interface DeskApi {
  invoke<K extends CommandName>(name: K, req: Req<K>): Promise<Res<K>>;
  on<K extends EventName>(name: K, listener: (payload: EventPayload<K>) => void): () => void;
  /** Absolute path of a dropped File (Electron's webUtils); null in the browser. */
  pathForFile(file: File): string | null;
  /** A URL the page can load for a local media file the core allows (see MediaGate). */
  mediaUrl(path: string): string;
  /**
   * The browser has no file paths: dropped files are copied into the data folder's inbox (see
   * UploadResult). A file that fails is named and the rest still arrive; only a drop of which
   * nothing arrives is an error. Null under Electron, which reads paths directly.
   */
  upload:
    | ((files: { file: File; relPath: string }[], onProgress?: (p: UploadProgress) => void) => Promise<UploadResult>)
    | null;
  /**
   * The browser cannot reach the host's disk: a file the core saved at the person's request (an
   * export, a saved creation) is handed over as a browser download; rejects saying why not. Null
   * under Electron, where the file stays where it was saved.
   */
  download: ((path: string) => Promise<void>) | null;
  /**
   * Drags a result MediaDesk wrote out into another app: under Electron main starts the system's
   * drag of the file (only one inside a folder results go to, core.draggable); null in the browser.
   */
  startDrag: ((path: string) => void) | null;
  /** The browser's address of a result to download (the host's /download, core.draggable); null under Electron. */
  downloadUrl: ((path: string) => string) | null;
  readonly host: 'electron' | 'web';
}
