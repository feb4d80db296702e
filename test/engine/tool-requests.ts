/**
 * Requests for any tool, made from its catalogue fields alone: the minimal valid one (what it
 * requires) and a full one (every optional field within its bounds), each held to the reference's
 * schema so the request is one the description allows (fields it forbids together are dropped,
 * fields a branch of it requires are added). Media fields get local files: the engine uploads
 * them or sends them inline, as each field takes them.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import {
  DEFAULT_SLUGS,
  defaultOf,
  placeholderFor,
  resolvePaths,
  type Field,
  type MediaKind,
  type ToolEntry,
  validateRequest,
} from '../../shared/catalogue/index.ts';
import { uploadTo } from '../sandbox-upload.ts';
import { bodyObject, findOperation, requestProblems, type JsonSchema } from '../../shared/official/index.ts';

export type Samples = Record<MediaKind, string>;

/** A 512x512 PNG, a one-second 320x240 MP4 and a one-second WAV in `dir`. */
export async function makeSamples(dir: string): Promise<Samples> {
  const image = join(dir, 'photo.png');
  await sharp({ create: { width: 512, height: 512, channels: 3, background: { r: 90, g: 140, b: 200 } } })
    .png()
    .toFile(image);
  const video = join(dir, 'clip.mp4');
  await promisify(execFile)('ffmpeg', [
    ...['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=24', '-frames:v', '24'],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-movflags', '+faststart', video],
  ]);
  const audio = join(dir, 'voice.wav');
  const rate = 8000;
  const pcm = Buffer.alloc(44 + rate * 2);
  pcm.write('RIFF', 0);
  pcm.writeUInt32LE(36 + rate * 2, 4);
  pcm.write('WAVEfmt ', 8);
  pcm.writeUInt32LE(16, 16);
  pcm.writeUInt16LE(1, 20);
  pcm.writeUInt16LE(1, 22);
  pcm.writeUInt32LE(rate, 24);
  pcm.writeUInt32LE(rate * 2, 28);
  pcm.writeUInt16LE(2, 32);
  pcm.writeUInt16LE(16, 34);
  pcm.write('data', 36);
  pcm.writeUInt32LE(rate * 2, 40);
  writeFileSync(audio, pcm);
  return { image, video, audio };
}

const PROMPT = 'a red fox walking through fresh snow at dawn, soft light';

/** The medium a value named `key` holds, by its name (`video_url`, `mask`, `reference_audios`), if any. */
function mediumOf(key: string): MediaKind | null {
  if (/video/.test(key)) return 'video';
  if (/audio|voice/.test(key)) return 'audio';
  return /image|mask|frame|ur[il]$|^uri$/.test(key) ? 'image' : null;
}

/**
 * A value of a schema the description allows: its default, first option, least length or count.
 * A media string is the uploaded sample of the medium its path names (`video_urls.url`), or its
 * object's `type` says (`{type: 'video', uri}`).
 */
function sampleOf(s: JsonSchema | undefined, urls: Samples, key = '', hint?: MediaKind): unknown {
  if (!s) return 'x';
  const branch = ((s.oneOf ?? s.anyOf) as JsonSchema[] | undefined)?.[0];
  if (branch) return sampleOf({ ...s, oneOf: undefined, anyOf: undefined, ...branch }, urls, key, hint);
  if (s.default !== undefined && s.default !== null) return s.default;
  if (Array.isArray(s.enum)) return s.enum.find((v) => v !== null);
  const type = [s.type].flat().find((t) => t !== 'null');
  switch (type) {
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, JsonSchema>;
      const required = ((s.required as string[] | undefined) ?? Object.keys(props).slice(0, 1)).filter((k) => props[k]);
      const kind = props.type ? sampleOf(props.type, urls) : undefined;
      const inner = (['image', 'video', 'audio'] as const).find((k) => k === kind);
      return Object.fromEntries(required.map((k) => [k, sampleOf(props[k], urls, `${key}.${k}`, inner)]));
    }
    case 'array':
      return Array.from({ length: Math.max(1, Number(s.minItems ?? 1)) }, () =>
        sampleOf(s.items as JsonSchema, urls, key, hint),
      );
    case 'integer':
    case 'number':
      return s.minimum ?? (typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + 1 : 1);
    case 'boolean':
      return false;
    default: {
      const medium = hint ?? mediumOf(key) ?? (s.format === 'uri' ? 'image' : null);
      if (medium) return urls[medium];
      return 'a'.repeat(Math.max(1, Number(s.minLength ?? 1)));
    }
  }
}

/** A field's value: `full` picks a value inside its bounds other than the default where there is one. */
function valueOf(f: Field, full: boolean, samples: Samples, schema: JsonSchema | undefined, urls: Samples): unknown {
  const d = defaultOf(f);
  switch (f.kind) {
    case 'text': {
      const text = PROMPT.slice(0, f.maxLength ?? PROMPT.length);
      return text.padEnd(f.minLength ?? 0, '.');
    }
    case 'int':
    case 'number': {
      if (!full && d !== undefined) return d;
      const lo = f.min ?? (d as number | undefined) ?? 1;
      const hi = f.max ?? lo;
      return f.kind === 'int' ? Math.round((lo + hi) / 2) : (lo + hi) / 2;
    }
    case 'enum':
    case 'intChoice':
      return full ? f.options.at(-1) : (d ?? f.options[0]);
    case 'bool':
      return full ? !(d ?? false) : (d ?? false);
    case 'url':
      return urls.image;
    case 'media':
      return samples[f.media];
    case 'mediaList':
      return Array.from({ length: Math.max(1, f.min ?? 1) }, () => samples[f.media]);
    case 'shots':
      return [{ prompt: PROMPT.slice(0, f.promptMax), duration: f.durationMin }];
    case 'styling':
      return {};
    case 'object':
    case 'json':
      return sampleOf(schema, urls, f.name);
  }
}

