import { z } from 'zod';
import { defaultOf, fieldSchema, issuesToParams, type Field, type InvalidParam } from './fields.ts';
import { charCount } from './chars.ts';
import { checkRules, present } from './rules.ts';
import type { Family } from './families.ts';
import type { ToolGroup } from './kinds.ts';
import { TOOLS, type ToolEntry } from './tools.ts';
import { GENERATED_CATALOGUE, generatedTools } from './generated.ts';
import { DEFAULT_SLUGS, MODEL_SLUGS, SLUG_KEYS, SLUG_RE, type Basis, type SlugKey } from '../service-profile.ts';

export * from './chars.ts';
export * from './families.ts';
export * from './fields.ts';
export * from './kinds.ts';
export * from './rules.ts';
export * from './search.ts';
export * from './tools.ts';
export { labelOf, toolIdOf, toolOfGenerated, generatedTools, GENERATED_CATALOGUE } from './generated.ts';
export type { GeneratedCatalogue, GeneratedOp, GeneratedField } from './generated.ts';

export { DEFAULT_SLUGS, SLUG_KEYS, type SlugKey } from '../service-profile.ts';
export type Slugs = Record<SlugKey, string>;
export const slugsSchema = z.object(
  Object.fromEntries(
    SLUG_KEYS.map((k) => [k, z.string().regex(SLUG_RE, 'must be a path segment (letters, digits, . _ -)')]),
  ) as Record<SlugKey, z.ZodString>,
);

/** Where a tool's request was verified: its model path's basis, or the official description for the fixed paths. */
export function basisOf(t: ToolEntry): Basis {
  const key = /\{([a-z0-9_]+)\}/.exec(t.create)?.[1] as SlugKey | undefined;
  return key && key in MODEL_SLUGS ? MODEL_SLUGS[key].basis : 'official';
}

export function findTool(id: string): ToolEntry | undefined {
  return byId.get(id);
}

export function getTool(id: string): ToolEntry {
  const t = byId.get(id);
  if (!t) throw new Error(`unknown tool "${id}"; \`mediadesk tools\` lists the ${ALL_TOOLS.length} known tools`);
  return t;
}

/** The tools of a screen, in catalogue order. */
export const toolsOfGroup = (group: ToolGroup): ToolEntry[] => TOOLS.filter((t) => t.group === group);

/** A family's tools in catalogue order; the first one's rules and prompt bound are the family's. */
export const toolsOfFamily = (family: Family): ToolEntry[] => TOOLS.filter((t) => t.family === family);

/** The family whose limits apply to a catalogue tool, if any. */
export const familyOfTool = (toolId: string): Family | undefined => byId.get(toolId)?.family;

export const bodyFields = (t: ToolEntry): Field[] => t.fields.filter((f) => f.in !== 'path');
export const pathFields = (t: ToolEntry): Field[] => t.fields.filter((f) => f.in === 'path');

function fill(template: string, slugs: Slugs, params: Record<string, unknown>): string {
  return template.replace(/\{([a-z0-9_]+)\}/g, (_, key: string) => {
    // A job queued before a slug key existed carries no value for it: the default serves.
    if (key in DEFAULT_SLUGS) return encodeURIComponent(slugs[key as SlugKey] ?? DEFAULT_SLUGS[key as SlugKey]);
    const v = params[key];
    if (v === undefined || v === null || v === '') throw new Error(`path parameter "${key}" is missing`);
    return encodeURIComponent(String(v));
  });
}

export interface ResolvedPaths {
  create: string;
  list: string;
  byId: (taskId: string) => string;
}

/** Concrete paths of a tool for the given slugs and path parameters (e.g. resolution). */
export function resolvePaths(t: ToolEntry, slugs: Slugs, params: Record<string, unknown> = {}): ResolvedPaths {
  const withDefaults = { ...Object.fromEntries(pathFields(t).map((f) => [f.name, defaultOf(f)])), ...params };
  const list = fill(t.list, slugs, withDefaults);
  return { create: fill(t.create, slugs, withDefaults), list, byId: (id) => `${list}/${encodeURIComponent(id)}` };
}

/** Every create path a curated tool makes (each value of its path fields), which no generated tool repeats. */
function curatedCreates(): Set<string> {
  const out = new Set<string>();
  for (const t of TOOLS) {
    let combos: Record<string, unknown>[] = [{}];
    for (const f of pathFields(t))
      combos = combos.flatMap((c) =>
        (f.kind === 'enum' ? f.options : [defaultOf(f)]).map((o) => ({ ...c, [f.name]: o })),
      );
    for (const c of combos) out.add(resolvePaths(t, DEFAULT_SLUGS, c).create);
  }
  return out;
}

/** The tools of every other create of the reference, generated from its schemas (generated-data.ts). */
export const GENERATED_TOOLS: readonly ToolEntry[] = generatedTools(
  GENERATED_CATALOGUE,
  curatedCreates(),
  new Set(TOOLS.map((t) => t.id)),
);
/** Curated tools first, then the generated ones: what `mediadesk tools` lists and any tool id names. */
export const ALL_TOOLS: readonly ToolEntry[] = [...TOOLS, ...GENERATED_TOOLS];

