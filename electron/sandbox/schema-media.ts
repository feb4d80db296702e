import { open } from 'node:fs/promises';
import { encodingOf } from '../../shared/catalogue/index.ts';
import { isLoopbackUrl } from '../../shared/loopback.ts';
import type { JsonSchema, MediaKind, Operation } from '../../shared/official/index.ts';
import type { DiskStore } from './blob-store.ts';
import { InvalidParamsError, type InvalidParam } from './errors.ts';
import { mediaBytes, storeImage } from './media-input.ts';

/**
 * Media inputs of an operation the app's catalogue does not name, found from its request schema
 * alone: a string field whose name says image, mask, video, audio, frame, voice or reference (or a `url`
 * / `uri` inside such an object or list), wherever it sits (nested objects, lists, alternatives).
 */
export interface MediaSlot {
  /** Property names from the body down; `*` stands for every item of a list. */
  path: string[];
  /** `byType`: the object's own `type` field says (runway-act-two's `{type: "video", uri}`). */
  media: MediaKind | 'byType';
}

const MEDIA_NAME =
  /(image|mask|lightmap|video|audio|frame|voice|reference|refer_|character|element|tail|_end$|url$|urls$|uri$)/;
const NOT_MEDIA =
  /(webhook|prompt|mime|type$|size|orientation|setting|mode$|format|language|voice_id|description|name$)/;
const GENERIC = /^(url|uri)$/;
const NOT_A_FILE_FORMAT = new Set(['date', 'date-time', 'uuid', 'email']);

function kindByName(name: string): MediaKind {
  if (/video/.test(name)) return 'video';
  if (/audio|voice|sound|music/.test(name)) return 'audio';
  return 'image';
}

function isStringLeaf(s: JsonSchema): boolean {
  const types = [s.type].flat();
  return (
    types.includes('string') &&
    s.enum === undefined &&
    s.const === undefined &&
    !NOT_A_FILE_FORMAT.has(String(s.format))
  );
}

function walk(
  s: unknown,
  at: { path: string[]; name: string; parent: string; siblings: JsonSchema },
  out: MediaSlot[],
) {
  if (!s || typeof s !== 'object') return;
  const schema = s as JsonSchema;
  for (const k of ['allOf', 'oneOf', 'anyOf'])
    for (const part of (schema[k] as unknown[] | undefined) ?? []) walk(part, at, out);
  const props = schema.properties as Record<string, JsonSchema> | undefined;
  if (props)
    for (const [p, sub] of Object.entries(props))
      walk(sub, { path: [...at.path, p], name: p, parent: at.name, siblings: props }, out);
  if (schema.items) walk(schema.items, { ...at, path: [...at.path, '*'] }, out);
  if (!at.name || !isStringLeaf(schema)) return;
  const generic = GENERIC.test(at.name);
  const name = generic ? at.parent : at.name;
  if (!name || NOT_MEDIA.test(at.name) || !MEDIA_NAME.test(generic ? `${name}_url` : name)) return;
  const typed = generic && Array.isArray((at.siblings.type as JsonSchema | undefined)?.enum);
  out.push({ path: at.path, media: typed ? 'byType' : kindByName(name) });
}

const slotsOf = new WeakMap<Operation, MediaSlot[]>();

/** Every media input slot of an operation's body, each once. */
export function mediaSlotsOf(op: Operation): MediaSlot[] {
  let slots = slotsOf.get(op);
  if (!slots) {
    const found: MediaSlot[] = [];
    walk(op.body, { path: [], name: '', parent: '', siblings: {} }, found);
    slots = [...new Map(found.map((f) => [f.path.join('.'), f])).values()];
    slotsOf.set(op, slots);
  }
  return slots;
}

/** The values a slot holds in a body: each with the object holding it, its key, and the field as a 400 names it. */
function valuesAt(value: unknown, path: readonly string[], trail: string[] = []) {
  const out: { holder: Record<string, unknown>; key: string; value: unknown; field: string }[] = [];
  if (!value || typeof value !== 'object') return out;
  const [head, ...rest] = path;
  if (head === '*') {
    if (!Array.isArray(value)) return out;
    // A list of plain values (LoRA training's `images`): each item is the value, the list its holder.
    if (rest.length === 0)
      value.forEach((v, i) =>
        out.push({
          holder: value as unknown as Record<string, unknown>,
          key: String(i),
          value: v,
          field: [...trail, String(i)].join('.'),
        }),
      );
    else value.forEach((v, i) => out.push(...valuesAt(v, rest, [...trail, String(i)])));
    return out;
  }
  const holder = value as Record<string, unknown>;
  if (!(head in holder)) return out;
  if (rest.length === 0) out.push({ holder, key: head, value: holder[head], field: [...trail, head].join('.') });
  else out.push(...valuesAt(holder[head], rest, [...trail, head]));
  return out;
}

