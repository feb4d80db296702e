import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import { DeskError } from '../../shared/contract/define.ts';

/** Only results the app makes may be opened: a renderer must never be able to launch a program. */
const OPENABLE = new Set(['.png', '.jpg', '.jpeg', '.webp', '.gif', '.mp4', '.mov', '.mp3', '.wav', '.txt', '.csv', '.ndjson', '.json']);

export function checkOpenable(path: string): string {
  const abs = resolve(path);
  if (!OPENABLE.has(extname(abs).toLowerCase())) throw new DeskError('forbidden', `only result files can be opened (${[...OPENABLE].join(' ')}), not ${extname(abs) || 'a file without extension'}`);
  let st;
  try {
    st = statSync(abs);
  } catch {
    throw new DeskError('not_found', `${abs} does not exist`);
  }
  if (!st.isFile()) throw new DeskError('invalid', `${abs} is not a file`);
  return abs;
}

/** Outside Electron: the platform's opener, detached. */
export function openWithOs(path: string, reveal = false): void {
  const target = reveal ? dirname(path) : path;
  const [cmd, args] = process.platform === 'darwin' ? ['open', reveal ? ['-R', path] : [path]] : process.platform === 'win32' ? ['explorer', reveal ? [`/select,${path}`] : [path]] : ['xdg-open', [target]];
  const child = spawn(cmd, args, { detached: true, stdio: 'ignore' });
  child.on('error', () => {});
  child.unref();
}
