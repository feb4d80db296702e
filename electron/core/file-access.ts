import { join, resolve } from 'node:path';
import { DeskError } from '../../shared/contract/define.ts';
import { MediaGate } from './media-gate.ts';
import { checkDraggable, checkOpenable, checkOpenableFolder } from './open-file.ts';
import { defaultOutputDir } from './paths.ts';
import { GIVE_IN_DESKTOP, GIVE_IN_WEB, PathPolicy } from './path-policy.ts';

/** The reason core.draggable gives for a file in a results folder that no job or app run recorded. */
export const NOT_RECORDED = 'not a result MediaDesk recorded';

export interface FileAccessOptions {
  home: string;
  host: 'electron' | 'web' | 'cli';
  env: NodeJS.ProcessEnv;
  /** The output folder of Settings, its default applied. */
  outputDir: () => string;
  /** The queue's records: which files are results and inputs, and the folders its batches use. */
  queue: {
    isResult(path: string): boolean;
    isInput(path: string): boolean;
    mediaRoots(): string[];
    batchOutDirs(): string[];
  };
  /** The hot folders: a page may name inputs in a watched folder, and their results folders are the app's. */
  hotFolders: () => readonly { folder: string; outDir: string }[];
}

/**
 * Which local files the core shows, opens, hands out and takes from a page: media under the folders
 * the app works with (each area registers its own), the folders it writes results to, and, in a
 * page's host, PathPolicy over PATH_FIELDS.
 */
export function fileAccess(o: FileAccessOptions) {
  const mediaRoots: (() => string[])[] = [() => [...o.queue.mediaRoots(), o.outputDir()]];
  const outputFolders: (() => string[])[] = [
    () => [o.outputDir(), ...o.queue.batchOutDirs()],
    () => o.hotFolders().map((f) => f.outDir),
  ];
  const roots = () => mediaRoots.flatMap((f) => f());
  const resultFolders = () => outputFolders.flatMap((f) => f());
  // The CLI is the person at their own terminal; a page (socket, IPC) is held to PATH_FIELDS.
  const pathPolicy =
    o.host === 'cli'
      ? null
      : new PathPolicy({
          inbox: join(o.home, 'inbox'),
          outputRoot: o.outputDir,
          usedOutputs: () => [defaultOutputDir(o.env), ...resultFolders()],
          watched: () => o.hotFolders().map((f) => f.folder),
          howToGive: o.host === 'web' ? GIVE_IN_WEB : GIVE_IN_DESKTOP,
        });
  // A page's host shows recorded results and inputs, and what the person gave; the CLI shows what it is asked.
  const shownToPage = (p: string) => o.queue.isResult(p) || o.queue.isInput(p) || (pathPolicy?.gave(p) ?? false);
  const media = new MediaGate(o.home, roots, pathPolicy ? shownToPage : undefined);
  // Any media file in the folders the app works with: `draggable` then asks the queue whether it is a result.
  const mediaInRoots = new MediaGate(o.home, roots);
  return {
    media,
    pathPolicy,
    /** The path the OS may open or show for the renderer (a result type, in the app's folders); throws why not. */
    openable: (path: string) => checkOpenable(path, (p) => media.contains(p)),
    /** A folder the OS may open for the renderer (see checkOpenableFolder); throws why not. */
    openableFolder: (path: string) => checkOpenableFolder(path, resultFolders(), o.outputDir()),
    /**
     * A result MediaDesk wrote, inside a folder it puts results in, that may be dragged into another
     * app (or downloaded from the web host); throws why not. Recorded as a job's or an app run's
     * output: a file put in a results folder by hand is not handed out.
     */
    draggable: (path: string) => {
      const real = checkDraggable(path, resultFolders(), mediaInRoots);
      if (o.queue.isResult(resolve(path)) || o.queue.isResult(real)) return real;
      const why = `${resolve(path)} is in a results folder but MediaDesk did not make it (no job or app run recorded it), so it is not handed out`;
      throw new DeskError('forbidden', why, [{ field: 'path', reason: NOT_RECORDED }]);
    },
    /** Folders whose media the renderer may show; areas register theirs. */
    addMediaRoots: (r: () => string[]) => void mediaRoots.push(r),
    /** Folders results are written to, which the renderer may open; areas register theirs. */
    addOutputFolders: (r: () => string[]) => void outputFolders.push(r),
  };
}
