import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { ResultKind } from '../catalogue/kinds.ts';
import { checkRules, type Rule } from '../catalogue/rules.ts';
import { answersAtOnceAmong } from './at-once.ts';
import imageTools from './image-tools.json' with { type: 'json' };
import mediaTools from './media-tools.json' with { type: 'json' };
import flows from './flows.json' with { type: 'json' };
import apps from './apps.json' with { type: 'json' };
import docsAndSpec from './docs-and-spec.json' with { type: 'json' };
import team from './team.json' with { type: 'json' };
import favourites from './favourites.json' with { type: 'json' };
import described from './described.json' with { type: 'json' };

/**
 * The project's reference of the live service, one operation per endpoint, each with its `basis`.
 * The Sandbox serves and validates from it; the conformance tests hold the app's catalogue to it.
 */
export type { MediaKind, ResultKind } from '../catalogue/kinds.ts';

export type JsonSchema = { [key: string]: unknown };
export type Basis = 'official' | 'official-path-only' | 'docs' | 'spec';

/** A rule the description states in words, between fields: the Sandbox checks these too. */
export type StatedRule = Rule;

export interface Operation {
  operationId?: string;
  method: 'GET' | 'POST';
  /** A template: {task-id}, {app-id}, {flow-id} and {run-id} stand for path parameters. */
  path: string;
  basis: Basis;
  /** Where a `docs` or `spec` fact was read, or which operation's schema a path-only one shares. */
  basisSource?: string;
  /** The official description an `official` operation was read from (`scripts/reference-update.ts`). */
  source?: ReferenceSource;
  query?: JsonSchema;
  body?: JsonSchema;
  /** The body's content type where the description gives no JSON one (`reference:update` records it). */
  requestType?: string;
  rules?: readonly StatedRule[];
  /** Task creates: what the finished task's `generated` holds (the spec's word for each endpoint). */
  generates?: ResultKind;
  /** By status: the schema, its first example, and every named example where there are several. */
  responses?: Record<string, { schema?: JsonSchema; example?: unknown; examples?: Record<string, unknown> }>;
}

export interface ReferenceSource {
  repo: string;
  path: string;
  commit: string;
  /** The commit's date, where it was recorded. */
  date?: string;
}

export interface ReferenceFile {
  source: ReferenceSource;
  operations: Operation[];
}

export const REFERENCE_FILES: readonly ReferenceFile[] = [
  imageTools,
  mediaTools,
  flows,
  apps,
  team,
  docsAndSpec,
  favourites,
  described,
] as unknown as ReferenceFile[];
export const OPERATIONS: readonly Operation[] = REFERENCE_FILES.flatMap((f) => f.operations);
/** The described operations no manifest entry names (`described.json`): every other tool of the service. */
export const RESTED: ReadonlySet<Operation> = new Set((described as unknown as ReferenceFile).operations);

