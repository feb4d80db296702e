import { open, stat, type FileHandle } from 'node:fs/promises';
import { basename } from 'node:path';
import { imageSize } from 'image-size';
import type { Field, ToolEntry } from '../../../shared/catalogue/index.ts';
import { EXT_FORMAT } from '../../../shared/validation/extensions.ts';
import { familyOfTool } from '../../../shared/catalogue/index.ts';
import { FAMILY_LIMITS } from '../../../shared/validation/limits.ts';
import { loadSharp } from '../../media/sharp.ts';
import { fsErrorWords } from './fs-error.ts';
import { oneAfterAnother } from '../../../shared/concurrency.ts';

/**
 * Our own ceiling for a local input sent inline (base64 inflates it by a third). The spec states no
 * size limit for these tools; the Sandbox enforces the same figure.
 */
export const DEFAULT_MAX_INPUT_BYTES = 25 * 1024 * 1024;

export interface InputCheck {
  field: Field & { kind: 'media' | 'mediaList' };
  maxBytes: number;
  minSide?: number;
}

/** What a tool's batch field accepts, read from the catalogue and the shared limits. */
export function inputCheckOf(tool: ToolEntry): InputCheck | null {
  const field = tool.fields.find((f) => f.name === tool.batchField);
  if (!field || (field.kind !== 'media' && field.kind !== 'mediaList')) return null;
  const family = familyOfTool(tool.id);
  const fam = family && FAMILY_LIMITS[family];
  const imageLimits = fam?.images?.field === field.name ? fam.images : undefined;
  return {
    field,
    maxBytes: imageLimits?.maxBytes ?? DEFAULT_MAX_INPUT_BYTES,
    minSide: imageLimits?.minSide,
  };
}

const DEFAULT_FORMATS = { image: ['jpeg', 'png'], video: ['mp4', 'mov'], audio: ['mp3', 'wav'] } as const;

export const formatsOf = (c: InputCheck): readonly string[] => c.field.formats ?? DEFAULT_FORMATS[c.field.media];

export function acceptsExtension(c: InputCheck, ext: string): boolean {
  const f = EXT_FORMAT[ext.toLowerCase()];
  return !!f && formatsOf(c).includes(f);
}

/**
 * Checks one local input the way the API would, before anything is paid for: size, and for
 * images the real format (not the extension), dimensions, and that the file is whole (a photo cut
 * short by an interrupted copy or a sync still running). Returns the reason, or null.
 */
export async function checkInput(c: InputCheck, path: string): Promise<string | null> {
  const st = await stat(path).catch(() => null);
  if (!st?.isFile()) return 'is not a readable file';
  const sized = sizeProblem(c, st.size);
  if (sized || c.field.media !== 'image') return sized;
  let fh: FileHandle | null = null;
  try {
    fh = await open(path, 'r');
    let head = await readAt(fh, 0, HEAD_BYTES);
    let header = headerOf(head);
    if (!header && head.length === HEAD_BYTES) header = headerOf((head = await readAt(fh, 0, LARGE_HEAD_BYTES)));
    const from = Math.max(0, st.size - TAIL_BYTES);
    const tail = st.size <= head.length ? head.subarray(from) : await readAt(fh, from, st.size - from);
    return await imageProblem(c, { size: st.size, head, tail, decodable: path }, header);
  } catch (err) {
    // One file the user cannot open (permissions, gone since the walk) is that file's problem, not the batch's.
    return `cannot be read (${fsErrorWords(err)})`;
  } finally {
    await fh?.close();
  }
}

/**
 * The same check over the exact bytes about to be sent, so a file that changed since it was queued
 * is refused before it is paid for. For a whole PNG or JPEG it decides without an await: it runs
 * once per job, at the batch's full rate.
 */
export async function checkBytes(c: InputCheck, bytes: Buffer): Promise<string | null> {
  const sized = sizeProblem(c, bytes.length);
  if (sized || c.field.media !== 'image') return sized;
  return imageProblem(c, {
    size: bytes.length,
    head: bytes,
    tail: bytes.subarray(Math.max(0, bytes.length - TAIL_BYTES)),
    decodable: bytes,
  });
}

function sizeProblem(c: InputCheck, size: number): string | null {
  if (size === 0) return 'is empty';
  if (size > c.maxBytes)
    return `is ${(size / 1048576).toFixed(1)} MB; this tool takes at most ${(c.maxBytes / 1048576).toFixed(0)} MB`;
  return null;
}

/** What the checks look at: an image's first bytes and its last ones (all of them for bytes in memory). */
interface ImageBytes {
  size: number;
  head: Buffer;
  tail: Buffer;
  /** What sharp decodes when the cheap checks cannot decide. */
  decodable: string | Buffer;
}

interface Header {
  format: string | undefined;
  width?: number;
  height?: number;
}

