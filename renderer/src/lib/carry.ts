import { fieldSchema, type ToolEntry } from '../../../shared/catalogue/index.ts';

/**
 * The values of `to`'s form after switching to it from `from`, a variant of the same family (lite
 * text or image to video, the end-frame model or its fast one). The variant picker reads as "same
 * form, another model", so what the user wrote in the shared fields (prompt, duration, seed…) goes
 * along, and is not waiting in the other variant's form while this one shows its defaults. A field
 * only one of them has keeps its own value; a value the target does not accept stays behind.
 */
export function carryValues(
  from: ToolEntry,
  to: ToolEntry,
  fromValues: Record<string, unknown>,
  toValues: Record<string, unknown>,
): Record<string, unknown> {
  const out = { ...toValues };
  for (const f of to.fields) {
    const src = from.fields.find((x) => x.name === f.name && x.kind === f.kind);
    if (!src) continue;
    const v = fromValues[f.name];
    if (v === undefined) delete out[f.name];
    else if (fieldSchema(f).safeParse(v).success) out[f.name] = v;
  }
  return out;
}
