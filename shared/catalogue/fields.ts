import { z } from 'zod';
import { isLoopbackUrl } from '../loopback.ts';
import type { MediaKind } from './kinds.ts';
import type { CiteKind } from './rules.ts';

/**
 * How a media input may travel in a request body. The spec differs per tool: some take only an
 * HTTPS URL, some base64, some a data URI, video references also an uploaded-file id.
 */
export type Encoding = 'url' | 'base64' | 'dataUri' | 'upload';

interface Base {
  name: string;
  label: string;
  help?: string;
  required?: boolean;
  /** 'path' fields fill a placeholder of the create path (e.g. {resolution}) and are not sent in the body. */
  in?: 'body' | 'path';
  /** Hidden from generated forms (e.g. webhook_url, which the app sets itself). */
  advanced?: boolean;
}

export type Field =
  | (Base & { kind: 'int'; min?: number; max?: number; default?: number; acceptsString?: boolean })
  | (Base & { kind: 'number'; min?: number; max?: number; step?: number; default?: number })
  | (Base & {
      kind: 'text';
      minLength?: number;
      maxLength?: number;
      warnAbove?: number;
      multiline?: boolean;
      default?: string;
    })
  | (Base & { kind: 'enum'; options: readonly string[]; default?: string })
  | (Base & { kind: 'intChoice'; options: readonly number[]; default?: number })
  | (Base & { kind: 'bool'; default?: boolean })
  | (Base & { kind: 'url'; default?: string })
  | (Base & {
      kind: 'media';
      media: MediaKind;
      encodings: readonly Encoding[];
      formats?: readonly string[];
    })
  | (Base & {
      kind: 'mediaList';
      media: MediaKind;
      encodings: readonly Encoding[];
      formats?: readonly string[];
      min?: number;
      max: number;
      cite?: CiteKind;
      /** How each item travels: as the string itself, or as `{image, mime_type}` (the music variants). */
      wire?: 'imageWithMime';
    })
  | (Base & { kind: 'shots'; max: number; promptMax: number; durationMin: number; durationMax: number })
  | (Base & { kind: 'styling' })
  /** An object of the description given as a nested form of its properties; sent only once one is set. */
  | (Base & { kind: 'object'; fields: readonly Field[] })
  /**
   * A value the description shapes so a form cannot (a list of objects, alternatives): given as JSON,
   * checked by the service; `why` says what the form could not express.
   */
  | (Base & { kind: 'json'; why?: string });

export interface InvalidParam {
  field: string;
  reason: string;
}

const isHttpsOrLoopback = (value: string) => !/\s/.test(value) && (/^https:\/\/./i.test(value) || isLoopbackUrl(value));
const DATA_URI = /^data:(image|video|audio)\/[a-z0-9.+-]+;base64,[A-Za-z0-9+/=\s]+$/i;
const BASE64 = /^[A-Za-z0-9+/=\s]+$/;
const UPLOAD_ID = /^upl_vid_[A-Za-z0-9]+$/;

/** Which encodings a media string is in; loopback http is accepted so the Sandbox can serve inputs. */
export function encodingOf(value: string): Encoding | null {
  if (isHttpsOrLoopback(value)) return 'url';
  if (DATA_URI.test(value)) return 'dataUri';
  if (UPLOAD_ID.test(value)) return 'upload';
  if (value.length >= 16 && BASE64.test(value)) return 'base64';
  return null;
}

/** A value of the field's first encoding the engine produces, standing in for a local file not yet encoded. */
export function placeholderFor(field: { encodings: readonly Encoding[] }): string {
  if (field.encodings.includes('base64')) return 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB';
  if (field.encodings.includes('dataUri')) return 'data:image/png;base64,iVBORw0KGgo=';
  if (field.encodings.includes('url')) return 'https://example.com/input.png';
  return 'upl_vid_placeholder';
}

/** The stand-in as the field holds it (a list of one for a list), so validateRequest judges the rest. */
export const placeholderValueFor = (field: Extract<Field, { kind: 'media' | 'mediaList' }>): string | string[] =>
  field.kind === 'mediaList' ? [placeholderFor(field)] : placeholderFor(field);