export interface ToolRequest {
  /** The file a folder batch hands the batch field, if the tool has one. */
  input: string | null;
  params: Record<string, unknown>;
  /** Optional fields left out of a full request because the description forbids them beside the rest. */
  dropped: string[];
}

/** The stand-in of a value as the schema sees it once sent: local files become the encoding their field takes. */
function asSent(tool: ToolEntry, params: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params)) {
    const f = tool.fields.find((x) => x.name === k);
    if (f?.in === 'path') continue;
    if (f?.kind === 'media') out[k] = placeholderFor(f);
    else if (f?.kind === 'mediaList')
      out[k] =
        f.wire === 'imageWithMime'
          ? (v as unknown[]).map(() => ({ image: placeholderFor(f), mime_type: 'image/png' }))
          : (v as unknown[]).map(() => placeholderFor(f));
    else out[k] = v;
  }
  return out;
}

/**
 * The fields a body of alternatives (oneOf/anyOf) allows together: its own and those of its first
 * branch (the one a full request keeps to, as fields of two branches are refused together).
 */
function fieldsOfFirstBranch(schema: JsonSchema | null): Set<string> | null {
  const branches = (schema?.oneOf ?? schema?.anyOf) as JsonSchema[] | undefined;
  if (!schema || !branches?.length) return null;
  const names = (s: JsonSchema) => [
    ...Object.keys((s.properties ?? {}) as JsonSchema),
    ...((s.required as string[] | undefined) ?? []),
  ];
  return new Set([...names(schema), ...names(branches[0])]);
}

/** The properties of the body schema, its branches' too. */
function propertiesOf(schema: JsonSchema | null): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const b of [...(((schema?.oneOf ?? schema?.anyOf) as JsonSchema[] | undefined) ?? []), schema ?? {}])
    Object.assign(out, b.properties ?? {});
  return out;
}

/** Each sample put on the Sandbox through its upload flow: the asset URL a URL inside an object-shaped field takes. */
export async function uploadSamples(baseUrl: string, samples: Samples): Promise<Samples> {
  const type: Samples = { image: 'image/png', video: 'video/mp4', audio: 'audio/wav' };
  const up = async (k: MediaKind) => (await uploadTo(baseUrl, readFileSync(samples[k]), type[k])).url;
  return { image: await up('image'), video: await up('video'), audio: await up('audio') };
}

/** A request for `tool` at its create `path` (a path-field value given in `pathParams`): `full` sets every optional field the description allows together. */
export function requestFor(
  tool: ToolEntry,
  full: boolean,
  samples: Samples,
  urls: Samples,
  pathParams: Record<string, unknown> = {},
): ToolRequest {
  const op = findOperation('POST', resolvePaths(tool, DEFAULT_SLUGS, pathParams).create);
  const schema = op ? bodyObject(op) : null;
  const props = propertiesOf(schema);
  const branch = fieldsOfFirstBranch(schema);
  const batch = tool.batchField;
  const params: Record<string, unknown> = { ...pathParams };
  const usable = tool.fields.filter((f) => f.name !== 'webhook_url' && f.name !== batch && f.in !== 'path');
  for (const f of usable)
    if (f.required || (full && (!branch || branch.has(f.name))))
      params[f.name] = valueOf(f, full, samples, props[f.name], urls);
  const dropped: string[] = [];
  const input = batch ? samples[(tool.fields.find((f) => f.name === batch) as { media: MediaKind }).media] : null;
  // Held to the schema: a field it needs (a branch's) is added, one it refuses beside the rest dropped.
  for (let round = 0; op && round < 12; round++) {
    const batchField = tool.fields.find((f) => f.name === batch);
    const batchValue = batchField?.kind === 'mediaList' ? [input] : input;
    const sent = asSent(tool, { ...params, ...(batch ? { [batch]: batchValue } : {}) });
    // The catalogue's own rules too (a curated tool's "prompt, or shots"), then the description's.
    const problems = validateRequest(tool, { ...sent, ...pathParams }).invalid.filter(
      (p) => p.reason === 'is required' || /required/.test(p.reason),
    );
    try {
      problems.push(...requestProblems(op, sent));
    } catch {
      // A schema the validator cannot compile: the Sandbox answers for it.
      break;
    }
    if (!problems.length) break;
    let changed = false;
    const seen = new Set<string>();
    for (const p of problems) {
      const top = p.field.split('.')[0];
      if (seen.has(top)) continue;
      seen.add(top);
      const f = tool.fields.find((x) => x.name === top);
      if (/required/.test(p.reason) && f && params[top] === undefined && top !== batch) {
        params[top] = valueOf(f, false, samples, props[top], urls);
        changed = true;
      } else if (params[top] !== undefined && !f?.required && top !== batch) {
        delete params[top];
        dropped.push(top);
        changed = true;
      }
    }
    if (!changed) break;
  }
  return { input, params, dropped };
}
