import { open, readFile, stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { DeskError } from '../../../shared/contract/define.ts';

const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
const ACCEPTED = 'an image file (PNG, JPEG or WebP)';

type ImageType = 'image/png' | 'image/jpeg' | 'image/webp';
/** The bytes imageTypeOf looks at. */
const HEADER_BYTES = 12;

/** The image type by the file's first bytes: a name says nothing about what a file holds. */
export function imageTypeOf(b: Uint8Array): ImageType | null {
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
const refuse = (field: string, reason: string, abs: string) =>
  new DeskError('invalid', `${field} ${reason}: ${abs}`, [{ field, reason }]);

async function readHeader(path: string): Promise<Uint8Array> {
  const fh = await open(path, 'r');
  try {
    const { buffer, bytesRead } = await fh.read(Buffer.alloc(HEADER_BYTES), 0, HEADER_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** PathPolicy.checkInput of a page's core: throws unless the person gave this file; absent for the CLI. */
export type InputConfine = (field: string, path: string) => void;

/**
 * A creation input meant as a local file, checked (size and first bytes only) for apps.check and the
 * run alike, so a missing file, a folder, one over 20 MB or no image fails before anything is paid.
 * Null: not a file (an image URL, base64 image or creation id, api-spec), sent as it is.
 */
export async function creationFile(
  v: string,
  field: string,
  confine?: InputConfine,
): Promise<{ abs: string; type: ImageType } | null> {
  if (/^https?:\/\//i.test(v) || v.startsWith('data:')) return null;
  const abs = resolve(v);
  const st = await stat(abs).catch(() => null);
  if (!isPathLike(v, st !== null)) return null;
  // Before anything is said of the file: a page learns nothing of a path the person did not give.
  confine?.(field, abs);
  if (!st) throw refuse(field, 'names a file that does not exist', abs);
  if (st.isDirectory()) throw refuse(field, `is a folder, not ${ACCEPTED}`, abs);
  if (!st.isFile()) throw refuse(field, `is not ${ACCEPTED}`, abs);
  if (st.size > MAX_IMAGE_BYTES) throw refuse(field, 'is larger than 20 MB', abs);
  const type = imageTypeOf(await readHeader(abs));
  if (!type) throw refuse(field, `is not ${ACCEPTED}`, abs);
  return { abs, type };
}

/**
 * The value sent for a creation input: a local file (checked by creationFile) uploaded through the
 * service's flow and sent as its asset URL (an input takes a URL, api-spec), anything else as it is.
 */
export async function creationValue(
  v: string,
  field: string,
  upload: (bytes: Buffer, contentType: string) => Promise<string>,
  confine?: InputConfine,
): Promise<string> {
  const file = await creationFile(v, field, confine);
  if (!file) return v;
  return upload(await readFile(file.abs), file.type);
}
