import type { AppDefinition, AppInput, AppSummary } from '../../../shared/contract/team.ts';

/**
 * The app endpoints' bodies are "not shown" in the spec: everything is read defensively, with or
 * without the `data` wrapper, so a production shape that differs in detail still parses.
 */
type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : undefined);
const unwrap = (body: unknown): unknown => (obj(body).data !== undefined ? obj(body).data : body);

function costOf(a: Obj): number | null {
  return num(obj(a.tool_metadata).total_cost) ?? null;
}

export function parseAppList(body: unknown): AppSummary[] {
  const list = unwrap(body);
  const items = Array.isArray(list) ? list : Array.isArray(obj(list).apps) ? (obj(list).apps as unknown[]) : [];
  return items.map(obj).filter((a) => str(a.id)).map((a) => ({
    id: str(a.id)!,
    name: str(a.name) ?? str(a.title) ?? str(a.id)!,
    description: str(a.description) ?? '',
    output: str(a.output) ?? null,
    cost: costOf(a),
  }));
}

const INPUT_TYPES = ['creation', 'text', 'number', 'select'] as const;

function parseInput(raw: unknown): AppInput | null {
  const i = obj(raw);
  const id = str(i.id) ?? str(i.name);
  if (!id) return null;
  const type = (INPUT_TYPES as readonly string[]).includes(String(i.type)) ? (i.type as AppInput['type']) : 'text';
  const options = Array.isArray(i.options) ? i.options.map((o) => str(obj(o).value) ?? str(o)).filter((o): o is string => o !== undefined) : undefined;
  const def = typeof i.default === 'number' || typeof i.default === 'string' ? i.default : undefined;
  return {
    id, type, label: str(i.label) ?? id,
    required: i.required === true,
    ...(options ? { options } : {}),
    ...(num(i.min) !== undefined ? { min: num(i.min) } : {}),
    ...(num(i.max) !== undefined ? { max: num(i.max) } : {}),
    ...(num(i.max_length) !== undefined ? { maxLength: num(i.max_length) } : {}),
    ...(def !== undefined ? { default: def } : {}),
  };
}

export function parseAppDefinition(body: unknown): AppDefinition {
  const a = obj(unwrap(body));
  const [summary] = parseAppList({ data: [a] });
  if (!summary) throw new Error('the app definition has no id');
  return { ...summary, inputs: (Array.isArray(a.inputs) ? a.inputs : []).map(parseInput).filter((i): i is AppInput => i !== null) };
}

export interface RunView {
  runId: string | null;
  status: string;
  results: { url: string; contentType?: string }[];
  error: string | null;
}

/** Run acknowledgement (202 `{status, workflow_run_identifier}`) and run status share this reader. */
export function parseRun(body: unknown): RunView {
  const r = obj(unwrap(body));
  const raw = Array.isArray(r.results) ? r.results : Array.isArray(r.generated) ? r.generated : Array.isArray(r.outputs) ? r.outputs : [];
  const results = raw.map((x) => (typeof x === 'string' ? { url: x } : { url: str(obj(x).url) ?? '', contentType: str(obj(x).content_type) })).filter((x) => x.url);
  return {
    runId: str(r.workflow_run_identifier) ?? str(r.run_id) ?? str(r.id) ?? null,
    status: (str(r.status) ?? 'pending').toLowerCase(),
    results,
    error: str(r.error_message) ?? str(r.error) ?? null,
  };
}