const byId = new Map(ALL_TOOLS.map((t) => [t.id, t]));

/** The body schema: every field optional unless required; unknown keys rejected so typos surface. */
export function bodySchema(t: ToolEntry) {
  const shape: Record<string, z.ZodType> = {};
  for (const f of bodyFields(t)) shape[f.name] = f.required ? fieldSchema(f) : fieldSchema(f).optional();
  return z.object(shape).strict();
}

const schemas = new Map<string, ReturnType<typeof bodySchema>>();
const schemaOf = (t: ToolEntry) => schemas.get(t.id) ?? schemas.set(t.id, bodySchema(t)).get(t.id)!;

export interface ValidationResult {
  ok: boolean;
  invalid: InvalidParam[];
  warnings: InvalidParam[];
  /** The body as it will be sent (string scale factors coerced, etc.). */
  body: Record<string, unknown>;
}

/**
 * Validates a request as the API would see it: path parameters, body fields with the spec's
 * bounds, then the cross-field rules. The same function answers the Sandbox's 400s.
 */
export function validateRequest(t: ToolEntry, input: Record<string, unknown>): ValidationResult {
  const invalid: InvalidParam[] = [];
  const warnings: InvalidParam[] = [];
  const pathInput: Record<string, unknown> = {};
  const bodyInput: Record<string, unknown> = {};
  const pathNames = new Set(pathFields(t).map((f) => f.name));
  for (const [k, v] of Object.entries(input)) (pathNames.has(k) ? pathInput : bodyInput)[k] = v;
  for (const f of pathFields(t)) {
    const v = pathInput[f.name] ?? defaultOf(f);
    const r = fieldSchema(f).safeParse(v, { reportInput: true });
    if (!r.success) invalid.push(...issuesToParams(r.error.issues, f.name));
  }
  // reportInput: issuesToParams tells a missing value ("is required") from a wrong one by the input.
  const parsed = schemaOf(t).safeParse(bodyInput, { reportInput: true });
  if (!parsed.success) invalid.push(...issuesToParams(parsed.error.issues));
  invalid.push(...checkRules(t.rules ?? [], bodyInput));
  for (const f of bodyFields(t)) {
    if (
      f.kind === 'text' &&
      f.warnAbove &&
      typeof bodyInput[f.name] === 'string' &&
      charCount(bodyInput[f.name] as string) > f.warnAbove
    ) {
      warnings.push({
        field: f.name,
        reason: `results may become less predictable above about ${f.warnAbove} characters`,
      });
    }
  }
  for (const w of t.ignored ?? []) {
    const value = w.field
      .split('.')
      .reduce<unknown>(
        (v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined),
        bodyInput,
      );
    if (present(value) && w.when.some((f) => present(bodyInput[f])))
      warnings.push({ field: w.field.split('.')[0], reason: w.reason });
  }
  const body = parsed.success ? (parsed.data as Record<string, unknown>) : bodyInput;
  return { ok: invalid.length === 0, invalid, warnings, body };
}

/** Defaults of every field, for generated forms and for the CLI's `--param` merging. */
export function defaultsOf(t: ToolEntry): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of t.fields) {
    const d = defaultOf(f);
    if (d !== undefined) out[f.name] = d;
  }
  return out;
}

/**
 * The parameters a request is made of: the user's over the catalogue's defaults, as the Studio's
 * forms start from them and the CLI's `--param`s add to them. The one merge both use, so a tool run
 * from a terminal sends what the same settings send from the app (e.g. music's required length).
 */
export function withDefaults(t: ToolEntry, params: Record<string, unknown>): Record<string, unknown> {
  return { ...defaultsOf(t), ...params };
}

/**
 * Parses `key=value` strings (CLI `--param`) into typed values by the field's kind, so the
 * shell's strings become the numbers and booleans the API expects.
 */
export function parseParam(t: ToolEntry, pair: string): [string, unknown] {
  const eq = pair.indexOf('=');
  if (eq <= 0) throw new Error(`--param expects key=value, got "${pair}"`);
  const key = pair.slice(0, eq);
  const raw = pair.slice(eq + 1);
  const f = t.fields.find((x) => x.name === key);
  if (!f) throw new Error(`${t.id} has no parameter "${key}"; it has ${t.fields.map((x) => x.name).join(', ')}`);
  switch (f.kind) {
    case 'int':
    case 'number':
    case 'intChoice': {
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n)) throw new Error(`${key} must be a number, got "${raw}"`);
      return [key, n];
    }
    case 'bool':
      if (!['true', 'false', '1', '0', 'yes', 'no'].includes(raw))
        throw new Error(`${key} must be true or false, got "${raw}"`);
      return [key, ['true', '1', 'yes'].includes(raw)];
    case 'mediaList':
      return [key, raw.split(',').filter(Boolean)];
    case 'shots':
    case 'styling':
    case 'object':
    case 'json':
      try {
        return [key, JSON.parse(raw)];
      } catch {
        throw new Error(`${key} must be JSON, got "${raw}"`);
      }
    default:
      return [key, raw];
  }
}
