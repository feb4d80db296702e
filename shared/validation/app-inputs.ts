/**
 * A workflow app's inputs checked against its definition: the form's own rules (required, number
 * bounds, select options, text length). The core checks them before a run is paid for, and the
 * Apps screen before it asks to confirm the cost, with the same words.
 */
import type { AppDefinition, AppInput } from '../contract/team.ts';
import type { InvalidParam } from '../catalogue/fields.ts';
import { charCount } from '../catalogue/chars.ts';

/** Each problem of `raw` (values by input id; '' or missing is empty). */
export function appInputProblems(def: AppDefinition, raw: Record<string, string | number>): InvalidParam[] {
  const invalid: InvalidParam[] = [];
  for (const k of Object.keys(raw))
    if (!def.inputs.some((i) => i.id === k))
      invalid.push({
        field: k,
        reason: `is not an input of ${def.name} (inputs: ${def.inputs.map((i) => i.id).join(', ')})`,
      });
  for (const input of def.inputs) {
    const v = raw[input.id];
    if (v === undefined || v === '') {
      if (input.required) invalid.push({ field: input.id, reason: 'is required' });
      continue;
    }
    const reason = checkValue(input, v);
    if (reason) invalid.push({ field: input.id, reason });
  }
  return invalid;
}

export function checkValue(input: AppInput, v: string | number): string | null {
  if (input.type === 'number') {
    const n = typeof v === 'number' ? v : Number(v);
    if (typeof v === 'string' && v.trim() === '') return 'must be a number';
    if (!Number.isFinite(n)) return 'must be a number';
    if (input.min !== undefined && n < input.min) return `must be at least ${input.min}`;
    if (input.max !== undefined && n > input.max) return `must be at most ${input.max}`;
  } else if (input.type === 'select') {
    if (input.options && !input.options.includes(String(v))) return `must be one of ${input.options.join(', ')}`;
  } else if (input.type === 'text') {
    if (input.maxLength !== undefined && charCount(String(v)) > input.maxLength)
      return `must be at most ${input.maxLength} characters`;
  }
  return null;
}