async function imageProblem(c: InputCheck, img: ImageBytes, header = headerOf(img.head)): Promise<string | null> {
  const meta = header ?? (await decodedHeader(img.decodable));
  if (!meta) return 'is not a readable image';
  const formats = formatsOf(c);
  if (!meta.format || !formats.includes(meta.format))
    return `is ${meta.format ? meta.format.toUpperCase() : 'an unknown format'}; this tool takes ${formats.map((f) => f.toUpperCase()).join(', ')}`;
  if (!meta.width || !meta.height) return 'has no readable dimensions';
  if (c.minSide && Math.min(meta.width, meta.height) < c.minSide)
    return `is ${meta.width}x${meta.height}; this tool needs at least ${c.minSide}x${c.minSide}`;
  return looksWhole(meta.format, img) ? null : decodeProblem(img.decodable);
}

/**
 * Header bytes read per input: 16 KB holds the dimensions of PNG, WebP, GIF and most JPEGs; a JPEG
 * whose frame header sits behind a large EXIF block gets a second, larger read.
 */
const HEAD_BYTES = 16 * 1024;
const LARGE_HEAD_BYTES = 512 * 1024;
const SIZE_FORMAT: Record<string, string> = {
  jpg: 'jpeg',
  png: 'png',
  webp: 'webp',
  gif: 'gif',
  tiff: 'tiff',
  heif: 'heif',
  avif: 'avif',
  bmp: 'bmp',
};

async function readAt(fh: FileHandle, pos: number, bytes: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(bytes);
  const { bytesRead } = await fh.read(buf, 0, bytes, pos);
  return buf.subarray(0, bytesRead);
}

/**
 * Format and dimensions from the first bytes (image-size), so checking a folder of 10,000 images
 * costs a small read each instead of a libvips pipeline per file; null when they do not tell.
 */
function headerOf(head: Buffer): Header | null {
  try {
    const r = imageSize(head);
    const swap = (r.orientation ?? 1) >= 5;
    return {
      format: SIZE_FORMAT[r.type ?? ''] ?? r.type,
      width: swap ? r.height : r.width,
      height: swap ? r.width : r.height,
    };
  } catch {
    return null;
  }
}

// The files the cheap checks cannot settle go to sharp one at a time: two failing side by side wrote
// over each other's message in libvips's one buffer, so a cut file's reason lost its detail now and
// then (seen with a non-image beside it in one check), and a check and its Start could disagree.
const sharpTurns = oneAfterAnother();

/** The last resort for a header image-size cannot read: sharp. */
async function decodedHeader(decodable: string | Buffer): Promise<Header | null> {
  try {
    const sharp = await loadSharp();
    const m = await sharpTurns.run(() => sharp(decodable).metadata());
    return { format: m.format, width: m.width, height: m.height };
  } catch {
    return null;
  }
}

/** The end of a file, where a whole PNG has its IEND chunk and a whole JPEG its EOI marker. */
const TAIL_BYTES = 64 * 1024;
const PNG_IEND = Buffer.from('IEND', 'latin1');
const JPEG_EOI = Buffer.from([0xff, 0xd9]);

/**
 * Whether the image data is all there (a photo cut short, or still being synced, has a perfect
 * header): a PNG ends with IEND, a JPEG with EOI, a WebP is as long as its RIFF header says. A file
 * failing them (a motion photo's appended data) is decoded to decide (decodeProblem).
 */
function looksWhole(format: string, img: ImageBytes): boolean {
  if (format === 'webp') return img.head.length >= 12 && img.head.readUInt32LE(4) + 8 <= img.size;
  if (format === 'png' || format === 'jpeg') return img.tail.includes(format === 'png' ? PNG_IEND : JPEG_EOI);
  return true;
}

/**
 * The first line of libvips's message when it speaks of this input alone. libvips keeps one error
 * buffer for all its threads, so under concurrent decodes a message may be another file's, or
 * "Unknown error": such a line says nothing true about this file and is left out.
 */
export function libvipsDetail(message: string, own: string | null): string | null {
  const line = message.split('\n')[0].replace(/:\s*$/, '').trim();
  if (!line || /unknown error/i.test(line)) return null;
  const named = line.match(/[^\s:'"()]+\.(png|jpe?g|jfif|webp|gif|tiff?|heic|avif|bmp)\b/gi) ?? [];
  if (named.some((n) => own === null || basename(n) !== basename(own))) return null;
  return line;
}

async function decodeProblem(decodable: string | Buffer): Promise<string | null> {
  try {
    const sharp = await loadSharp();
    await sharpTurns.run(() =>
      sharp(decodable, { failOn: 'truncated', limitInputPixels: false, sequentialRead: true })
        .resize(64, 64, { fit: 'inside' })
        .raw()
        .toBuffer(),
    );
    return null;
  } catch (err) {
    const detail = libvipsDetail((err as Error).message, typeof decodable === 'string' ? decodable : null);
    return `is truncated or damaged: the image data ends early${detail ? ` (${detail})` : ''}; was it still being copied?`;
  }
}
