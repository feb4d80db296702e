/**
 * Regenerates the project's reference of the live service (`shared/official/`) from an official
 * OpenAPI description (YAML or JSON), for the operations `manifest.json` lists, and prints what
 * changed. An operation the description no longer has keeps its earlier entry (and its source);
 * a hand-kept entry of `docs-and-spec.json` that the description now covers moves into the
 * generated files. Usage (see docs/ARCHITECTURE.md):
 *
 *   npm run reference:update -- FILE --repo OWNER/NAME --path FILE_IN_REPO --commit SHA --date YYYY-MM-DD [--out DIR] [--catalogue FILE]
 *
 * It also writes every create as a tool (`shared/catalogue/generated-data.ts`, scripts/tool-derive.ts).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import * as prettier from 'prettier';
import { parse as parseYaml } from 'yaml';
import { deref, deriveCatalogue, pointer, proseOf, type RefOperation } from './tool-derive.ts';

type Json = Record<string, unknown>;
type Method = 'GET' | 'POST';

interface Source {
  repo: string;
  path: string;
  commit: string;
  date?: string;
}

/** One operation the app uses, as the manifest lists it; all but method and path are hand-kept facts. */
interface ManifestEntry {
  method: Method;
  path: string;
  generates?: string;
  rules?: unknown[];
  /** Fields the documentation adds to the description's body, named in basisSource. */
  addBody?: Record<string, Json>;
  basisSource?: string;
}
interface Manifest {
  files: Record<string, ManifestEntry[]>;
  /** The file that takes every other described operation under /v1/ai/, so each tool of the service is in the reference. */
  rest?: string;
  /**
   * Rules the description states only in words, for operations of the rest file, by "METHOD path":
   * the Sandbox checks them with the schema, the generated tools carry them into the form and the engine.
   */
  restRules?: Record<string, unknown[]>;
}

interface Operation extends Json {
  method: Method;
  path: string;
  basis: string;
  source?: Source;
  body?: Json;
  query?: Json;
}
interface ReferenceFile {
  source: Source | { repo: string; path: string; commit: string };
  operations: Operation[];
}

const METHODS = ['get', 'post'] as const;
const keyOf = (op: { method: string; path: string }) => `${op.method} ${op.path}`;
/** Schema words that are facts, in the order written; prose (description, example) and extensions are left out. */
const SCHEMA_FACTS = new Set([
  'type',
  'properties',
  'required',
  'enum',
  'const',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'items',
  'minItems',
  'maxItems',
  'uniqueItems',
  'default',
  'additionalProperties',
  'minProperties',
  'maxProperties',
  'allOf',
  'oneOf',
  'anyOf',
  'not',
]);

// ---- reading the description -------------------------------------------------------------

