import { readdirSync, type Dirent } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { portableName, sameFileKey, windowsPathProblem } from '../../../shared/file-names.ts';
import { isIgnoredName } from '../../../shared/validation/system-files.ts';
import { shortened, withCollisionSuffix } from '../../core/downloads/naming.ts';

/**
 * The most UTF-8 bytes of a stored name. Most file systems allow 255 per name (Windows 255 UTF-16
 * units, never more than the bytes); the rest is room for a collision suffix (`-2`).
 */
const MAX_NAME_BYTES = 240;
/** A longer "extension" is part of the name (`notes.from the shoot of 3 May`): it is not kept whole. */
const MAX_EXT_BYTES = 16;

/**
 * One name of a dropped path as the inbox stores it: portable, short enough for the disk, extension
 * kept. A hidden name keeps its leading dot, and one that would become a system file's (`Thumbs.db.`)
 * is refused, so the batch passes over exactly the files the browser named hidden or system.
 */
export function storedName(name: string): { name: string } | { problem: string } {
  const portable = name.startsWith('.') ? `.${portableName(name.slice(1), '_')}` : portableName(name, '_');
  const ext = extname(portable);
  const keep = Buffer.byteLength(ext) <= MAX_EXT_BYTES ? ext : '';
  const stem = portable.slice(0, portable.length - keep.length);
  const out = `${shortened(stem, MAX_NAME_BYTES - Buffer.byteLength(keep))}${keep}`;
  // Never the other way: a hidden name keeps its dot, and every system file's name is portable already.
  if (isIgnoredName(out) && !isIgnoredName(name)) {
    return {
      problem: `"${name}" would be stored as "${out}", the name of a hidden or system file that batches pass over; rename it`,
    };
  }
  return { name: out };
}

/** A stored path taken, to be settled once its file is written (`kept`) or not; or why there is none. */
export type Taken = { parts: string[]; settle(kept: boolean): void } | { status: 400 | 409; message: string };

/**
 * A drop with no file being copied and none added for this long is done: its names are forgotten
 * (and read again from its folder should a file of it still come).
 */
const DROP_IDLE_MS = 60 * 60 * 1000;

/** A stored path's key (sameFileKey) -> the path in the drop it was copied from, or null for a file found on disk. */
type Holders = Map<string, { original: string | null; stored: string }>;

/**
 * The stored paths of each drop's files: two that are one file on macOS or Windows (`Photo.JPG`,
 * `photo.jpg`) both arrive, the second as `photo-2.jpg`; the same path twice is refused. Synchronous,
 * so files copied side by side cannot take one name; seeded once per drop from its folder.
 */
export class DropNames {
  private readonly drops = new Map<string, { taken: Holders; used: number; copying: number }>();

  private readonly inbox: string;
  private readonly platform: string;

  /** `inbox`: the folder of the drops' folders; `platform` decides whose path rules apply (see windowsPathProblem). */
  constructor(inbox: string, platform: string = process.platform) {
    this.inbox = inbox;
    this.platform = platform;
  }

  /** A stored path for the file at `parts` (its path in the drop as the browser names it), or why there is none. */
  take(drop: string, parts: readonly string[]): Taken {
    const stored: string[] = [];
    for (const p of parts) {
      const s = storedName(p);
      if ('problem' in s) return { status: 400, message: s.problem };
      stored.push(s.name);
    }
    const original = parts.join('/');
    const d = this.drop(drop);
    const dir = stored.slice(0, -1);
    for (let k = 1; ; k++) {
      const candidate = [...dir, withCollisionSuffix(stored[stored.length - 1], k)];
      const key = sameFileKey(candidate.join('/'));
      const holder = d.taken.get(key);
      // A file found on disk under this very name, not numbered, is taken for this path's, copied before.
      const sentAgain =
        holder &&
        (holder.original === null ? k === 1 && holder.stored === candidate.join('/') : holder.original === original);
      if (sentAgain) {
        return { status: 409, message: 'a file of this path was already copied in this drop' };
      }
      if (holder === undefined) {
        const tooLong = windowsPathProblem(join(this.inbox, drop, ...candidate), this.platform);
        if (tooLong)
          return {
            status: 400,
            message: `"${parts[parts.length - 1]}" cannot be stored: ${tooLong}; drop it from a folder with fewer or shorter folder names, or shorten its name`,
          };
        d.taken.set(key, { original, stored: candidate.join('/') });
        d.copying++;
        return {
          parts: candidate,
          settle: (kept) => {
            d.copying--;
            d.used = Date.now();
            if (!kept) d.taken.delete(key);
          },
        };
      }
    }
  }

  private drop(id: string) {
    const now = Date.now();
    for (const [other, d] of this.drops) if (!d.copying && now - d.used > DROP_IDLE_MS) this.drops.delete(other);
    const d = this.drops.get(id) ?? { taken: this.onDisk(id), used: now, copying: 0 };
    d.used = now;
    this.drops.set(id, d);
    return d;
  }

  /** The files the drop's folder holds already: read at once, so the names are still taken synchronously. */
  private onDisk(id: string): Holders {
    const root = join(this.inbox, id);
    const taken: Holders = new Map();
    let found: Dirent[];
    try {
      found = readdirSync(root, { recursive: true, withFileTypes: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return taken;
      throw e;
    }
    for (const f of found) {
      if (!f.isFile()) continue;
      const stored = relative(root, join(f.parentPath, f.name)).split(sep).join('/');
      taken.set(sameFileKey(stored), { original: null, stored });
    }
    return taken;
  }
}