/** A value given inline: base64, or a data: URI holding it (not a URL, a path or an upload id). */
export const isInline = (value: unknown): boolean =>
  typeof value === 'string' && ['base64', 'dataUri'].includes(encodingOf(value) ?? '');

/**
 * A local file in a media parameter: an absolute path that is not already a valid encoding.
 * Checking encodingOf first matters: base64 of a JPEG starts with "/9j/", which looks like a path.
 */
export const isLocalPath = (v: unknown): v is string =>
  typeof v === 'string' && encodingOf(v) === null && /^(\/[^/]|[A-Za-z]:[\\/]|\\\\)/.test(v);

const ENCODING_WORDS: Record<Encoding, string> = {
  url: 'an HTTPS URL',
  base64: 'a base64-encoded file',
  dataUri: 'a data URI (data:<type>;base64,...)',
  upload: 'an uploaded-video id (upl_vid_...)',
};

function mediaString(field: { label: string; encodings: readonly Encoding[] }) {
  const accepted = field.encodings.map((e) => ENCODING_WORDS[e]).join(' or ');
  return z.string().refine(
    (v) => {
      const enc = encodingOf(v);
      if (enc === null) return false;
      // A data URI also satisfies a plain base64 field: the service strips the prefix.
      if (enc === 'dataUri' && field.encodings.includes('base64')) return true;
      return field.encodings.includes(enc);
    },
    { message: `must be ${accepted}` },
  );
}