function readDescription(file: string): Json {
  const text = readFileSync(file, 'utf8');
  return (/^\s*[{[]/.test(text) ? JSON.parse(text) : parseYaml(text, { maxAliasCount: -1 })) as Json;
}

/** A schema with every reference inlined, nullable written as JSON Schema, prose left out. */
function schemaOf(doc: Json, raw: unknown, seen: readonly string[] = []): Json {
  if (!raw || typeof raw !== 'object') return {};
  const ref = (raw as Json).$ref as string | undefined;
  if (ref) return seen.includes(ref) ? {} : schemaOf(doc, pointer(doc, ref), [...seen, ref]);
  const s = raw as Json;
  const out: Json = {};
  for (const k of SCHEMA_FACTS) {
    const v = s[k];
    if (v === undefined) continue;
    if (k === 'properties')
      out[k] = Object.fromEntries(Object.entries(v as Json).map(([p, ps]) => [p, schemaOf(doc, ps, seen)]));
    else if (k === 'items' || k === 'not' || (k === 'additionalProperties' && typeof v === 'object'))
      out[k] = schemaOf(doc, v, seen);
    else if (k === 'allOf' || k === 'oneOf' || k === 'anyOf') {
      // An empty list (the description has `anyOf: []`) says nothing, and no validator compiles it.
      if ((v as unknown[]).length) out[k] = (v as unknown[]).map((x) => schemaOf(doc, x, seen));
    } else out[k] = v;
  }
  if (s.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  }
  return out;
}

function exampleValue(doc: Json, ex: unknown): unknown {
  const e = deref(doc, ex) as Json | undefined;
  return e && typeof e === 'object' && 'value' in e ? e.value : e;
}

function responsesOf(doc: Json, raw: Json | undefined): Json {
  const out: Json = {};
  for (const [status, r0] of Object.entries(raw ?? {})) {
    const r = deref(doc, r0) as Json;
    const content = (r.content ?? {}) as Record<string, Json>;
    const type = 'application/json' in content ? 'application/json' : Object.keys(content)[0];
    const media = type ? content[type] : undefined;
    const entry: Json = {};
    if (type && type !== 'application/json') entry.contentType = type;
    if (media?.schema) entry.schema = schemaOf(doc, media.schema);
    const named = Object.entries((media?.examples ?? {}) as Json).map(([n, e]) => [n, exampleValue(doc, e)] as const);
    // Some answers give their example on the schema itself (recent creations, the team directory).
    const schemaExample = (deref(doc, media?.schema) as Json | undefined)?.example;
    if (media?.example !== undefined) entry.example = media.example;
    else if (named.length) entry.example = named[0][1];
    else if (schemaExample !== undefined) entry.example = schemaExample;
    if (named.length > 1) entry.examples = Object.fromEntries(named);
    // The same status may also answer as problem+json (invalid_params nested under `problem`).
    const problem = type === 'application/json' ? content['application/problem+json'] : undefined;
    if (problem) {
      const ex = Object.values((problem.examples ?? {}) as Json).map((e) => exampleValue(doc, e));
      entry.problemJson = {
        contentType: 'application/problem+json',
        ...(problem.schema ? { schema: schemaOf(doc, problem.schema) } : {}),
        ...(problem.example !== undefined || ex.length ? { example: problem.example ?? ex[0] } : {}),
      };
    }
    out[status] = entry;
  }
  return out;
}

function queryOf(doc: Json, params: unknown[] | undefined): Json | undefined {
  const qs = (params ?? []).map((p) => deref(doc, p) as Json).filter((p) => p.in === 'query');
  if (!qs.length) return undefined;
  const required = qs.filter((p) => p.required === true).map((p) => p.name as string);
  return {
    type: 'object',
    properties: Object.fromEntries(qs.map((p) => [p.name, schemaOf(doc, p.schema)])),
    ...(required.length ? { required } : {}),
  };
}

/** Every operation of the description, by "METHOD path". */
function operationsOf(doc: Json): Map<string, { item: Json; op: Json }> {
  const out = new Map<string, { item: Json; op: Json }>();
  for (const [path, item0] of Object.entries((doc.paths ?? {}) as Json)) {
    const item = deref(doc, item0) as Json;
    for (const m of METHODS) if (item[m]) out.set(`${m.toUpperCase()} ${path}`, { item, op: item[m] as Json });
  }
  return out;
}

function generated(doc: Json, entry: ManifestEntry, found: { item: Json; op: Json }, source: Source): Operation {
  const { item, op } = found;
  const media = (deref(doc, op.requestBody) as Json | undefined)?.content as Record<string, Json> | undefined;
  const requestType = media && !media['application/json'] ? Object.keys(media)[0] : undefined;
  const bodyMedia = media?.['application/json'] ?? (media ? Object.values(media)[0] : undefined);
  let body = bodyMedia?.schema ? schemaOf(doc, bodyMedia.schema) : undefined;
  if (body && entry.addBody) body = { ...body, properties: { ...(body.properties as Json), ...entry.addBody } };
  const query = queryOf(doc, [...((item.parameters as unknown[]) ?? []), ...((op.parameters as unknown[]) ?? [])]);
  const out: Operation = {
    ...(op.operationId ? { operationId: op.operationId as string } : {}),
    method: entry.method,
    path: entry.path,
    basis: 'official',
    ...(entry.basisSource ? { basisSource: entry.basisSource } : {}),
    source,
  };
  if (query) out.query = query;
  if (body) out.body = body;
  // A body the service takes form-encoded (background removal), not as JSON.
  if (body && requestType) out.requestType = requestType;
  if (entry.rules) out.rules = entry.rules;
  if (entry.generates) out.generates = entry.generates;
  out.responses = responsesOf(doc, op.responses as Json);
  return out;
}

/** An operation with its source beside its basis, where every generated one has it. */
function withSource(op: Operation, source: Source): Operation & { source: Source } {
  const out: Json = {};
  const after = op.basisSource === undefined ? 'basis' : 'basisSource';
  for (const [k, v] of Object.entries(op)) {
    if (k === 'source') continue;
    out[k] = v;
    if (k === after) out.source = source;
  }
  return out as Operation & { source: Source };
}

/**
 * What a create makes, read from its path, for the operations no manifest entry speaks for: a newly
 * published model needs no hand-kept fact to become a tool. None for what is not a media create.
 */
export function inferredGenerates(method: Method, path: string): string | undefined {
  if (method !== 'POST' || path.includes('{') || /\/(loras|flows|apps|uploads)(\/|$)/.test(path)) return undefined;
  if (/image-to-prompt|improve-prompt|classifier/.test(path)) return 'text';
  if (/sound-effects|audio|music|voiceover/.test(path)) return 'audio';
  if (/video|lip-sync/.test(path)) return 'video';
  return 'image';
}

/** The described operations under /v1/ai/ that neither the manifest's files nor the hand-kept file hold. */
function restEntries(
  described: Map<string, unknown>,
  listed: Set<string>,
  rules: Record<string, unknown[]> = {},
): ManifestEntry[] {
  const entries = [...described.keys()]
    .filter((k) => !listed.has(k) && / \/v1\/ai\//.test(k))
    .sort()
    .map((k) => {
      const [method, path] = k.split(' ') as [Method, string];
      const generates = inferredGenerates(method, path);
      return { method, path, ...(generates ? { generates } : {}), ...(rules[k] ? { rules: rules[k] } : {}) };
    });
  const stale = Object.keys(rules).filter((k) => !entries.some((e) => keyOf(e) === k));
  if (stale.length) throw new Error(`manifest.json restRules: not operations of the rest file: ${stale.join(', ')}`);
  return entries;
}

// ---- what changed ------------------------------------------------------------------------

const BOUNDS = [
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
];

/** The facts of every field of a schema, by dotted name (array items as `name[]`), and which are required. */
function fieldFacts(schema: Json | undefined, prefix = '', out = new Map<string, Json>(), req = new Set<string>()) {
  if (!schema) return { fields: out, required: req };
  const parts = [schema, ...((schema.allOf ?? []) as Json[])];
  for (const part of parts) {
    for (const r of (part.required ?? []) as string[]) req.add(prefix + r);
    for (const [name, p] of Object.entries((part.properties ?? {}) as Record<string, Json>)) {
      const branches = [p, ...((p.oneOf ?? p.anyOf ?? []) as Json[])];
      const facts: Json = {};
      for (const b of branches) {
        if (b.type !== undefined) facts.type = [...new Set([facts.type ?? [], b.type].flat())].join('|');
        if (Array.isArray(b.enum)) facts.enum = [...((facts.enum as unknown[]) ?? []), ...b.enum];
        for (const k of BOUNDS) if (b[k] !== undefined) facts[k] = b[k];
      }
      out.set(prefix + name, facts);
      fieldFacts(p, `${prefix}${name}.`, out, req);
      if (p.items && typeof p.items === 'object') fieldFacts(p.items as Json, `${prefix}${name}[].`, out, req);
    }
  }
  return { fields: out, required: req };
}

const shown = (v: unknown) => (Array.isArray(v) ? v.map(String).join(', ') : String(v));

function changesOf(before: Operation, after: Operation): string[] {
  const lines: string[] = [];
  for (const part of ['body', 'query'] as const) {
    const a = fieldFacts(before[part] as Json | undefined);
    const b = fieldFacts(after[part] as Json | undefined);
    for (const name of b.fields.keys()) if (!a.fields.has(name)) lines.push(`${part} field added: ${name}`);
    for (const name of a.fields.keys()) if (!b.fields.has(name)) lines.push(`${part} field gone: ${name}`);
    for (const [name, fb] of b.fields) {
      const fa = a.fields.get(name);
      if (!fa) continue;
      if (fa.type !== fb.type) lines.push(`${name}: type ${shown(fa.type)} -> ${shown(fb.type)}`);
      const ea = ((fa.enum ?? []) as unknown[]).map(String);
      const eb = ((fb.enum ?? []) as unknown[]).map(String);
      const added = eb.filter((v) => !ea.includes(v));
      const gone = ea.filter((v) => !eb.includes(v));
      if (added.length) lines.push(`${name}: enum adds ${added.join(', ')}`);
      if (gone.length) lines.push(`${name}: enum drops ${gone.join(', ')}`);
      for (const k of BOUNDS)
        if (fa[k] !== fb[k])
          lines.push(
            `${name}: ${k} ${fa[k] === undefined ? 'none' : shown(fa[k])} -> ${fb[k] === undefined ? 'none' : shown(fb[k])}`,
          );
    }
    for (const r of b.required) if (!a.required.has(r)) lines.push(`${part} now requires ${r}`);
    for (const r of a.required) if (!b.required.has(r)) lines.push(`${part} no longer requires ${r}`);
  }
  return lines;
}

// ---- the update ----------------------------------------------------------------------------

async function writeJson(file: string, value: unknown) {
  const options = (await prettier.resolveConfig(file)) ?? {};
  writeFileSync(
    file,
    await prettier.format(JSON.stringify(value, null, 2), { ...options, plugins: [], filepath: file }),
  );
}

/**
 * The generated tools as a module holding one JSON text, a tool a line: a bundler keeps a string as
 * it is (an object literal it would print again, indented, three times the size). A `.json` target
 * (a trial run's) is written as JSON.
 */
async function writeCatalogue(file: string, cat: { source: unknown; tools: unknown[] }) {
  if (file.endsWith('.json')) return writeJson(file, cat);
  const json = [
    `{"source":${JSON.stringify(cat.source)},"tools":[`,
    cat.tools.map((t) => JSON.stringify(t)).join(',\n'),
    ']}',
  ].join('\n');
  const text = json.replaceAll('\\', '\\\\').replaceAll('`', '\\`').replaceAll('${', '\\${');
  const source = [
    '// Written by `npm run reference:update` (scripts/tool-derive.ts) from the reference: do not edit.',
    "import type { GeneratedCatalogue } from './generated.ts';",
    '',
    `export const CATALOGUE = JSON.parse(\`${text}\`) as GeneratedCatalogue;`,
    '',
  ].join('\n');
  const options = (await prettier.resolveConfig(file)) ?? {};
  writeFileSync(file, await prettier.format(source, { ...options, filepath: file }));
}

const readJson = <T>(file: string, fallback: T): T =>
  existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as T) : fallback;

export async function updateReference(
  descriptionFile: string,
  source: Source,
  dir: string,
  catalogueFile?: string,
): Promise<string[]> {
  const doc = readDescription(descriptionFile);
  const described = operationsOf(doc);
  const manifestFile = join(dir, 'manifest.json');
  const manifest = readJson<Manifest>(manifestFile, { files: {} });
  const handFile = join(dir, 'docs-and-spec.json');
  const hand = readJson<ReferenceFile>(handFile, { source: { repo: '', path: '', commit: '' }, operations: [] });
  const report: string[] = [];
  const sourceWords = `${source.repo}/${source.path}@${source.commit.slice(0, 7)}${source.date ? ` (${source.date})` : ''}`;
  report.push(`Reference from ${sourceWords}: ${described.size} operations described.`);

  // Hand-kept entries the description now covers join the generated files, with their hand facts.
  const stay: Operation[] = [];
  for (const op of hand.operations) {
    if (!described.has(keyOf(op))) {
      stay.push(op);
      continue;
    }
    const file = op.path.startsWith('/v1/ai/') ? 'media-tools' : 'team';
    (manifest.files[file] ??= []).push({
      method: op.method,
      path: op.path,
      ...(op.generates ? { generates: op.generates as string } : {}),
      ...(op.rules ? { rules: op.rules as unknown[] } : {}),
    });
    report.push(`${keyOf(op)}: now described; moved from docs-and-spec.json (was ${op.basis}) into ${file}.json`);
  }
  const previousHand = new Map(hand.operations.map((op) => [keyOf(op), op]));

  const used = new Set<string>();
  const written: Operation[] = [...stay];
  const files = Object.entries(manifest.files);
  if (manifest.rest) {
    const listed = new Set(files.flatMap(([, entries]) => entries.map(keyOf)));
    for (const op of stay) listed.add(keyOf(op));
    files.push([manifest.rest, restEntries(described, listed, manifest.restRules)]);
  }
  const rest = new Set(manifest.rest ? files.at(-1)![1].map(keyOf) : []);
  for (const [file, entries] of files) {
    const path = join(dir, `${file}.json`);
    const earlier = readJson<ReferenceFile | null>(path, null);
    const earlierOps = new Map((earlier?.operations ?? []).map((op) => [keyOf(op), op]));
    const ops: Operation[] = [];
    for (const entry of entries) {
      const key = keyOf(entry);
      used.add(key);
      const before = earlierOps.get(key) ?? previousHand.get(key);
      const found = described.get(key);
      if (!found) {
        if (!before) throw new Error(`${key}: in manifest.json, but neither in the description nor in ${file}.json`);
        // Kept as it was read, with the source it was read from.
        const kept = withSource(before, before.source ?? (earlier!.source as Source));
        ops.push(kept);
        if (kept.source.commit !== source.commit)
          report.push(
            `${key}: not in this description; kept from ${kept.source.repo}@${kept.source.commit.slice(0, 7)}`,
          );
        continue;
      }
      const op = generated(doc, entry, found, source);
      ops.push(op);
      if (!before) report.push(`${key}: added`);
      else for (const line of changesOf(before, op)) report.push(`${key}: ${line}`);
    }
    for (const key of earlierOps.keys()) if (!used.has(key)) report.push(`${key}: gone from the manifest, dropped`);
    await writeJson(path, { source, operations: ops });
    written.push(...ops);
  }
  await writeJson(handFile, { ...hand, operations: stay });
  await writeJson(manifestFile, manifest);

  // The description's operations the app does not use, against the last run: new models show here.
  const indexFile = join(dir, 'description-operations.json');
  const lastIndex = readJson<{ operations: string[] } | null>(indexFile, null);
  const unused = [...described.keys()].filter((k) => !used.has(k) || rest.has(k)).sort();
  if (lastIndex) {
    const last = new Set(lastIndex.operations);
    const now = new Set(described.keys());
    const seen = (k: string) => (/^POST \/v1\/ai\/[^{]+$/.test(k) ? ' (a model the app has never seen)' : '');
    for (const k of unused)
      if (!last.has(k))
        report.push(
          rest.has(k)
            ? `${k}: new in the description, in ${manifest.rest}.json${seen(k)}`
            : `${k}: new in the description, not used by the app${seen(k)}`,
        );
    for (const k of lastIndex.operations) if (!now.has(k)) report.push(`${k}: gone from the description`);
  } else report.push(`${unused.length} described operations the app does not use (no earlier index to compare)`);
  await writeJson(indexFile, { source, operations: [...described.keys()].sort() });
  if (catalogueFile) {
    // Every create as a tool (scripts/tool-derive.ts): what the catalogue loads, no code per tool.
    const cat = deriveCatalogue(written as unknown as RefOperation[], proseOf(doc), source);
    const before = existsSync(catalogueFile) ? readFileSync(catalogueFile, 'utf8') : null;
    await writeCatalogue(catalogueFile, cat);
    if (readFileSync(catalogueFile, 'utf8') !== before)
      report.push(`${cat.tools.length} creates written as tools to ${catalogueFile}`);
  }
  return report;
}

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      repo: { type: 'string' },
      path: { type: 'string' },
      commit: { type: 'string' },
      date: { type: 'string' },
      out: { type: 'string' },
      catalogue: { type: 'string' },
    },
  });
  const [file] = positionals;
  if (!file || !values.repo || !values.path || !values.commit || !values.date) {
    console.error(
      'Usage: npm run reference:update -- FILE --repo OWNER/NAME --path FILE_IN_REPO --commit SHA --date YYYY-MM-DD [--out DIR] [--catalogue FILE]',
    );
    process.exit(2);
  }
  if (!/^[0-9a-f]{40}$/.test(values.commit)) throw new Error('--commit must be the 40-digit commit of the description');
  const dir = resolve(values.out ?? join(import.meta.dirname, '..', 'shared', 'official'));
  // The generated tools go beside the catalogue; with --out (a trial run), into that folder.
  const catalogue = resolve(
    values.catalogue ??
      (values.out
        ? join(dir, 'generated-tools.json')
        : join(import.meta.dirname, '..', 'shared', 'catalogue', 'generated-data.ts')),
  );
  const lines = await updateReference(
    file,
    { repo: values.repo, path: values.path, commit: values.commit, date: values.date },
    dir,
    catalogue,
  );
  console.log(lines.join('\n'));
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) await main();
