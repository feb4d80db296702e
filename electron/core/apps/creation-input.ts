import { readFile, stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { DeskError } from '../../../shared/contract/define.ts';

const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
const ACCEPTED = 'an image file (PNG, JPEG or WebP)';

/** The image type by the file's first bytes: a name says nothing about what a file holds. */
export function imageTypeOf(b: Uint8Array): 'image/png' | 'image/jpeg' | 'image/webp' | null {
  const ascii = (from: number, to: number) => String.fromCharCode(...b.subarray(from, to));
  if (b[0] === 0x89 && ascii(1, 4) === 'PNG') return 'image/png';
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp';
  return null;
}

/**
 * A value the user meant as a local file. A creation id is a bare token, so anything that exists
 * on disk, or is written like a path or a file name (a separator, a leading dot, an extension),
 * is a file; otherwise `notes.txt` would travel to the server as a creation id and fail there.
 */
function isPathLike(v: string, exists: boolean): boolean {
  return exists || isAbsolute(v) || v.startsWith('.') || /[\\/]/.test(v) || /\.[a-z0-9]{1,5}$/i.test(v);
}

/** Message and field reason agree, so a caller that joins them does not say it twice. */
const refuse = (field: string, reason: string, abs: string) => new DeskError('invalid', `${field} ${reason}: ${abs}`, [{ field, reason }]);

/**
 * A creation input accepts an image URL, a base64 image or a creation id (api-spec). A local file
 * (dropped or named on the command line) is sent as a data URI, read and checked now, so a missing
 * file, a folder or a file that is no image fails before anything is paid.
 */
export async function creationValue(v: string, field: string): Promise<string> {
  if (/^https?:\/\//i.test(v) || v.startsWith('data:')) return v;
  const abs = resolve(v);
  const st = await stat(abs).catch(() => null);
  if (!isPathLike(v, st !== null)) return v;
  if (!st) throw refuse(field, 'names a file that does not exist', abs);
  if (st.isDirectory()) throw refuse(field, `is a folder, not ${ACCEPTED}`, abs);
  if (!st.isFile()) throw refuse(field, `is not ${ACCEPTED}`, abs);
  if (st.size > MAX_IMAGE_BYTES) throw refuse(field, 'is larger than 20 MB', abs);
  const bytes = await readFile(abs);
  const type = imageTypeOf(bytes);
  if (!type) throw refuse(field, `is not ${ACCEPTED}`, abs);
  return `data:${type};base64,${bytes.toString('base64')}`;
}
