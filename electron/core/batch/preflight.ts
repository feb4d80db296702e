import { open, stat, type FileHandle } from 'node:fs/promises';
import { imageSize } from 'image-size';
import type { Field, ToolEntry } from '../../../shared/catalogue/index.ts';
import { EXT_FORMAT } from '../../../shared/validation/extensions.ts';
import { FAMILY_LIMITS } from '../../../shared/validation/limits.ts';
import { loadSharp } from '../media/sharp.ts';
import { fsErrorWords } from './fs-error.ts';

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
  const fam = Object.values(FAMILY_LIMITS).find((l) => l.tool === tool.id);
  const imageLimits = fam?.images?.field === field.name ? fam.images : undefined;
  const videoLimits = fam?.videos?.field === field.name ? fam.videos.item : undefined;
  return {
    field,
    maxBytes: imageLimits?.maxBytes ?? videoLimits?.maxBytes ?? DEFAULT_MAX_INPUT_BYTES,
    minSide: imageLimits?.minSide,
  };
}

export const formatsOf = (c: InputCheck): readonly string[] => c.field.formats ?? (c.field.media === 'image' ? ['jpeg', 'png'] : c.field.media === 'video' ? ['mp4', 'mov'] : ['mp3', 'wav']);

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
    const file = fh;
    return await imageProblem(c, { size: st.size, read: (pos, len) => readAt(file, pos, len), decodable: path });
  } catch (err) {
    // One file the user cannot open (permissions, gone since the walk) is that file's problem, not the batch's.
    return `cannot be read (${fsErrorWords(err)})`;
  } finally {
    await fh?.close();
  }
}

/**
 * The same check over bytes already read: the engine runs it on the exact bytes it is about to
 * send, so a file that changed after it was queued (replaced, still being written, grown past the
 * limit) is refused before it is paid for.
 */
export async function checkBytes(c: InputCheck, bytes: Buffer): Promise<string | null> {
  const sized = sizeProblem(c, bytes.length);
  if (sized || c.field.media !== 'image') return sized;
  return imageProblem(c, { size: bytes.length, read: async (pos, len) => bytes.subarray(pos, pos + len), decodable: bytes });
}

function sizeProblem(c: InputCheck, size: number): string | null {
  if (size === 0) return 'is empty';
  if (size > c.maxBytes) return `is ${(size / 1048576).toFixed(1)} MB; this tool takes at most ${(c.maxBytes / 1048576).toFixed(0)} MB`;
  return null;
}

interface ByteSource {
  size: number;
  read(pos: number, len: number): Promise<Buffer>;
  /** What sharp decodes when the cheap checks cannot decide. */
  decodable: string | Buffer;
}

async function imageProblem(c: InputCheck, src: ByteSource): Promise<string | null> {
  const meta = await imageHeader(src);
  if (!meta) return 'is not a readable image';
  const formats = formatsOf(c);
  if (!meta.format || !formats.includes(meta.format)) return `is ${meta.format ? meta.format.toUpperCase() : 'an unknown format'}; this tool takes ${formats.map((f) => f.toUpperCase()).join(', ')}`;
  if (!meta.width || !meta.height) return 'has no readable dimensions';
  if (c.minSide && Math.min(meta.width, meta.height) < c.minSide) return `is ${meta.width}x${meta.height}; this tool needs at least ${c.minSide}x${c.minSide}`;
  return wholeImageProblem(meta.format, src);
}

/**
 * Header bytes read per input: 16 KB holds the dimensions of PNG, WebP, GIF and most JPEGs; a JPEG
 * whose frame header sits behind a large EXIF block gets a second, larger read.
 */
const HEADER_STEPS = [16 * 1024, 512 * 1024];
const SIZE_FORMAT: Record<string, string> = { jpg: 'jpeg', png: 'png', webp: 'webp', gif: 'gif', tiff: 'tiff', heif: 'heif', avif: 'avif', bmp: 'bmp' };

async function readAt(fh: FileHandle, pos: number, bytes: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(bytes);
  const { bytesRead } = await fh.read(buf, 0, bytes, pos);
  return buf.subarray(0, bytesRead);
}

/**
 * Format and dimensions from the file's first bytes (image-size), so checking a folder of 10,000
 * images costs a small read each instead of a libvips pipeline per file; sharp is the last resort.
 */
async function imageHeader(src: ByteSource): Promise<{ format: string | undefined; width?: number; height?: number } | null> {
  for (const bytes of HEADER_STEPS) {
    const head = await src.read(0, bytes);
    try {
      const r = imageSize(head);
      const swap = (r.orientation ?? 1) >= 5;
      return { format: SIZE_FORMAT[r.type ?? ''] ?? r.type, width: swap ? r.height : r.width, height: swap ? r.width : r.height };
    } catch {
      if (head.length < bytes) break;
    }
  }
  try {
    const m = await (await loadSharp())(src.decodable).metadata();
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
 * Whether the image data is all there. The header alone cannot tell: a photo cut short by an
 * interrupted copy, or one a sync client is still writing, has a perfect header, and the API would
 * be paid for a task that fails (or renders half a picture). Cheap structural checks first: a PNG
 * ends with its IEND chunk, a JPEG with its EOI marker (0xFFD9 cannot occur inside the compressed
 * data), a WebP is as long as its RIFF header says. Only a file that fails them (a JPEG with data
 * appended after the picture, as motion photos have) is decoded by libvips to decide.
 */
async function wholeImageProblem(format: string, src: ByteSource): Promise<string | null> {
  let whole: boolean;
  if (format === 'webp') {
    const riff = await src.read(0, 12);
    whole = riff.length === 12 && riff.readUInt32LE(4) + 8 <= src.size;
  } else if (format === 'png' || format === 'jpeg') {
    const from = Math.max(0, src.size - TAIL_BYTES);
    const tail = await src.read(from, src.size - from);
    whole = tail.includes(format === 'png' ? PNG_IEND : JPEG_EOI);
  } else {
    return null;
  }
  if (whole) return null;
  try {
    const sharp = await loadSharp();
    await sharp(src.decodable, { failOn: 'truncated', limitInputPixels: false, sequentialRead: true }).resize(64, 64, { fit: 'inside' }).raw().toBuffer();
    return null;
  } catch (err) {
    return `is truncated or damaged: the image data ends early (${(err as Error).message.split('\n')[0].replace(/:\s*$/, '').trim() || 'cannot be decoded'}); was it still being copied?`;
  }
}
