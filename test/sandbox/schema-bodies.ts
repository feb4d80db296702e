import type { JsonSchema, MediaKind } from '../../shared/official/index.ts';

/**
 * Request bodies built from an operation's schema alone, as a client that knows nothing but the
 * description would build them: `min` sends the required fields only, `full` every field it
 * names, each value taken from the schema (its default, first enum value, bounds, format). Media
 * fields are told by their names, independently of how the Sandbox finds them.
 */
export interface MediaValues {
  /** A URL of the kind (the Sandbox's own upload flow). */
  url: Record<MediaKind, string>;
  /** Base64 of an image, for image fields that are not URLs. */
  imageBase64: string;
  /** A loopback URL that takes webhook POSTs. */
  webhook: string;
}

type Mode = 'min' | 'full';

const MEDIA = /(image|mask|lightmap|video|audio|frame|voice|refer|character|element|tail|_end$|url$|urls$|uri$)/;
const NOT_MEDIA =
  /(webhook|prompt|mime|type$|size|orientation|setting|mode$|format|language|voice_id|description|name$)/;

export function mediaKindOfName(name: string, parent = ''): MediaKind | null {
  const own = /^(url|uri)$/.test(name) ? parent : name;
  if (!own || NOT_MEDIA.test(name) || !MEDIA.test(own === parent ? `${own}_url` : own)) return null;
  if (/video/.test(own)) return 'video';
  if (/audio|voice/.test(own)) return 'audio';
  return 'image';
}

/** An allOf of parts read as one schema (properties and required merged, alternatives kept). */
export function merged(s: JsonSchema): JsonSchema {
  if (!s || typeof s !== 'object') return {};
  const parts = s.allOf as JsonSchema[] | undefined;
  if (!parts) return s;
  const { allOf: _all, ...rest } = s;
  let out: JsonSchema = { ...rest };
  for (const p of parts.filter((x) => x && typeof x === 'object').map((x) => merged(x))) {
    out = {
      ...p,
      ...out,
      properties: { ...((p.properties as object) ?? {}), ...((out.properties as object) ?? {}) },
      required: [...new Set([...((p.required as string[]) ?? []), ...((out.required as string[]) ?? [])])],
    };
  }
  return out;
}

/** The first alternative of a oneOf/anyOf (not the null one), merged into the rest of its schema. */
function chosen(s: JsonSchema): JsonSchema {
  let cur = merged(s);
  for (let alts = cur.oneOf ?? cur.anyOf; Array.isArray(alts); alts = cur.oneOf ?? cur.anyOf) {
    const alt = (alts as JsonSchema[]).find((a) => a.type !== 'null') ?? (alts[0] as JsonSchema);
    const { oneOf: _o, anyOf: _a, ...rest } = cur;
    cur = merged({ allOf: [rest, alt] });
  }
  return cur;
}

const PROMPT = 'A red fox standing in fresh snow at dawn, soft light';

function stringOf(s: JsonSchema, name: string): string {
  if (name === 'language') return 'en';
  if (typeof s.pattern === 'string') {
    const re = new RegExp(s.pattern);
    const hit = ['en', '#FF0000', '00:00:05', '5', 'abc', 'A1'].find((c) => re.test(c));
    if (hit) return hit;
  }
  const min = typeof s.minLength === 'number' ? s.minLength : 0;
  const max = typeof s.maxLength === 'number' ? s.maxLength : Infinity;
  let v = name === 'voice_id' ? 'voice-1' : PROMPT;
  while (v.length < min) v += ` ${PROMPT}`;
  return v.slice(0, Math.min(max, Math.max(min, v.length)));
}

function numberOf(s: JsonSchema, integer: boolean): number {
  const min = typeof s.minimum === 'number' ? s.minimum : undefined;
  const exMin = typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum : undefined;
  const max = typeof s.maximum === 'number' ? s.maximum : undefined;
  const step = integer ? 1 : 0.5;
  let v = min ?? (exMin !== undefined ? exMin + step : undefined) ?? (max !== undefined ? Math.min(max, 1) : 1);
  if (max !== undefined && v > max) v = max;
  return integer ? Math.ceil(v) : v;
}

export function valueOf(schema: JsonSchema, name: string, parent: string, mode: Mode, m: MediaValues): unknown {
  const s = chosen(schema);
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum)) {
    const values = (s.enum as unknown[]).filter((v) => v !== null);
    return s.default !== undefined && s.default !== null && values.includes(s.default) ? s.default : values[0];
  }
  const types = [s.type].flat().filter((t) => t && t !== 'null');
  const shaped = s.items ? 'array' : 'string';
  const type = (types[0] as string | undefined) ?? (s.properties ? 'object' : shaped);
  if (type === 'object') {
    const props = (s.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((s.required as string[] | undefined) ?? []);
    const out: Record<string, unknown> = {};
    for (const [k, sub] of Object.entries(props))
      if (mode === 'full' || required.has(k)) out[k] = valueOf(sub, k, name, mode, m);
    // `{type: "video", uri}` (runway-act-two): the object's own type says what its URL is.
    const typed = out.type === 'video' || out.type === 'audio' || out.type === 'image' ? out.type : null;
    for (const k of ['uri', 'url']) if (typed && typeof out[k] === 'string') out[k] = m.url[typed];
    return out;
  }
  if (type === 'array') {
    const n = Math.max(1, typeof s.minItems === 'number' ? s.minItems : 1);
    return Array.from({ length: n }, () => valueOf((s.items ?? {}) as JsonSchema, name, parent, mode, m));
  }
  if (type === 'integer' || type === 'number') {
    if (typeof s.default === 'number') return s.default;
    return numberOf(s, type === 'integer');
  }
  if (type === 'boolean') return typeof s.default === 'boolean' ? s.default : false;
  if (/webhook/.test(name)) return m.webhook;
  const media = mediaKindOfName(name, parent);
  if (media) {
    const urlish = s.format === 'uri' || /ur[li]s?$/.test(name);
    return media === 'image' && !urlish ? m.imageBase64 : m.url[media];
  }
  if (typeof s.default === 'string') return s.default;
  if (s.format === 'uri') return m.webhook;
  return stringOf(s, name);
}

/** A body for an operation's schema in one mode. */
export function bodyFor(body: JsonSchema, mode: Mode, m: MediaValues): Record<string, unknown> {
  return valueOf(body, '', '', mode, m) as Record<string, unknown>;
}

/** A field of the body that has a bound or an enum, with a value just past it: what an out-of-bounds request sends. */
export function outOfBounds(body: JsonSchema, sent: Record<string, unknown>): { field: string; value: unknown } | null {
  const props = (chosen(body).properties ?? {}) as Record<string, JsonSchema>;
  for (const [k, raw] of Object.entries(props)) {
    if (!(k in sent)) continue;
    const s = chosen(raw);
    if (typeof s.maximum === 'number')
      return { field: k, value: s.type === 'integer' ? s.maximum + 1 : s.maximum + 0.5 };
    if (typeof s.minimum === 'number') return { field: k, value: s.minimum - 1 };
    if (Array.isArray(s.enum) && [s.type].flat().includes('string')) return { field: k, value: 'not-one-of-them' };
    if (typeof s.maxLength === 'number' && s.maxLength < 100_000)
      return { field: k, value: 'x'.repeat(s.maxLength + 1) };
    if (typeof s.maxItems === 'number' && Array.isArray(sent[k]))
      return { field: k, value: Array.from({ length: s.maxItems + 1 }, () => (sent[k] as unknown[])[0]) };
  }
  return null;
}
