import { charCount } from './chars.ts';
import type { InvalidParam } from './fields.ts';

/**
 * Cross-field rules of the spec, as data. The same list drives the form (instant feedback),
 * the engine (enforcement before anything is paid for) and the Sandbox (its 400s).
 */
export type Rule =
  /** `field` may only be sent when `needs` is sent too (image_end requires image). */
  | { kind: 'requires'; field: string; needs: string; reason: string }
  /** At least one of `fields` must be sent; the error sits on the first (a 2.5 video needs a prompt or shots). */
  | { kind: 'anyOf'; fields: readonly string[]; reason: string }
  /** No field of `a` may be combined with a field of `b` (keyframes vs reference media). */
  | { kind: 'exclusive'; a: readonly string[]; b: readonly string[]; reason: string }
  /** The prompt plus every shot's prompt stays within `max` characters. */
  | { kind: 'promptTotal'; fields: readonly string[]; shots?: string; max: number }
  /** `@Name1`..`@NameN` in prompts must name an item of the array `field`. */
  | { kind: 'mentions'; prefix: string; field: string; prompts: readonly string[]; shots?: string };

export const present = (v: unknown) => v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && v.length === 0);

function promptsOf(body: Record<string, unknown>, fields: readonly string[], shots?: string): string[] {
  const out: string[] = [];
  for (const f of fields) if (typeof body[f] === 'string') out.push(body[f] as string);
  const s = shots ? body[shots] : undefined;
  if (Array.isArray(s)) for (const shot of s) if (shot && typeof shot.prompt === 'string') out.push(shot.prompt);
  return out;
}

/** The characters of every prompt together, counted as the limits count them (code points). */
export const promptTotal = (body: Record<string, unknown>, fields: readonly string[], shots?: string) =>
  promptsOf(body, fields, shots).reduce((n, p) => n + charCount(p), 0);

export function checkRules(rules: readonly Rule[], body: Record<string, unknown>): InvalidParam[] {
  const out: InvalidParam[] = [];
  for (const r of rules) {
    switch (r.kind) {
      case 'requires':
        if (present(body[r.field]) && !present(body[r.needs])) out.push({ field: r.field, reason: r.reason });
        break;
      case 'anyOf':
        if (!r.fields.some((f) => present(body[f]))) out.push({ field: r.fields[0], reason: r.reason });
        break;
      case 'exclusive': {
        const a = r.a.filter((f) => present(body[f]));
        const b = r.b.filter((f) => present(body[f]));
        if (a.length && b.length) for (const f of a) out.push({ field: f, reason: `${r.reason} (${b.join(', ')} also given)` });
        break;
      }
      case 'promptTotal': {
        const total = promptTotal(body, r.fields, r.shots);
        if (total > r.max) out.push({ field: r.fields[0] ?? r.shots ?? 'prompt', reason: `prompts together must be at most ${r.max} characters (found ${total})` });
        break;
      }
      case 'mentions': {
        const items = Array.isArray(body[r.field]) ? (body[r.field] as unknown[]).length : 0;
        const re = new RegExp(`@${r.prefix}(\\d+)`, 'g');
        for (const p of promptsOf(body, r.prompts, r.shots)) {
          for (const m of p.matchAll(re)) {
            const n = Number(m[1]);
            if (n < 1 || n > items) {
              out.push({ field: r.field, reason: `the prompt cites @${r.prefix}${n} but only ${items} ${r.field} ${items === 1 ? 'is' : 'are'} given` });
            }
          }
        }
        break;
      }
    }
  }
  return dedupe(out);
}

function dedupe(list: InvalidParam[]): InvalidParam[] {
  const seen = new Set<string>();
  return list.filter((p) => {
    const k = `${p.field}\u0000${p.reason}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
