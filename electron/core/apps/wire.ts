import type { AppDefinition, AppInput, AppSummary } from '../../../shared/contract/team.ts';

/**
 * The app endpoints' bodies as the official description gives them (api-notes, "The live service"),
 * read defensively (with or without `data`, earlier field names as fallbacks) so a deployment that
 * differs in detail still parses.
 */
type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
function str(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  return typeof v === 'number' ? String(v) : undefined;
}
function num(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  return typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : undefined;
}
const unwrap = (body: unknown): unknown => (obj(body).data !== undefined ? obj(body).data : body);
/** The first of `keys` that `from` holds as a number. */
const firstNum = (from: Obj[], ...keys: string[]): number | undefined => {
  for (const source of from) for (const k of keys) if (num(source[k]) !== undefined) return num(source[k]);
  return undefined;
};

function costOf(a: Obj): number | null {
  return num(obj(a.tool_metadata).total_cost) ?? null;
}

/** An app's identifier: its `sqid` (the service's), else an `id`. */
const appIdOf = (a: Obj): string | undefined => str(a.sqid) ?? str(a.id);

export function parseAppList(body: unknown): AppSummary[] {
  const list = unwrap(body);
  const items = [list, obj(list).apps].find((l): l is unknown[] => Array.isArray(l)) ?? [];
  return items
    .map(obj)
    .filter((a) => appIdOf(a))
    .map((a) => ({
      id: appIdOf(a)!,
      name: str(a.name) ?? str(a.title) ?? appIdOf(a)!,
      description: str(a.description) ?? '',
      output: str(a.output) ?? null,
      cost: costOf(a),
    }));
}

const INPUT_TYPES = ['creation', 'text', 'number', 'select'] as const;

function parseInput(raw: unknown): AppInput | null {
  const i = obj(raw);
  // The run body is keyed by `id`; `key` (the canvas's name for it) only stands in when there is none.
  const id = str(i.id) ?? str(i.key) ?? str(i.name);
  if (!id) return null;
  const type = (INPUT_TYPES as readonly string[]).includes(String(i.type)) ? (i.type as AppInput['type']) : 'text';
  // Limits are in `config`; top-level fields are read where a deployment puts them there.
  const at = [obj(i.config), i];
  const rawOptions = at.map((o) => o.options).find(Array.isArray) as unknown[] | undefined;
  const options = rawOptions?.map((o) => str(obj(o).value) ?? str(o)).filter((o): o is string => o !== undefined);
  const def = typeof i.default === 'number' || typeof i.default === 'string' ? i.default : undefined;
  const min = firstNum(at, 'min', 'minimum');
  const max = firstNum(at, 'max', 'maximum');
  const maxLength = firstNum(at, 'max_length', 'maxLength');
  return {
    id,
    type,
    label: str(i.label) ?? str(i.key) ?? id,
    required: i.required === true,
    ...(options ? { options } : {}),
    ...(min !== undefined ? { min } : {}),
    ...(max !== undefined ? { max } : {}),
    ...(maxLength !== undefined ? { maxLength } : {}),
    ...(def !== undefined ? { default: def } : {}),
  };
}

export function parseAppDefinition(body: unknown): AppDefinition {
  const a = obj(unwrap(body));
  const [summary] = parseAppList({ data: [a] });
  if (!summary) throw new Error('the app definition has no sqid or id');
  return {
    ...summary,
    inputs: (Array.isArray(a.inputs) ? a.inputs : []).map(parseInput).filter((i): i is AppInput => i !== null),
  };
}

export type ResultMedia = 'image' | 'video' | 'audio';

/** One result of a run: where it is and, when known, what it is (which array it came from, its content type). */
export interface RunResult {
  url: string;
  contentType?: string;
  kind?: ResultMedia;
}

export interface RunView {
  runId: string | null;
  status: string;
  results: RunResult[];
  error: string | null;
}

/** The arrays of the official `result` object, and the kind of file each holds. */
const RESULT_ARRAYS: [string, ResultMedia][] = [
  ['images', 'image'],
  ['videos', 'video'],
  ['audios', 'audio'],
];

function resultOf(x: unknown, kind?: ResultMedia): RunResult {
  if (typeof x === 'string') return { url: x, ...(kind ? { kind } : {}) };
  const fields = obj(x);
  const contentType = str(fields.content_type) ?? str(fields.mime_type);
  return { url: str(fields.url) ?? '', ...(contentType ? { contentType } : {}), ...(kind ? { kind } : {}) };
}

/**
 * Run acknowledgement (202 `{status, workflow_run_identifier}`) and run detail (`{data: {run_id,
 * status, ..., error_message, result: {images, videos, audios}}}`) share this reader.
 */
export function parseRun(body: unknown): RunView {
  const r = obj(unwrap(body));
  const result = r.result;
  let results: RunResult[];
  if (result && typeof result === 'object' && !Array.isArray(result)) {
    const byKind = obj(result);
    results = RESULT_ARRAYS.flatMap(([key, kind]) =>
      Array.isArray(byKind[key]) ? (byKind[key] as unknown[]).map((x) => resultOf(x, kind)) : [],
    );
  } else {
    // Earlier shapes: one list of URLs or `{url, content_type}` items.
    const raw = [result, r.results, r.generated, r.outputs].find((l): l is unknown[] => Array.isArray(l)) ?? [];
    results = raw.map((x) => resultOf(x));
  }
  return {
    runId: str(r.workflow_run_identifier) ?? str(r.run_id) ?? str(r.id) ?? null,
    status: (str(r.status) ?? 'pending').toLowerCase(),
    results: results.filter((x) => x.url),
    error: str(r.error_message) ?? str(r.error) ?? null,
  };
}