const stylingSchema = z
  .object({
    styles: z
      .array(
        z.object({
          name: z.string().min(1, 'must not be empty'),
          strength: z.number().min(0, 'must be at least 0').max(200, 'must be at most 200').optional(),
        }),
      )
      .max(1, 'at most 1 style')
      .optional(),
    // The service takes a character's LoRA id as a string, its strength always, colours in upper case.
    characters: z
      .array(
        z.object({
          id: z.string({ error: 'must be a LoRA id, as a string' }).regex(/^\d+$/, 'must be a LoRA id, as a string'),
          strength: z
            .number({ error: 'is required (0 to 200)' })
            .min(0, 'must be at least 0')
            .max(200, 'must be at most 200'),
        }),
      )
      .max(1, 'at most 1 character')
      .optional(),
    colors: z
      .array(
        z.object({
          color: z.string().regex(/^#[0-9A-F]{6}$/, 'must be #RRGGBB with upper-case hex digits (such as #3B5BDB)'),
          weight: z.number().min(0.05, 'must be at least 0.05').max(1, 'must be at most 1'),
        }),
      )
      .min(1, 'at least 1 color (or leave colors out)')
      .max(5, 'at most 5 colors')
      .optional(),
  })
  .strict();

/** The zod schema for one field's value as sent to the API. */
export function fieldSchema(f: Field): z.ZodType {
  switch (f.kind) {
    case 'int': {
      let n = z.number({ error: 'must be a whole number' }).int('must be a whole number');
      if (f.min !== undefined) n = n.min(f.min, `must be at least ${f.min}`);
      if (f.max !== undefined) n = n.max(f.max, `must be at most ${f.max}`);
      if (!f.acceptsString) return n;
      return z.union([n, z.string().regex(/^\d+$/, 'must be a whole number').transform(Number).pipe(n)]);
    }
    case 'number': {
      let n = z.number({ error: 'must be a number' });
      if (f.min !== undefined) n = n.min(f.min, `must be at least ${f.min}`);
      if (f.max !== undefined) n = n.max(f.max, `must be at most ${f.max}`);
      return n;
    }
    case 'text': {
      // zod measures string bounds in code points, as charCount (chars.ts) does: an emoji is one character.
      let s = z.string({ error: 'must be text' });
      if (f.minLength !== undefined)
        s = s.min(f.minLength, f.minLength === 1 ? 'must not be empty' : `must be at least ${f.minLength} characters`);
      if (f.maxLength !== undefined) s = s.max(f.maxLength, `must be at most ${f.maxLength} characters`);
      return s;
    }
    case 'enum':
      return z
        .string({ error: `must be one of ${f.options.join(', ')}` })
        .refine((v) => f.options.includes(v), { message: `must be one of ${f.options.join(', ')}` });
    case 'intChoice':
      return z
        .number({ error: `must be one of ${f.options.join(', ')}` })
        .refine((v) => f.options.includes(v), { message: `must be one of ${f.options.join(', ')}` });
    case 'bool':
      return z.boolean({ error: 'must be true or false' });
    case 'url':
      return z.string().refine(isHttpsOrLoopback, 'must be an HTTPS URL');
    case 'media':
      return mediaString(f);
    case 'mediaList': {
      let a = z.array(mediaString(f), { error: 'must be a list' }).max(f.max, `at most ${f.max} items`);
      if (f.min !== undefined) a = a.min(f.min, `at least ${f.min} item${f.min === 1 ? '' : 's'}`);
      return a;
    }
    case 'shots':
      return z
        .array(
          z
            .object({
              prompt: z
                .string()
                .min(1, 'must not be empty')
                .max(f.promptMax, `must be at most ${f.promptMax} characters`),
              duration: z
                .number({ error: 'must be a whole number of seconds' })
                .int('must be a whole number')
                .min(f.durationMin, `must be at least ${f.durationMin}`)
                .max(f.durationMax, `must be at most ${f.durationMax}`),
            })
            .strict(),
          { error: 'must be a list of shots' },
        )
        .min(1, 'at least 1 shot')
        .max(f.max, `at most ${f.max} shots`);
    case 'styling':
      return stylingSchema;
    case 'object':
      return z
        .object(
          Object.fromEntries(f.fields.map((x) => [x.name, x.required ? fieldSchema(x) : fieldSchema(x).optional()])),
          { error: 'must be an object' },
        )
        .strict();
    case 'json':
      return z.unknown().refine((v) => v !== undefined, 'is required');
  }
}

export function defaultOf(f: Field): unknown {
  return 'default' in f ? f.default : undefined;
}

/**
 * How an enum value reads in a form. Values that end in a ratio (classic_4_3, film_vertical_9_21)
 * read as "Classic 4:3"; others keep their words (enhance_skin → "enhance skin"). Only the label:
 * the value sent stays the API's.
 */
export function optionLabel(value: string): string {
  const ratio = /^([a-z]+(?:_[a-z]+)*)_(\d+)_(\d+)$/.exec(value);
  if (!ratio) return value.replaceAll('_', ' ');
  const words = ratio[1].replaceAll('_', ' ');
  return `${words[0].toUpperCase()}${words.slice(1)} ${ratio[2]}:${ratio[3]}`;
}

export function issuesToParams(issues: readonly z.core.$ZodIssue[], prefix = ''): InvalidParam[] {
  return issues.map((i) => {
    const path = [prefix, ...i.path.map(String)].filter(Boolean);
    let reason = i.message;
    if (i.code === 'unrecognized_keys') {
      return { field: [...path, ...(i.keys ?? [])].join('.') || prefix, reason: 'is not a field of this tool' };
    }
    if (i.code === 'invalid_type' && i.input === undefined) reason = 'is required';
    return { field: path.join('.'), reason };
  });
}

const MAGIC: readonly [string, string][] = [
  ['/9j/', 'image/jpeg'],
  ['iVBORw0KGgo', 'image/png'],
  ['UklGR', 'image/webp'],
];

/** The MIME type of an image value: from a data URI's prefix, base64's first bytes, or a URL's extension. */
export function imageMimeOf(value: string): string {
  const uri = /^data:(image\/[a-z0-9.+-]+);base64,/i.exec(value);
  if (uri) return uri[1].toLowerCase();
  const magic = MAGIC.find(([head]) => value.startsWith(head));
  if (magic) return magic[1];
  const ext = /\.(png|jpe?g|webp)(\?|#|$)/i.exec(value)?.[1].toLowerCase();
  if (ext === 'png') return 'image/png';
  return ext === 'webp' ? 'image/webp' : 'image/jpeg';
}

/** One field's value as it goes on the wire. */
export function wireValue(f: Field, value: unknown): unknown {
  if (f.kind !== 'mediaList' || f.wire !== 'imageWithMime' || !Array.isArray(value)) return value;
  return value.map((v) =>
    typeof v === 'string' ? { image: v.replace(/^data:[^;]+;base64,/i, ''), mime_type: imageMimeOf(v) } : v,
  );
}
