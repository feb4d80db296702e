import { open, stat } from 'node:fs/promises';
import { imageSize } from 'image-size';
import type { Field, ToolEntry } from '../../../shared/catalogue/index.ts';
import { FAMILY_LIMITS } from '../../../shared/validation/limits.ts';
import { loadSharp } from '../media/sharp.ts';

/**
 * Our own ceiling for a local input sent inline (base64 inflates it by a third). The spec states no
 * size limit for these tools; the Sandbox enforces the same figure.
 */
export const DEFAULT_MAX_INPUT_BYTES = 25 * 1024 * 1024;

const EXT_FORMAT: Record<string, string> = { jpg: 'jpeg', jpeg: 'jpeg', png: 'png', webp: 'webp', mp4: 'mp4', mov: 'mov', mp3: 'mp3', wav: 'wav' };

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
 * images the real format (not the extension) and dimensions. Returns the reason, or null.
 */
export async function checkInput(c: InputCheck, path: string): Promise<string | null> {
  const st = await stat(path).catch(() => null);
  if (!st?.isFile()) return 'is not a readable file';
  if (st.size === 0) return 'is empty';
  if (st.size > c.maxBytes) return `is ${(st.size / 1048576).toFixed(1)} MB; this tool takes at most ${(c.maxBytes / 1048576).toFixed(0)} MB`;
  if (c.field.media !== 'image') return null;
  let meta;
  try {
    meta = await imageHeader(path);
  } catch (err) {
    // One file the user cannot open (permissions, gone since the walk) is that file's problem, not the batch's.
    return `cannot be read (${readError(err)})`;
  }
  if (!meta) return 'is not a readable image';
  const formats = formatsOf(c);
  if (!meta.format || !formats.includes(meta.format)) return `is ${meta.format ? meta.format.toUpperCase() : 'an unknown format'}; this tool takes ${formats.map((f) => f.toUpperCase()).join(', ')}`;
  if (!meta.width || !meta.height) return 'has no readable dimensions';
  if (c.minSide && Math.min(meta.width, meta.height) < c.minSide) return `is ${meta.width}x${meta.height}; this tool needs at least ${c.minSide}x${c.minSide}`;
  return null;
}

const READ_ERRORS: Record<string, string> = { EACCES: 'permission denied', EPERM: 'permission denied', ENOENT: 'it no longer exists', EISDIR: 'it is a folder', EIO: 'input/output error' };
const readError = (err: unknown) => {
  const code = (err as NodeJS.ErrnoException).code;
  return (code && READ_ERRORS[code]) ?? code ?? (err as Error).message;
};

/**
 * Header bytes read per input: 16 KB holds the dimensions of PNG, WebP, GIF and most JPEGs; a JPEG
 * whose frame header sits behind a large EXIF block gets a second, larger read.
 */
const HEADER_STEPS = [16 * 1024, 512 * 1024];
const SIZE_FORMAT: Record<string, string> = { jpg: 'jpeg', png: 'png', webp: 'webp', gif: 'gif', tiff: 'tiff', heif: 'heif', avif: 'avif', bmp: 'bmp' };

async function readHead(path: string, bytes: number): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(bytes);
    const { bytesRead } = await fh.read(buf, 0, bytes, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/**
 * Format and dimensions from the file's first bytes (image-size), so checking a folder of 10,000
 * images costs a small read each instead of a libvips pipeline per file; sharp is the last resort.
 */
async function imageHeader(path: string): Promise<{ format: string | undefined; width?: number; height?: number } | null> {
  for (const bytes of HEADER_STEPS) {
    const head = await readHead(path, bytes);
    try {
      const r = imageSize(head);
      const swap = (r.orientation ?? 1) >= 5;
      return { format: SIZE_FORMAT[r.type ?? ''] ?? r.type, width: swap ? r.height : r.width, height: swap ? r.width : r.height };
    } catch {
      if (head.length < bytes) break;
    }
  }
  try {
    const m = await (await loadSharp())(path).metadata();
    return { format: m.format, width: m.width, height: m.height };
  } catch {
    return null;
  }
}
