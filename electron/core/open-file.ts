import { spawn } from 'node:child_process';
import { mkdirSync, realpathSync, statSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import { DeskError } from '../../shared/contract/define.ts';
import { isWithin } from './paths.ts';

/** Only results the app makes may be opened: a renderer must never be able to launch a program. */
const OPENABLE = new Set([
  '.png',
  '.jpg',
  '.jpeg',
  '.webp',
  '.gif',
  '.mp4',
  '.mov',
  '.mp3',
  '.wav',
  '.txt',
  '.csv',
  '.ndjson',
  '.json',
]);

/**
 * The absolute path if the renderer may have the OS open or show it. The type alone is not
 * enough: a compromised page could otherwise open any .json or .txt on the disk (a token file,
 * another app's config), so the file must also be in a folder the app works with (`ours`).
 */
export function checkOpenable(path: string, ours: (abs: string) => boolean): string {
  const abs = resolve(path);
  if (!OPENABLE.has(extname(abs).toLowerCase()))
    throw new DeskError(
      'forbidden',
      `only result files can be opened (${[...OPENABLE].join(' ')}), not ${extname(abs) || 'a file without extension'}`,
    );
  if (!ours(abs))
    throw new DeskError(
      'forbidden',
      `${abs} is outside the folders MediaDesk works with (its data folder, the output folder, and the folders of your batches), so it is not opened`,
    );
  let st;
  try {
    st = statSync(abs);
  } catch {
    throw new DeskError('not_found', `${abs} does not exist (moved or deleted since)`);
  }
  if (!st.isFile()) throw new DeskError('invalid', `${abs} is not a file`);
  return abs;
}

/** How long an opener may run before it is taken to have handed the file over (xdg-open waits for some apps). */
const OPENER_GRACE_MS = 2000;

/** Said when the opener fails: where to go instead, never the opener's exit code. */
export const couldNotOpen = (what: 'file' | 'folder', path: string) =>
  what === 'folder'
    ? `Could not open a file manager here. The folder is: ${path}`
    : `Could not open an application for this file here. The file is: ${path}`;

/**
 * Outside Electron: the platform's opener, detached. Resolves once it has handed the path over,
 * and fails with where to go instead when the opener is missing or reports failure. `reveal`
 * opens the file's folder; `folder` says `path` is a folder.
 */
export function openWithOs(path: string, how: 'file' | 'reveal' | 'folder' = 'file'): Promise<void> {
  const reveal = how === 'reveal';
  const target = reveal ? dirname(path) : path;
  let [cmd, args] = ['xdg-open', [target]];
  if (process.platform === 'darwin') [cmd, args] = ['open', reveal ? ['-R', path] : [path]];
  else if (process.platform === 'win32') [cmd, args] = ['explorer', reveal ? [`/select,${path}`] : [path]];
  const failed = () => new DeskError('unavailable', couldNotOpen(how === 'file' ? 'file' : 'folder', target));
  return new Promise((resolveOpen, reject) => {
    const child = spawn(cmd, args, { detached: true, stdio: 'ignore' });
    const timer = setTimeout(() => {
      child.unref();
      resolveOpen();
    }, OPENER_GRACE_MS);
    child.on('error', () => {
      clearTimeout(timer);
      reject(failed());
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      // explorer.exe answers 1 even when it opened the file.
      if (code === 0 || process.platform === 'win32') return resolveOpen();
      reject(failed());
    });
  });
}

/**
 * The absolute path of a folder the renderer may have the OS open: one MediaDesk writes results to
 * (`outputFolders`: the output folder, batches' and runs' folders) or one inside it. A missing
 * folder inside `ruleRoot` (the output folder) is made, as its first results would make it.
 */
export function checkOpenableFolder(path: string, outputFolders: readonly string[], ruleRoot: string): string {
  const abs = resolve(path);
  const inside = (root: string) => isWithin(abs, root);
  if (!outputFolders.some((f) => inside(resolve(f))))
    throw new DeskError('forbidden', `${abs} is not a folder MediaDesk puts results in, so it is not opened`);
  let st = statSync(abs, { throwIfNoEntry: false });
  if (!st && inside(resolve(ruleRoot))) {
    mkdirSync(abs, { recursive: true });
    st = statSync(abs);
  }
  if (!st) throw new DeskError('not_found', `${abs} does not exist (moved or deleted since)`);
  if (!st.isDirectory()) throw new DeskError('invalid', `${abs} is not a folder`);
  return abs;
}

const realOrSelf = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
};

/**
 * The real path of a result the renderer may drag into another app or download: a media file
 * MediaDesk wrote, so inside a folder it puts results in (`outputFolders`). An input, or any other
 * file a page names, is refused; `gate` (the MediaGate) judges a link by its target.
 */
export function checkDraggable(
  path: string,
  outputFolders: readonly string[],
  gate: { check(p: string): string },
): string {
  const abs = resolve(path);
  const roots = outputFolders.map((f) => resolve(f));
  const inOutput = (p: string) => roots.some((root) => isWithin(p, root) || isWithin(p, realOrSelf(root)));
  const refused = () =>
    new DeskError(
      'forbidden',
      `${abs} is not a result MediaDesk wrote (only files in the folders it puts results in), so it is not handed out`,
    );
  if (!inOutput(abs)) throw refused();
  const real = gate.check(abs);
  if (!inOutput(real)) throw refused();
  return real;
}
