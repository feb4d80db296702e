import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import { DeskError } from '../../shared/contract/define.ts';

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

/**
 * Outside Electron: the platform's opener, detached. Resolves once it has handed the file over,
 * and fails with the reason when the opener is missing or reports failure, so the screen can say
 * so rather than do nothing.
 */
export function openWithOs(path: string, reveal = false): Promise<void> {
  const target = reveal ? dirname(path) : path;
  let [cmd, args] = ['xdg-open', [target]];
  if (process.platform === 'darwin') [cmd, args] = ['open', reveal ? ['-R', path] : [path]];
  else if (process.platform === 'win32') [cmd, args] = ['explorer', reveal ? [`/select,${path}`] : [path]];
  return new Promise((resolveOpen, reject) => {
    const child = spawn(cmd, args, { detached: true, stdio: 'ignore' });
    const timer = setTimeout(() => {
      child.unref();
      resolveOpen();
    }, OPENER_GRACE_MS);
    child.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        new DeskError(
          'unavailable',
          err.code === 'ENOENT'
            ? `cannot open files here: ${cmd} is not installed (${target})`
            : `cannot open ${target}: ${err.message}`,
        ),
      );
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      // explorer.exe answers 1 even when it opened the file.
      if (code === 0 || process.platform === 'win32') return resolveOpen();
      reject(
        new DeskError(
          'unavailable',
          `${cmd} could not open ${target} (exit code ${code}); is an application set up for ${reveal ? 'folders' : `${extname(path) || 'these'} files`}?`,
        ),
      );
    });
  });
}
