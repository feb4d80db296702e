/**
 * The tools of every create the reference holds, derived from its request schema (facts) and the
 * description's words (summary, field help): `reference:update` writes them to
 * `shared/catalogue/generated-data.ts`, which the catalogue loads; `test/unit/generated-tools.test.ts`
 * holds that file equal to what this derives from the committed reference.
 */
import type { GeneratedCatalogue, GeneratedField, GeneratedOp } from '../shared/catalogue/generated.ts';
import { answersAtOnceAmong } from '../shared/official/at-once.ts';
import type { Rule } from '../shared/catalogue/rules.ts';

type Json = Record<string, unknown>;

export interface RefOperation {
  method: string;
  path: string;
  generates?: string;
  body?: Json;
  requestType?: string;
  /** Rules the description states in words (the manifest's), carried into the tool. */
  rules?: readonly Rule[];
  responses?: Record<string, { schema?: Json }>;
}

/** The description's words for one create: its summary and each body field's description. */
export interface OpProse {
  summary?: string;
  help: Record<string, string>;
}
export type Prose = Record<string, OpProse>;

const HELP_MAX = 220;

/** Prose cut to its first sentences within HELP_MAX characters, markdown marks and line breaks taken out. */
export function shortText(text: unknown): string | undefined {
  if (typeof text !== 'string') return undefined;
  const flat = text
    .replace(/\*\*|`|__/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
  if (!flat) return undefined;
  if (flat.length <= HELP_MAX) return flat;
  const cut = flat.slice(0, HELP_MAX);
  const end = cut.lastIndexOf('. ');
  return end > 40 ? cut.slice(0, end + 1) : `${cut.slice(0, cut.lastIndexOf(' '))}…`;
}

// ---- reading the description's prose ----------------------------------------------------------

export function pointer(doc: Json, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`only local references are read: ${ref}`);
  return ref
    .slice(2)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((at, k) => (at as Json | undefined)?.[k], doc);
}

/** Follows `$ref`s until a value is reached. */
export function deref(doc: Json, v: unknown): unknown {
  let at = v;
  for (let i = 0; at && typeof at === 'object' && '$ref' in at && i < 32; i++)
    at = pointer(doc, (at as Json).$ref as string);
  return at;
}
const objectAt = (doc: Json, v: unknown) => (deref(doc, v) ?? {}) as Json;

/** Every property of a body schema (its allOf parts and oneOf/anyOf branches too) with its own words. */
function propertyWords(doc: Json, raw: unknown, out: Record<string, string>, depth = 0): void {
  const s = objectAt(doc, raw);
  if (depth > 8) return;
  for (const k of ['allOf', 'oneOf', 'anyOf'])
    for (const part of (s[k] as unknown[] | undefined) ?? []) propertyWords(doc, part, out, depth + 1);
  for (const [name, p0] of Object.entries((s.properties ?? {}) as Json)) {
    if (out[name]) continue;
    const own = (p0 as Json | undefined)?.description;
    const p = objectAt(doc, p0);
    const branch = [p, ...((p.allOf ?? p.oneOf ?? p.anyOf ?? []) as unknown[]).map((b) => objectAt(doc, b))].find(
      (b) => typeof b.description === 'string',
    );
    const words = shortText(own ?? branch?.description);
    if (words) out[name] = words;
  }
}

/** The words of every POST under /v1/ai/ of a description, by path. */
export function proseOf(doc: Json): Prose {
  const out: Prose = {};
  for (const [path, item0] of Object.entries((doc.paths ?? {}) as Json)) {
    const op = objectAt(doc, item0).post as Json | undefined;
    if (!op || !path.startsWith('/v1/ai/')) continue;
    const content = (objectAt(doc, op.requestBody).content ?? {}) as Record<string, Json>;
    const media = content['application/json'] ?? Object.values(content)[0];
    const help: Record<string, string> = {};
    if (media?.schema) propertyWords(doc, media.schema, help);
    const summary = shortText(op.summary);
    out[path] = { ...(summary ? { summary } : {}), help };
  }
  return out;
}

/** The prose a generated catalogue holds, for deriving it again where the description is not at hand. */
export function proseOfCatalogue(cat: GeneratedCatalogue): Prose {
  return Object.fromEntries(
    cat.tools.map((t) => [
      t.path,
      {
        ...(t.summary ? { summary: t.summary } : {}),
        help: Object.fromEntries(t.fields.filter((f) => f.help).map((f) => [f.name, String(f.help)])),
      },
    ]),
  );
}

// ---- schema to fields ------------------------------------------------------------------------

const MEDIA_TOKENS = /(?:^|_)(image|video|audio|mask|frame|tail|end|lightmap|character|reference)s?(?:_urls?)?$/;
const BINARY = new Set(['byte', 'base64', 'binary']);

/** The schema a property is: its first branch that says a type (nullable types read as the type). */
function shapeOf(p: Json): Json {
  const branches = [p, ...((p.oneOf ?? p.anyOf ?? []) as Json[])];
  const typed = branches.find((b) => b.type !== undefined && b.type !== 'null') ?? p;
  const type = Array.isArray(typed.type) ? (typed.type as string[]).find((t) => t !== 'null') : typed.type;
  const formats = branches.map((b) => b.format).filter((f): f is string => typeof f === 'string');
  return { ...typed, type, formats };
}

function mediaKindOf(name: string): 'image' | 'video' | 'audio' {
  if (/video/.test(name)) return 'video';
  if (/audio/.test(name)) return 'audio';
  return 'image';
}

/** How a media string travels: by its format, else by what its help says (a URL, base64, or both). */
function encodingsOf(formats: readonly string[], help: string, media: string): ('url' | 'base64')[] {
  const url = formats.includes('uri') || /\burls?\b|https?:|publicly accessible|link/i.test(help);
  const b64 = formats.some((f) => BINARY.has(f)) || /base64|base-64|data uri/i.test(help);
  if (url && b64) return media === 'image' ? ['url', 'base64'] : ['url'];
  if (b64) return ['base64'];
  return ['url'];
}

/** A media input by its name: `image`, `video_url`, `image_tail`, `input_image_2` (a numbered one too). */
const isMediaName = (name: string) =>
  MEDIA_TOKENS.test(name.replace(/_\d+$/, '')) && !/^(reference|character)_(type|orientation)$/.test(name);

/** How deep a nested form goes: an object's properties, and one object more inside them. */
const FORM_DEPTH = 2;

/** An object of the description as a nested form of its properties, or JSON saying why a form cannot hold it. */
function objectFieldOf(base: GeneratedField, p: Json, depth: number): GeneratedField {
  const json = (why: string): GeneratedField => ({ ...base, kind: 'json', why });
  const props = p.properties as Record<string, Json> | undefined;
  if (p.oneOf || p.anyOf) return json('its shape is one of several alternatives');
  if (!props || !Object.keys(props).length) return json('the description names none of its properties');
  if (depth >= FORM_DEPTH) return json('it nests deeper than a form shows');
  const required = new Set((p.required as string[] | undefined) ?? []);
  const fields: GeneratedField[] = [];
  for (const [n, sub] of Object.entries(props)) {
    const f = fieldOf(n, sub, required.has(n), undefined, depth + 1);
    const encodings = f.encodings as string[] | undefined;
    // A file inside an object is given by its address; one sent inline only as JSON.
    if (f.kind === 'media' && encodings?.includes('url'))
      fields.push({ name: n, kind: 'url', ...(f.required ? { required: true } : {}) });
    else if (f.kind === 'media' || f.kind === 'mediaList') return json(`its ${n} is a file sent inline`);
    else if (f.kind === 'json') return json(`its ${n}: ${String(f.why)}`);
    else fields.push(f);
  }
  return { ...base, kind: 'object', fields };
}

function fieldOf(name: string, p0: Json, required: boolean, help: string | undefined, depth = 0): GeneratedField {
  const p = shapeOf(p0);
  const formats = p.formats as string[];
  const base: GeneratedField = {
    name,
    kind: 'json',
    ...(required ? { required: true } : {}),
    ...(help ? { help } : {}),
  };
  const def = p.default === null ? undefined : p.default;
  const bound = (inclusive: unknown, exclusive: unknown, step: number) => {
    if (typeof inclusive === 'number') return inclusive;
    return typeof exclusive === 'number' ? exclusive + step : undefined;
  };
  const bounds = (min: unknown, xmin: unknown, max: unknown, xmax: unknown, step: number) => {
    const lo = bound(min, xmin, step);
    const hi = bound(max, xmax, -step);
    return { ...(lo !== undefined ? { min: lo } : {}), ...(hi !== undefined ? { max: hi } : {}) };
  };
  const options = Array.isArray(p.enum) ? (p.enum as unknown[]).filter((v) => v !== null) : null;
  // The app polls; its help (the same long text on every create) is left out.
  if (name === 'webhook_url') return { name, kind: 'url', advanced: true, ...(required ? { required: true } : {}) };
  switch (p.type) {
    case 'string': {
      if (options)
        return {
          ...base,
          kind: 'enum',
          options: options.map(String),
          ...(def !== undefined ? { default: String(def) } : {}),
        };
      const media = mediaKindOf(name);
      if (formats.some((f) => BINARY.has(f)) || formats.includes('uri') || isMediaName(name))
        return { ...base, kind: 'media', media, encodings: encodingsOf(formats, help ?? '', media) };
      return {
        ...base,
        kind: 'text',
        ...(typeof p.minLength === 'number' ? { minLength: p.minLength } : {}),
        ...(typeof p.maxLength === 'number' ? { maxLength: p.maxLength } : {}),
        ...(typeof def === 'string' ? { default: def } : {}),
        ...(/prompt|text|description|lyrics/.test(name) ? { multiline: true } : {}),
      };
    }
    case 'integer':
      if (options)
        return {
          ...base,
          kind: 'intChoice',
          options: options.map(Number),
          ...(typeof def === 'number' ? { default: def } : {}),
        };
      return {
        ...base,
        kind: 'int',
        ...bounds(p.minimum, p.exclusiveMinimum, p.maximum, p.exclusiveMaximum, 1),
        ...(typeof def === 'number' ? { default: def } : {}),
      };
    case 'number':
      return {
        ...base,
        kind: 'number',
        ...bounds(p.minimum, p.exclusiveMinimum, p.maximum, p.exclusiveMaximum, 0.01),
        ...(typeof def === 'number' ? { default: def } : {}),
      };
    case 'boolean':
      return { ...base, kind: 'bool', ...(typeof def === 'boolean' ? { default: def } : {}) };
    case 'array': {
      const items = shapeOf((p.items ?? {}) as Json);
      if (items.type === 'string' && !items.enum && isMediaName(name)) {
        const media = mediaKindOf(name);
        return {
          ...base,
          kind: 'mediaList',
          media,
          encodings: encodingsOf(items.formats as string[], help ?? '', media),
          ...(typeof p.minItems === 'number' ? { min: p.minItems } : {}),
          max: typeof p.maxItems === 'number' ? p.maxItems : 10,
        };
      }
      return { ...base, why: items.type === 'object' ? 'a list of objects' : 'a list of values' };
    }
    case 'object':
      return objectFieldOf(base, p, depth);
    default:
      return { ...base, why: 'the description gives it no one type' };
  }
}

/** The body's properties with which are required: an allOf merged, oneOf/anyOf branches joined (required by all). */
function propertiesOf(body: Json | undefined): { props: Record<string, Json>; required: Set<string> } {
  if (!body) return { props: {}, required: new Set() };
  const props: Record<string, Json> = {};
  const required = new Set<string>((body.required as string[] | undefined) ?? []);
  Object.assign(props, body.properties ?? {});
  for (const part of (body.allOf ?? []) as Json[]) {
    const inner = propertiesOf(part);
    Object.assign(props, inner.props);
    for (const r of inner.required) required.add(r);
  }
  const branches = ((body.oneOf ?? body.anyOf ?? []) as Json[]).map(propertiesOf);
  for (const b of branches)
    for (const [k, v] of Object.entries(b.props)) {
      // A field only some branches take is sent only when set: its default would make a body match none
      // (kling-v2-1-master: aspect_ratio is text-to-video's, beside image-to-video's image).
      const everywhere = branches.every((o) => k in o.props);
      props[k] ??=
        everywhere || v.default === undefined
          ? v
          : Object.fromEntries(Object.entries(v).filter(([n]) => n !== 'default'));
    }
  for (const r of branches[0]?.required ?? []) if (branches.every((b) => b.required.has(r))) required.add(r);
  return { props, required };
}

const MAIN_INPUTS = ['image', 'image_url', 'video', 'video_url', 'start_image_url', 'first_frame', 'input_image'];

/**
 * The field a dropped file fills in a folder batch: the one required image or video input, else the
 * one required audio input, else the main image or video input (an optional audio guide is no batch's).
 */
function batchFieldOf(fields: readonly GeneratedField[]): string | undefined {
  const media = fields.filter((f) => f.kind === 'media');
  const single = media.filter((f) => f.media !== 'audio');
  const required = single.filter((f) => f.required);
  if (required.length === 1) return required[0].name;
  const requiredAudio = media.filter((f) => f.required && f.media === 'audio');
  if (!required.length && requiredAudio.length === 1) return requiredAudio[0].name;
  const pool = required.length ? required : single;
  return (pool.find((f) => MAIN_INPUTS.includes(f.name)) ?? (pool.length === 1 ? pool[0] : undefined))?.name;
}

const hasParam = (path: string) => path.includes('{');

/**
 * The collection a create polls under: itself, or the longest collection it extends, one with a by-id
 * first (`kling-v2-1-pro` is asked about under `kling-v2-1/{task-id}`, which has no list of its own).
 */
function listOf(create: string, lists: readonly string[], withById: ReadonlySet<string>): string | null {
  const fits = [...new Set([...lists, ...withById])].filter(
    (l) => create === l || create.startsWith(`${l}/`) || create.startsWith(`${l}-`),
  );
  const rank = (l: string) => (withById.has(l) ? 1e6 : 0) + l.length;
  return fits.sort((a, b) => rank(b) - rank(a))[0] ?? null;
}

const UPPER = new Set(['ai', 'gpt', 'ltx', 'vfx', 'hd', '4k', 'i2v', 't2v']);
const VERSION = /^v?\d+$/;

/** A title from the path, in sentence case, versions dotted: "Seedream v4.5 · text to image". */
export function titleOf(path: string): string {
  const parts = path.replace(/^\/v1\/ai\/(beta\/)?/, '').split('/');
  const words = (s: string) => {
    const out: string[] = [];
    for (const w of s.split('-')) {
      const last = out.at(-1);
      if (last && VERSION.test(last.split('.')[0]) && /^\d+$/.test(w) && !/^\d{3,}$/.test(w))
        out[out.length - 1] = `${last}.${w}`;
      else out.push(UPPER.has(w) ? w.toUpperCase() : w);
    }
    const text = out.join(' ');
    return text[0].toUpperCase() + text.slice(1);
  };
  if (parts.length === 1) return words(parts[0]);
  const [kind, ...model] = parts;
  return `${words(model.join('-'))} · ${kind.replaceAll('-', ' ')}`;
}

const WEBHOOK_ONLY =
  'the service answers it only by calling its webhook_url, which a desktop app cannot receive (no public address)';

/** Every create of the reference as a generated tool, in path order. */
export function deriveCatalogue(ops: readonly RefOperation[], prose: Prose, source: unknown): GeneratedCatalogue {
  const gets = ops.filter((o) => o.method === 'GET' && !hasParam(o.path)).map((o) => o.path);
  const withById = new Set(
    ops.filter((o) => o.method === 'GET' && o.path.endsWith('/{task-id}')).map((o) => o.path.slice(0, -10)),
  );
  const creates = ops
    .filter((o) => o.method === 'POST' && o.generates && !hasParam(o.path))
    .sort((a, b) => a.path.localeCompare(b.path));
  const tools = creates.map((op): GeneratedOp => {
    const words = prose[op.path] ?? { help: {} };
    const { props, required } = propertiesOf(op.body);
    const fields = Object.entries(props).map(([n, p]) => fieldOf(n, p, required.has(n), words.help[n]));
    const list = listOf(op.path, gets, withById);
    const batch = batchFieldOf(fields);
    const sync = answersAtOnceAmong(op, ops);
    return {
      path: op.path,
      title: titleOf(op.path),
      ...(words.summary ? { summary: words.summary } : {}),
      result: op.generates as GeneratedOp['result'],
      list: list ?? op.path,
      ...(list && gets.includes(list) ? {} : { listShown: false }),
      ...(sync ? { sync: true } : {}),
      ...(op.requestType && op.requestType !== 'application/json' ? { form: true } : {}),
      ...(batch ? { batch } : {}),
      ...(op.rules?.length ? { rules: [...op.rules] } : {}),
      ...(required.has('webhook_url') ? { unusable: WEBHOOK_ONLY } : {}),
      fields,
    };
  });
  return { source, tools } as GeneratedCatalogue;
}