/** What the first bytes of a file say it is, for the kinds a media field takes. */
export function sniffMedia(b: Buffer): MediaKind | null {
  const ascii = (from: number, to: number) => b.subarray(from, to).toString('latin1');
  if (b.length < 12) return null;
  if (b[0] === 0x89 && ascii(1, 4) === 'PNG') return 'image';
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image';
  const riff: Record<string, MediaKind> = { WEBP: 'image', WAVE: 'audio' };
  if (ascii(0, 4) === 'RIFF') return riff[ascii(8, 12)] ?? null;
  if (ascii(0, 3) === 'GIF') return 'image';
  if (ascii(4, 8) === 'ftyp') return /^M4A|^M4B/.test(ascii(8, 12)) ? 'audio' : 'video';
  if (b.readUInt32BE(0) === 0x1a45dfa3) return 'video';
  if (ascii(0, 3) === 'ID3' || ascii(0, 4) === 'OggS' || ascii(0, 4) === 'fLaC') return 'audio';
  if (b[0] === 0xff && (b[1] & 0xe0) === 0xe0) return 'audio';
  return null;
}

const WORDS: Record<MediaKind, string> = {
  image: 'a readable image (JPEG, PNG or WebP)',
  video: 'a readable video (MP4, MOV or WebM)',
  audio: 'a readable audio file (MP3, WAV, M4A, OGG or FLAC)',
};

/** Enough of a file's start to tell its kind. */
const HEAD_BYTES = 64;

/**
 * The first bytes of a video or audio upload (its file id) or URL (the upload flow's asset URLs
 * among them, read by a range), so a long clip is never copied.
 */
async function headOf(value: string, field: string, disk: DiskStore): Promise<Buffer> {
  const stored = disk.get(value);
  if (stored) {
    const f = await open(stored.path);
    try {
      const { buffer, bytesRead } = await f.read(Buffer.alloc(HEAD_BYTES), 0, HEAD_BYTES, 0);
      return buffer.subarray(0, bytesRead);
    } finally {
      await f.close();
    }
  }
  if (!isLoopbackUrl(value)) return mediaBytes(value, field, disk);
  let res: Response;
  try {
    res = await fetch(value, { headers: { range: `bytes=0-${HEAD_BYTES - 1}` }, signal: AbortSignal.timeout(15_000) });
  } catch (err) {
    throw new InvalidParamsError([{ field, reason: `could not be fetched (${(err as Error).message})` }]);
  }
  if (!res.ok) throw new InvalidParamsError([{ field, reason: `could not be fetched (HTTP ${res.status})` }]);
  return Buffer.from(await res.arrayBuffer()).subarray(0, HEAD_BYTES);
}

/**
 * Replaces the media inputs of a validated body (found by `mediaSlotsOf`; the top-level fields in
 * `decoded` are the catalogue's, decoded already) by stored inputs' ids: every image, and video or
 * audio sent inline (a URL or upload of one stays as sent, its first bytes read for its kind),
 * refusing one that cannot be fetched or read as its kind with a 400 naming its field. Returns the
 * body so resolved and the first image, which results are drawn from.
 */
export async function resolveSchemaMedia(
  op: Operation,
  body: Record<string, unknown>,
  disk: DiskStore,
  decoded: ReadonlySet<string> = new Set(),
): Promise<{ params: Record<string, unknown>; firstImage?: string }> {
  const params = structuredClone(body);
  const invalid: InvalidParam[] = [];
  let firstImage: string | undefined;
  for (const slot of mediaSlotsOf(op)) {
    if (decoded.has(slot.path[0])) continue;
    for (const { holder, key, value, field } of valuesAt(params, slot.path)) {
      if (typeof value !== 'string' || value === '') continue;
      const typed = holder.type === 'video' || holder.type === 'audio' ? holder.type : 'image';
      const media: MediaKind = slot.media === 'byType' ? typed : slot.media;
      try {
        if (media === 'image') {
          holder[key] = await storeImage(value, field, disk, () => []);
          firstImage ??= holder[key] as string;
          continue;
        }
        const enc = encodingOf(value);
        const inline = enc !== 'url' && enc !== 'upload' && !disk.get(value);
        const bytes = inline ? await mediaBytes(value, field, disk) : await headOf(value, field, disk);
        const is = sniffMedia(bytes);
        // An audio track may come in a video container (audio isolation takes either).
        if (is !== media && !(media === 'audio' && is === 'video'))
          throw new InvalidParamsError([{ field, reason: `is not ${WORDS[media]}` }]);
        // Base64 is stored (a task record stays small); a URL or an upload stays as sent.
        if (inline) holder[key] = disk.putInput(bytes, `${media}/*`);
      } catch (err) {
        if (!(err instanceof InvalidParamsError)) throw err;
        invalid.push(...err.params);
      }
    }
  }
  if (invalid.length) throw new InvalidParamsError(invalid);
  return { params, firstImage };
}
