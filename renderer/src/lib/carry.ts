import { fieldSchema, type ToolEntry } from '../../../shared/catalogue/index.ts';

/**
 * `to`'s form values after switching from `from`, a variant of the same family: what was written in
 * the fields both have goes along, as the picker reads "same form, another model". A value the target
 * does not accept stays behind.
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
