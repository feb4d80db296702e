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
  /** No field of `a` beside one of `b` (two modes worded as alternatives); the error sits on the first of `b` sent. */
  | { kind: 'exclusive'; a: readonly string[]; b: readonly string[]; reason: string }
  /** The lists `fields` hold at most `max` items together; the error sits on the first list sent. */
  | { kind: 'maxTotal'; fields: readonly string[]; max: number; reason: string }
  /** `field`, when sent, must be `value` (a switch the description says standard keys cannot turn off). */
  | { kind: 'fixed'; field: string; value: unknown; reason: string }
  /** `field` takes base64 or a URL as the description words it; a `data:` URI is not one of them. */
  | { kind: 'noDataUri'; field: string; reason: string }
  /** The prompt plus every shot's prompt stays within `max` characters. */
  | { kind: 'promptTotal'; fields: readonly string[]; shots?: string; max: number }
  /**
   * Every citation in the prompts (`@Image2`, `@Video1`, `@Audio1`) must name an item of the list
   * `cites` maps its kind to, counted from 1 in array order; a kind with no list there is one the
   * family (`who`) takes none of. Findings sit on the prompt that holds the citation.
   */
  | {
      kind: 'citations';
      cites: Partial<Record<CiteKind, string>>;
      who: string;
      prompts: readonly string[];
      shots?: string;
    };

/** The kinds of reference a prompt can cite, and how a message names one of each. */
export const CITE_KINDS = { Image: 'reference image', Video: 'reference video', Audio: 'reference audio' } as const;
export type CiteKind = keyof typeof CITE_KINDS;
const CITATION = new RegExp(`@(${Object.keys(CITE_KINDS).join('|')})(\\d+)`, 'g');

export const present = (v: unknown) =>
  v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && v.length === 0);

/** Each prompt of a body with the request field it sits in (`prompt`, `shots.2.prompt`). */
function promptsOf(
  body: Record<string, unknown>,
  fields: readonly string[],
  shots?: string,
): { field: string; text: string }[] {
  const out: { field: string; text: string }[] = [];
  for (const f of fields) if (typeof body[f] === 'string') out.push({ field: f, text: body[f] as string });
  const s = shots ? body[shots] : undefined;
  if (Array.isArray(s))
    s.forEach(
      (shot, i) =>
        shot && typeof shot.prompt === 'string' && out.push({ field: `${shots}.${i}.prompt`, text: shot.prompt }),
    );
  return out;
}

/** The characters of every prompt together, counted as the limits count them (code points). */
export const promptTotal = (body: Record<string, unknown>, fields: readonly string[], shots?: string) =>
  promptsOf(body, fields, shots).reduce((n, p) => n + charCount(p.text), 0);

function citationProblem(
  r: Extract<Rule, { kind: 'citations' }>,
  body: Record<string, unknown>,
  kind: CiteKind,
  n: number,
): string | null {
  const token = `@${kind}${n}`;
  const what = CITE_KINDS[kind];
  const list = r.cites[kind];
  if (!list) return `${token} cites a ${what}, but ${r.who} takes none`;
  const given = Array.isArray(body[list]) ? (body[list] as unknown[]).length : 0;
  if (n < 1) return `${token} cites no ${what}: they are numbered from @${kind}1`;
  if (n > given)
    return given === 0
      ? `${token} cites a ${what}, but none is given`
      : `${token} cites ${what} ${n}, but only ${given} ${given === 1 ? 'is' : 'are'} given`;
  return null;
}

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
        const beside = r.b.find((f) => present(body[f]));
        if (beside && r.a.some((f) => present(body[f]))) out.push({ field: beside, reason: r.reason });
        break;
      }
      case 'maxTotal': {
        const lists = r.fields.filter((f) => Array.isArray(body[f]) && (body[f] as unknown[]).length);
        const total = lists.reduce((n, f) => n + (body[f] as unknown[]).length, 0);
        if (total > r.max) out.push({ field: lists[0], reason: `${r.reason} (found ${total})` });
        break;
      }
      case 'fixed':
        if (body[r.field] !== undefined && body[r.field] !== r.value) out.push({ field: r.field, reason: r.reason });
        break;
      case 'noDataUri':
        if (typeof body[r.field] === 'string' && /^data:/i.test(body[r.field] as string))
          out.push({ field: r.field, reason: r.reason });
        break;
      case 'promptTotal': {
        const total = promptTotal(body, r.fields, r.shots);
        if (total > r.max)
          out.push({
            field: r.fields[0] ?? r.shots ?? 'prompt',
            reason: `prompts together must be at most ${r.max} characters (found ${total})`,
          });
        break;
      }
      case 'citations':
        for (const p of promptsOf(body, r.prompts, r.shots)) {
          for (const m of p.text.matchAll(CITATION)) {
            const reason = citationProblem(r, body, m[1] as CiteKind, Number(m[2]));
            if (reason) out.push({ field: p.field, reason });
          }
        }
        break;
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
