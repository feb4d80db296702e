import { lstatSync } from 'node:fs';
import { resolve } from 'node:path';
import { DeskError } from '../../shared/contract/define.ts';
import type { CommandName } from '../../shared/contract/index.ts';

/** Commands that save a file at the person's request and answer its `path`: the files a browser may download. */
export const FILE_SAVING_COMMANDS: ReadonlySet<CommandName> = new Set<CommandName>([
  'audit.export',
  'team.export',
  'creations.download',
  'batches.exportReport',
  'presets.export',
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
