import { accessSync, constants, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { DeskError } from '../../shared/contract/define.ts';

/**
 * Why results could not be written to `dir`, or null when they can: it is a folder we may write
 * to, or one we could create. Checked before a batch is queued and when Settings names a folder,
 * so a paid task never finishes into a download that cannot be placed.
 */
export function outputFolderProblem(dir: string): string | null {
  const target = resolve(dir);
  // The folder itself, else the nearest existing folder above it, which the download would create it in.
  for (let at = target; ; at = dirname(at)) {
    const st = statOrNull(at);
    if (st) {
      if (!st.isDirectory())
        return at === target ? `${target} is a file, not a folder` : `${target} cannot be created: ${at} is a file`;
      if (!writable(at))
        return at === target ? `${target} is not writable` : `${target} cannot be created: ${at} is not writable`;
      return null;
    }
    if (dirname(at) === at) return `${target} cannot be created`;
  }
}

/** Refuses, as bad input naming `outDir`, a folder results could not be written to: before a batch or run is queued. */
export function assertOutputFolder(dir: string): void {
  const problem = outputFolderProblem(dir);
  if (problem) throw new DeskError('invalid', `output folder: ${problem}`, [{ field: 'outDir', reason: problem }]);
}

/** Creates the folder (and its parents), failing with what is in the way rather than a bare ENOTDIR or EEXIST. */
export async function ensureFolder(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
  } catch (err) {
    throw new Error(outputFolderProblem(dir) ?? `cannot create ${dir}: ${(err as Error).message}`, { cause: err });
  }
}

function statOrNull(p: string) {
  try {
    return statSync(p);
  } catch {
    return null;
  }
}

function writable(p: string): boolean {
  try {
    accessSync(p, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
