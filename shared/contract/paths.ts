import type { CommandName } from './index.ts';

/**
 * Paths come from the person, not from the page. What each command's path field is, so the core
 * can hold a page (the web host's socket, Electron's IPC) to it; the CLI is the person at their own
 * terminal and is not held. No command takes a path to write a file to: an export, a report or a
 * saved creation is written where the app chooses (SAVED_FILES_RULE) and handed over from there.
 *
 * - `results-folder`: a folder results are written to. From a page, inside the output folder.
 * - `output-folder`: the output folder itself (Settings). From a page, only a folder that is empty
 *   or does not exist yet, so a page cannot make a folder of the person's files a results folder.
 * - `read`: a file the core reads and answers about. From a page, only a file the person gave: an
 *   upload (the inbox), or one they dropped or chose in the desktop app's open dialog.
 * - `input`: a run's inputs, read and sent to the service, checked as media before anything is paid. From
 *   a page, only what the person gave: an upload, a result, inside a hot folder, a drop or `files.choose` in
 *   the desktop app, or inside a folder named when the web host started (`--folder`).
 * - `shown`: a file shown or opened for the person; the MediaGate and `checkOpenable` allow only media and
 *   results inside the folders MediaDesk works with.
 * A name `a.b` is a field inside `a`; `a[].b` the field of each item of the list `a`.
 * - `watched`: a hot folder's watched folder. From a page, only a folder the person gave (as `input`, not
 *   the output folder) or one inside it.
 */
export type PathKind = 'results-folder' | 'output-folder' | 'read' | 'input' | 'shown' | 'watched';

export const PATH_FIELDS: Partial<Record<CommandName, Record<string, PathKind>>> = {
  'settings.set': { outputDir: 'output-folder', 'auditSinks[].folder': 'results-folder' },
  'media.thumbnail': { path: 'shown' },
  'shell.open': { path: 'shown' },
  'shell.reveal': { path: 'shown' },
  'shell.openFolder': { path: 'shown' },
  'batches.start': { inputs: 'input', outDir: 'results-folder' },
  'batches.check': { inputs: 'input', outDir: 'results-folder' },
  'apps.check': { inputs: 'input' },
  'apps.run': { inputs: 'input', outDir: 'results-folder' },
  'loras.trainCheck': { inputs: 'input' },
  'loras.train': { inputs: 'input' },
  'hotFolders.add': { folder: 'watched', outDir: 'results-folder' },
  'audit.import': { paths: 'read' },
  // A file sink writes the forwarded audit log there: from a page, only inside the output folder.
  'audit.sinkSave': { 'sink.folder': 'results-folder' },
};

/**
 * Where the app writes a file it saves at the person's request (an export, a report, a saved creation):
 * in the desktop app and the CLI, its folder in the output folder (Exports, Creations); in the web host,
 * the data folder's `hand-over/`, emptied at start, each file removed once the browser has downloaded it.
 */
export const SAVED_FILES_RULE = 'saved files go where the app chooses, never to a path a command names';
