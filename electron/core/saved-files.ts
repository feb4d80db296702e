import { existsSync, lstatSync } from 'node:fs';
import { copyFile, mkdir, rename, rm } from 'node:fs/promises';
import { dirname, extname, join, resolve } from 'node:path';
import { DeskError } from '../../shared/contract/define.ts';
import type { CommandName } from '../../shared/contract/index.ts';

/** Commands that save a file at the person's request and answer its `path`: the files a browser may download. */
export const FILE_SAVING_COMMANDS: ReadonlySet<CommandName> = new Set<CommandName>([
  'audit.export',
  'team.export',
  'creations.download',
  'batches.exportReport',
  'presets.export',
  'support.report',
]);

/**
 * The files this process saved at the person's request: the only ones the web host sends as
 * downloads. A path the renderer merely names (a key file, another app's data) is never one.
 */
export class SavedFiles {
  private readonly paths = new Set<string>();

  add(path: string): void {
    this.paths.add(resolve(path));
  }

  /** The absolute path of a saved file, still a plain file; throws a DeskError saying why not. */
  check(path: string): string {
    const abs = resolve(path);
    if (!this.paths.has(abs))
      throw new DeskError(
        'forbidden',
        `${abs} is not a file MediaDesk saved for you since it started, so it is not sent`,
      );
    let plainFile: boolean;
    try {
      plainFile = lstatSync(abs).isFile();
    } catch {
      throw new DeskError('not_found', `${abs} is no longer there (moved or deleted since it was saved)`);
    }
    // A link put in its place since would send whatever it points to.
    if (!plainFile) throw new DeskError('forbidden', `${abs} is no longer the file MediaDesk saved, so it is not sent`);
    return abs;
  }
}

/** `dir/name`, or `dir/stem-2.ext`, `-3`... the first not taken: a saved file never replaces another. */
export function freePath(dir: string, name: string): string {
  const ext = extname(name);
  const stem = name.slice(0, name.length - ext.length);
  let path = join(dir, name);
  for (let n = 2; existsSync(path); n++) path = join(dir, `${stem}-${n}${ext}`);
  return path;
}

/** The CLI's `--out FILE`: a file the app saved, moved to where the person named (folders made; across disks, copied). */
export async function moveSavedFile(from: string, to: string): Promise<string> {
  await mkdir(dirname(to), { recursive: true });
  await rename(from, to).catch(async (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EXDEV') throw e;
    await copyFile(from, to);
    await rm(from, { force: true });
  });
  return to;
}
