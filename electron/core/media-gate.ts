import { createHash } from 'node:crypto';
import { mkdirSync, realpathSync, statSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';
import { isWithin } from './paths.ts';
import { DeskError } from '../../shared/contract/define.ts';
import { loadSharp } from '../media/sharp.ts';

const MEDIA_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.jpe': 'image/jpeg',
  '.jfif': 'image/jpeg',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.mp4': 'video/mp4',
  '.mov': 'video/quicktime',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.txt': 'text/plain; charset=utf-8',
};

const realOrSelf = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
};

export const mediaType = (path: string): string | undefined => MEDIA_TYPES[extname(path).toLowerCase()];

/**
 * Decides which local files the renderer may display. A compromised page must not read the
 * user's files at will: only media files, and only under folders the app works with (its data
 * folder, and the inputs and outputs of batches the user started).
 */
export class MediaGate {
  private readonly home: string;
  private readonly roots: () => string[];
  private readonly thumbDir: string;

  private readonly served?: (path: string) => boolean;

  /**
   * `served`: a page's host (not the CLI) shows only files the person gave or MediaDesk recorded (a
   * job's result or input, a granted input), besides uploads and the app's caches in the data folder;
   * without it, any media file under the data folder and `roots`.
   */
  constructor(home: string, roots: () => string[] = () => [], served?: (path: string) => boolean) {
    this.home = resolve(home);
    this.roots = roots;
    this.served = served;
    this.thumbDir = join(this.home, 'cache', 'thumbnails');
  }

  /** Whether the renderer may be shown `path`: see the constructor; `real` as in `contains`. */
  private shows(path: string, real = false): boolean {
    if (!this.served) return this.contains(path, real);
    const own = [join(this.home, 'inbox'), join(this.home, 'cache')];
    return [...own, ...(real ? own.map(realOrSelf) : [])].some((root) => isWithin(path, root)) || this.served(path);
  }

  /**
   * The real path of a file the renderer may read; throws a DeskError saying why not. A link is
   * judged by its target: `leak.png -> /etc/passwd` in an input folder is outside every folder.
   */
  check(path: string): string {
    const abs = resolve(path);
    if (!mediaType(abs))
      throw new DeskError('forbidden', `${extname(abs) || 'this file'} is not a media file the app shows`);
    if (!this.shows(abs))
      throw new DeskError(
        'forbidden',
        this.served
          ? `${abs} is not a result MediaDesk recorded nor a file you gave it, so it is not shown`
          : `${abs} is outside the folders MediaDesk works with`,
      );
    let real: string;
    try {
      real = realpathSync(abs);
      if (!statSync(real).isFile()) throw new Error('not a file');
    } catch {
      throw new DeskError('not_found', `${abs} does not exist`);
    }
    if (real !== abs && (!mediaType(real) || !this.shows(real, true))) {
      throw new DeskError('forbidden', `${abs} is a link to a file outside the folders MediaDesk works with`);
    }
    return real;
  }

  /** Whether `path` lies in the data folder or a folder the app works with (any kind of file); `real`: the roots' own targets too. */
  contains(path: string, real = false): boolean {
    const abs = resolve(path);
    const roots = [this.home, ...this.roots()].map((r) => resolve(r));
    return [...roots, ...(real ? roots.map(realOrSelf) : [])].some((root) => isWithin(abs, root));
  }

  /** A small WebP of an image, made once per (file, size, mtime) and cached under the data folder. */
  async thumbnail(path: string, size: number): Promise<string> {
    const abs = this.check(path);
    if (!mediaType(abs)?.startsWith('image/')) throw new DeskError('invalid', 'thumbnails are made of images only');
    const st = statSync(abs);
    const key = createHash('sha256')
      .update(`${abs}\u0000${st.mtimeMs}\u0000${st.size}\u0000${size}`)
      .digest('hex')
      .slice(0, 32);
    const out = join(this.thumbDir, key.slice(0, 2), `${key}.webp`);
    try {
      statSync(out);
      return out;
    } catch {
      mkdirSync(join(this.thumbDir, key.slice(0, 2)), { recursive: true });
      const sharp = await loadSharp();
      try {
        await sharp(abs, { failOn: 'error' })
          .rotate()
          .resize(size, size, { fit: 'inside', withoutEnlargement: true })
          .webp({ quality: 78 })
          .toFile(out);
      } catch (err) {
        throw new DeskError(
          'invalid',
          `cannot read ${abs} as an image (${err instanceof Error ? err.message : String(err)})`,
        );
      }
      return out;
    }
  }
}
