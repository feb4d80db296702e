import { familyOfTool } from '../../shared/catalogue/index.ts';
import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import { encodingOf, type Field } from '../../shared/catalogue/index.ts';
import type { DiskStore } from './blob-store.ts';
import { InvalidParamsError } from './errors.ts';
import { isLoopbackUrl } from '../../shared/loopback.ts';
import { checkVideoInputs, reasonOf, videoLimitsOf } from './video-input.ts';
import {
  checkImage,
  checkImageRules,
  imageRulesOf,
  type Issue,
  type Probe,
} from '../../shared/validation/references.ts';

/** Stated limit: decoded inputs above this are rejected (production limits are not published). */
export const MAX_INPUT_BYTES = 25 * 1024 * 1024;
/** Stated limit: images above this many pixels (16383 x 16383, libvips' default ceiling) are rejected. */
export const MAX_INPUT_PIXELS = 0x3fff * 0x3fff;
async function fetchLoopback(url: string, field: string): Promise<{ bytes: Buffer; type: string }> {
  // The Sandbox never reaches beyond this machine: tests and demos serve inputs on loopback.
  if (!isLoopbackUrl(url))
    throw new InvalidParamsError([
      {
        field,
        reason:
          'the Sandbox fetches URL inputs from loopback (127.0.0.1, localhost) only; send base64 or a loopback URL',
      },
    ]);
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(15_000) });
  } catch (err) {
    throw new InvalidParamsError([{ field, reason: `could not be fetched (${(err as Error).message})` }]);
  }
  if (!res.ok) throw new InvalidParamsError([{ field, reason: `could not be fetched (HTTP ${res.status})` }]);
  const bytes = Buffer.from(await res.arrayBuffer());
  return { bytes, type: res.headers.get('content-type') ?? 'application/octet-stream' };
}

/** Bytes of one media value, whichever of the spec's encodings it uses. */
export async function mediaBytes(value: string, field: string, disk: DiskStore): Promise<Buffer> {
  const enc = encodingOf(value);
  let bytes: Buffer;
  if (enc === 'url') bytes = (await fetchLoopback(value, field)).bytes;
  else if (enc === 'upload') {
    const f = disk.get(value);
    if (!f) throw new InvalidParamsError([{ field, reason: `upload ${value} does not exist` }]);
    bytes = await readFile(f.path);
  } else bytes = Buffer.from(value.replace(/^data:[^;]+;base64,/i, ''), 'base64');
  if (bytes.length > MAX_INPUT_BYTES)
    throw new InvalidParamsError([
      { field, reason: `is larger than the Sandbox's ${MAX_INPUT_BYTES / 1024 / 1024} MB input limit` },
    ]);
  return bytes;
}

/**
 * Decodes an image input, checks it is a readable image and keeps to the rules of its field,
 * stores it and returns its reference.
 */
export async function storeImage(
  value: string,
  field: string,
  disk: DiskStore,
  rules: (p: Probe) => Issue[],
): Promise<string> {
  const bytes = await mediaBytes(value, field, disk);
  // Bytes already stored are measured again all the same: what a field takes differs per field.
  const id = disk.inputIdOf(bytes);
  const stored = !!disk.get(id);
  let meta;
  try {
    meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  } catch {
    throw new InvalidParamsError([{ field, reason: 'is not a readable image (JPEG, PNG or WebP)' }]);
  }
  if (!meta.width || !meta.height)
    throw new InvalidParamsError([{ field, reason: 'is not a readable image (JPEG, PNG or WebP)' }]);
  // A stated limit of its own (libvips' default), named as such: not "not a readable image".
  if (meta.width * meta.height > MAX_INPUT_PIXELS) {
    throw new InvalidParamsError([
      {
        field,
        reason: `is ${meta.width}x${meta.height} (${Math.round((meta.width * meta.height) / 1e6)} megapixels); the Sandbox takes images up to ${Math.floor(MAX_INPUT_PIXELS / 1e6)} megapixels`,
      },
    ]);
  }
  const broken = rules({
    source: value,
    kind: 'image',
    container: meta.format,
    format: meta.format,
    durationSec: null,
    fps: null,
    width: meta.width,
    height: meta.height,
    bytes: bytes.length,
  });
  if (broken.length) throw new InvalidParamsError(broken.map((i) => ({ field, reason: reasonOf(i.message, value) })));
  return stored ? id : disk.putInput(bytes, `image/${meta.format}`, id);
}

/**
 * The spec's rules for images of a field: its family's where the spec states some (formats, size),
 * else the formats its catalogue entry lists (skin enhancer JPEG or PNG; change camera and
 * image-to-prompt also WebP), the formats the app's own checks hold local files to.
 */
function imageRules(toolId: string, field: Extract<Field, { kind: 'media' | 'mediaList' }>): (p: Probe) => Issue[] {
  const family = familyOfTool(toolId);
  if (family && imageRulesOf(family, field.name)) return (p) => checkImage(p, family, { field: field.name });
  return (p) => checkImageRules(p, { formats: field.formats ?? ['jpeg', 'png'] }, { field: field.name });
}

/**
 * Replaces every image input of a validated body by a stored reference, so a task record stays
 * small; video references must name an existing upload and keep within the spec's limits for
 * `toolId`'s field. Collects every bad field before failing.
 */
export async function resolveInputs(
  toolId: string,
  fields: readonly Field[],
  body: Record<string, unknown>,
  disk: DiskStore,
): Promise<Record<string, unknown>> {
  const out = { ...body };
  const errors: InvalidParamsError[] = [];
  const attempt = async <T>(fn: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof InvalidParamsError) errors.push(err);
      else throw err;
      return undefined;
    }
  };
  const checkVideos = async (field: string, values: string[], list: boolean) => {
    const slot = videoLimitsOf(toolId, field);
    if (!slot) return;
    const invalid = await checkVideoInputs(slot, field, values, { disk, list, body });
    if (invalid.length) errors.push(new InvalidParamsError(invalid));
  };
  // Items sent as {image, mime_type} (the music variants) are decoded by their image.
  const unwrap = (x: unknown) => (x && typeof x === 'object' && 'image' in x ? (x as { image: unknown }).image : x);
  for (const f of fields) {
    const raw = body[f.name];
    const v = Array.isArray(raw) ? raw.map(unwrap) : raw;
    if (v === undefined) continue;
    if (f.kind === 'media' && typeof v === 'string') {
      if (f.media === 'image') out[f.name] = await attempt(() => storeImage(v, f.name, disk, imageRules(toolId, f)));
      else if (encodingOf(v) === 'upload' && !disk.get(v))
        errors.push(new InvalidParamsError([{ field: f.name, reason: `upload ${v} does not exist` }]));
      else await checkVideos(f.name, [v], false);
    } else if (f.kind === 'mediaList' && Array.isArray(v)) {
      if (f.media === 'image')
        out[f.name] = await Promise.all(
          v.map((item, i) => attempt(() => storeImage(String(item), `${f.name}.${i}`, disk, imageRules(toolId, f)))),
        );
      else {
        v.forEach((item, i) => {
          if (encodingOf(String(item)) === 'upload' && !disk.get(String(item)))
            errors.push(new InvalidParamsError([{ field: `${f.name}.${i}`, reason: `upload ${item} does not exist` }]));
        });
        if (f.media === 'video') await checkVideos(f.name, v.map(String), true);
        // Audio and video references are not rendered from; keep only their count.
        out[f.name] = v.map(() => null);
      }
    }
  }
  if (errors.length) throw new InvalidParamsError(errors.flatMap((e) => e.params));
  return out;
}
