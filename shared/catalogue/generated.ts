import type { Field } from './fields.ts';
import type { ResultKind, ToolGroup } from './kinds.ts';
import type { Rule } from './rules.ts';
import type { ToolEntry } from './tools.ts';
import { CATALOGUE } from './generated-data.ts';

/**
 * A field as `generated-data.ts` holds it: a catalogue field without its label (made from its name
 * here, to keep the file small). Written by `npm run reference:update` (scripts/tool-derive.ts).
 */
export type GeneratedField = { name: string; kind: Field['kind'] } & Record<string, unknown>;

/** One create of the reference as a tool: facts of its request schema, the description's words. */
export interface GeneratedOp {
  path: string;
  title: string;
  summary?: string;
  result: ResultKind;
  list: string;
  /** False when the reference lists no collection for it (polled at its create path). */
  listShown?: false;
  /** Answers its result at once, no task to poll. */
  sync?: true;
  /** Its body is sent form-encoded, not as JSON. */
  form?: true;
  batch?: string;
  /** Why it cannot be run from a desktop app; listed, never hidden. */
  unusable?: string;
  /** Rules the description states only in words (the reference's, from the manifest): checked before Submit. */
  rules?: Rule[];
  fields: GeneratedField[];
}

export interface GeneratedCatalogue {
  source: unknown;
  tools: GeneratedOp[];
}

const GROUP: Record<ResultKind, ToolGroup> = { image: 'image', video: 'video', audio: 'audio', text: 'prompt' };

/** "aspect_ratio" reads "Aspect ratio". */
export const labelOf = (name: string) => {
  const w = name.replaceAll('_', ' ');
  return w[0].toUpperCase() + w.slice(1);
};

/** A generated field with its label, and its nested form's fields labelled too. */
const labelled = (f: GeneratedField): Field =>
  ({
    ...f,
    label: labelOf(f.name),
    ...(Array.isArray(f.fields) ? { fields: (f.fields as GeneratedField[]).map(labelled) } : {}),
  }) as unknown as Field;

/** The tool id of a create path: the path under /v1/ai/, its slashes as dashes. */
export const toolIdOf = (path: string) => path.replace(/^\/v1\/ai\//, '').replaceAll('/', '-');

/** A generated create as an ordinary catalogue entry. */
export function toolOfGenerated(op: GeneratedOp, id = toolIdOf(op.path)): ToolEntry {
  return {
    id,
    title: op.title,
    group: GROUP[op.result],
    endpoint: op.list,
    summary: op.summary ?? op.title,
    create: op.path,
    list: op.list,
    listShown: op.listShown ?? true,
    fields: op.fields.map(labelled),
    result: op.result,
    ...(op.batch ? { batchField: op.batch } : {}),
    // Video results live 24 h (the spec); the service says no other lifetime for the rest.
    ...(op.result === 'video' ? { resultTtlHours: 24 } : {}),
    generated: true,
    ...(op.sync ? { sync: true } : {}),
    ...(op.form ? { form: true } : {}),
    ...(op.unusable ? { unusable: op.unusable } : {}),
    ...(op.rules ? { rules: op.rules } : {}),
  };
}

/** A generated operation's tool id: from its path, with "-model" after it where a curated tool holds that id. */
export const generatedIdOf = (op: GeneratedOp, curatedIds: ReadonlySet<string>) =>
  curatedIds.has(toolIdOf(op.path)) ? `${toolIdOf(op.path)}-model` : toolIdOf(op.path);

/** The generated tools of a catalogue file, less those whose create a curated tool already makes. */
export function generatedTools(
  cat: GeneratedCatalogue,
  curatedPaths: ReadonlySet<string>,
  curatedIds: ReadonlySet<string>,
): ToolEntry[] {
  return cat.tools
    .filter((op) => !curatedPaths.has(op.path))
    .map((op) => toolOfGenerated(op, generatedIdOf(op, curatedIds)));
}

export const GENERATED_CATALOGUE: GeneratedCatalogue = CATALOGUE;