const PARAM = /\{[a-z-]+\}/g;
const matcherOf = (template: string) =>
  new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(PARAM, '[^/]+')}$`);
const matchers = new Map(OPERATIONS.map((op) => [op, matcherOf(op.path)]));

/** The operation a request is for: a concrete path beats a template (`/v1/ai/apps/runs/x` is a run, not an app). */
export function findOperation(method: string, path: string): Operation | undefined {
  const hits = OPERATIONS.filter((op) => op.method === method && matchers.get(op)!.test(path));
  const params = (op: Operation) => op.path.match(PARAM)?.length ?? 0;
  return hits.sort((a, b) => params(a) - params(b))[0];
}

/** A create that answers its result at once, judged among the whole reference (see at-once.ts). */
export const answersAtOnce = (op: Operation): boolean => answersAtOnceAmong(op, OPERATIONS);

/** The content type a create's body travels in: JSON, unless the description names another (background removal takes a form). */
export function bodyContentTypeOf(op: Operation): 'application/json' | 'application/x-www-form-urlencoded' {
  return op.requestType === 'application/x-www-form-urlencoded' ? op.requestType : 'application/json';
}

export interface InvalidParam {
  field: string;
  reason: string;
}

const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
const compiled = new WeakMap<JsonSchema, ValidateFunction>();

/**
 * Closes every object the description lists properties of, so a field it does not name is refused
 * by name (the service would ignore it, and a misspelt parameter would then be paid for in vain).
 * Objects under allOf stay open, since each part names only some of the properties.
 */
function closed(schema: unknown, inAllOf = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => closed(s, inAllOf));
  if (!schema || typeof schema !== 'object') return schema;
  const merged = mergedAllOf(schema as JsonSchema);
  if (merged) return closed(merged, inAllOf);
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(schema)) {
    // The description has `anyOf: []` (wan-2-7): no alternatives constrain nothing, and ajv refuses to compile it.
    if (['allOf', 'anyOf', 'oneOf'].includes(k) && Array.isArray(v) && v.length === 0) continue;
    if (k === 'properties')
      out[k] = Object.fromEntries(Object.entries(v as JsonSchema).map(([p, s]) => [p, closed(s)]));
    else if (k === 'default' || k === 'enum' || k === 'const') out[k] = v;
    // Read as anyOf: the description's alternatives overlap (`image` a string of format byte, uri or
    // binary; frames with or without a last one), and a request valid by two of them is still valid.
    else if (k === 'oneOf') out.anyOf = closed(v);
    else out[k] = closed(v, k === 'allOf');
  }
  if (out.properties && out.additionalProperties === undefined && !inAllOf) out.additionalProperties = false;
  return out;
}

/**
 * An allOf of plain objects (a base body plus a few fields, parts nested in parts) read as the one
 * object it describes, its own `required` kept beside its parts'.
 */
function mergedAllOf(schema: JsonSchema): JsonSchema | null {
  const raw = schema.allOf as JsonSchema[] | undefined;
  if (!raw) return null;
  const parts = raw.map((p) => mergedAllOf(p) ?? p);
  const plain = (p: JsonSchema) =>
    (p.type === 'object' || p.type === undefined) && !p.allOf && !p.oneOf && !p.anyOf && (p.properties || p.required);
  if (!parts.every(plain)) return null;
  const { allOf: _parts, ...rest } = schema;
  const requiredOf = (p: JsonSchema) => (p.required as string[] | undefined) ?? [];
  return {
    ...rest,
    type: 'object',
    properties: Object.assign({}, rest.properties, ...parts.map((p) => p.properties ?? {})),
    required: [...new Set([...requiredOf(rest), ...parts.flatMap(requiredOf)])],
  };
}

/** The one object schema a body is (an allOf of parts merged), for tests that read its fields. */
export function bodyObject(op: Operation): JsonSchema | null {
  return op.body ? (mergedAllOf(op.body) ?? op.body) : null;
}

const compiledOpen = new WeakMap<JsonSchema, ValidateFunction>();

/** `open`: objects take fields the schema does not name (an answer may carry more than its schema says). */
function validatorOf(schema: JsonSchema, open = false): ValidateFunction {
  const cache = open ? compiledOpen : compiled;
  let v = cache.get(schema);
  if (!v) cache.set(schema, (v = ajv.compile(open ? schema : (closed(schema) as JsonSchema))));
  return v;
}

const fieldOf = (instancePath: string, extra?: string) =>
  [...instancePath.split('/').slice(1), ...(extra === undefined ? [] : [extra])]
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');

function reasonOf(e: ErrorObject): InvalidParam {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return { field: fieldOf(e.instancePath, String(p.missingProperty)), reason: 'is required' };
    case 'additionalProperties':
      return {
        field: fieldOf(e.instancePath, String(p.additionalProperty)),
        reason: 'is not a parameter of this endpoint',
      };
    case 'enum':
      return { field: fieldOf(e.instancePath), reason: `must be one of ${(p.allowedValues as unknown[]).join(', ')}` };
    case 'minimum':
    case 'exclusiveMinimum':
      return {
        field: fieldOf(e.instancePath),
        reason: `must be ${e.keyword === 'minimum' ? 'at least' : 'greater than'} ${String(p.limit)}`,
      };
    case 'maximum':
    case 'exclusiveMaximum':
      return {
        field: fieldOf(e.instancePath),
        reason: `must be ${e.keyword === 'maximum' ? 'at most' : 'less than'} ${String(p.limit)}`,
      };
    case 'minLength':
      return { field: fieldOf(e.instancePath), reason: `must be at least ${String(p.limit)} characters` };
    case 'maxLength':
      return { field: fieldOf(e.instancePath), reason: `must be at most ${String(p.limit)} characters` };
    case 'minItems':
      return {
        field: fieldOf(e.instancePath),
        reason: `must have at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}`,
      };
    case 'maxItems':
      return {
        field: fieldOf(e.instancePath),
        reason: `must have at most ${String(p.limit)} item${p.limit === 1 ? '' : 's'}`,
      };
    case 'pattern':
      return { field: fieldOf(e.instancePath), reason: `must match ${String(p.pattern)}` };
    case 'type':
      return { field: fieldOf(e.instancePath), reason: `must be of type ${[p.type].flat().join(' or ')}` };
    default:
      return { field: fieldOf(e.instancePath), reason: e.message ?? 'is not valid' };
  }
}

/**
 * Problems of a value against a schema, one per field; alternatives (oneOf/anyOf) report their own
 * first. Objects are closed (a field the schema does not name is a problem) unless `open`.
 */
export function problemsOf(schema: JsonSchema, value: unknown, open = false): InvalidParam[] {
  const v = validatorOf(schema, open);
  if (v(value)) return [];
  const seen = new Map<string, InvalidParam>();
  for (const e of v.errors ?? []) {
    if (e.keyword === 'oneOf' || e.keyword === 'anyOf' || e.keyword === 'if') continue;
    const p = reasonOf(e);
    if (!seen.has(p.field)) seen.set(p.field, p);
  }
  if (seen.size === 0)
    return [
      { field: fieldOf(v.errors?.[0]?.instancePath ?? '') || 'body', reason: v.errors?.[0]?.message ?? 'is not valid' },
    ];
  return [...seen.values()];
}

/** A request body against its operation: the schema first, then the stated rules. */
export function requestProblems(op: Operation, body: unknown): InvalidParam[] {
  if (!op.body) return [];
  const schemaProblems = problemsOf(op.body, body);
  if (schemaProblems.length || !body || typeof body !== 'object') return schemaProblems;
  return checkRules(op.rules ?? [], body as Record<string, unknown>);
}
