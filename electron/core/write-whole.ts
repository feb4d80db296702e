import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';

/** Options of a whole-file write. */
export interface WriteWholeOptions {
  /** The new file's permissions (0o600: its owner's alone). */
  mode?: number;
  /** Runs once the new content is on disk, before it replaces the file; throwing leaves the old file. */
  beforeRename?: () => void;
}

/** The temporary name beside `path`, per process, so two processes writing at once never share one. */
const tempOf = (path: string) => `${path}.${process.pid}.tmp`;

/**
 * Writes a file whole: into a temporary file beside it, flushed to disk, then renamed over it, so a
 * reader, a crash or a full disk leaves the old file or the new one, never half of one.
 */
export function writeWhole(path: string, data: string | Uint8Array, opts: WriteWholeOptions = {}): void {
  const tmp = tempOf(path);
  try {
    const fd = openSync(tmp, 'w', opts.mode);
    try {
      writeFileSync(fd, data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    opts.beforeRename?.();
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** writeWhole for an event loop that must not wait on the disk (a downloaded image). */
export async function writeWholeAsync(path: string, data: string | Uint8Array, opts: WriteWholeOptions = {}) {
  const tmp = tempOf(path);
  try {
    const file = await open(tmp, 'w', opts.mode);
    try {
      await file.writeFile(data);
      await file.sync();
    } finally {
      await file.close();
    }
    opts.beforeRename?.();
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** A JSON file written whole, as the app's own files are: two-space indented, ending in a newline. */
export function writeJsonWhole(path: string, value: unknown, opts: WriteWholeOptions = {}): void {
  writeWhole(path, `${JSON.stringify(value, null, 2)}\n`, opts);
}
