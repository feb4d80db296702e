/**
 * old_state → new_state as one line per leaf. Labels quote keys that are not plain identifiers, so
 * `["a.b"]` and `a.b` never share a line; arrays align on their items (LCS), so an item removed from
 * the middle is one removal, not a change at every later index.
 */

/** An object key, an array index, or an array item that kept its value but moved. */
export type Segment = string | number | { from: number; to: number };
export type DiffKind = 'added' | 'removed' | 'changed' | 'same';
export interface DiffLine {
  path: Segment[];
  label: string;
  kind: DiffKind;
  old?: string;
  new?: string;
}

/** Above this many item pairs (after the common ends are cut) arrays are compared index by index. */
export const MAX_ALIGN_CELLS = 250_000;

const IDENT = /^[A-Za-z_$][\w$]*$/;

export function pathLabel(path: readonly Segment[]): string {
  // A scalar state has no field name; the brackets keep this apart from a key named "(value)".
  if (path.length === 0) return '(value)';
  return path
    .map((s, i) => {
      if (typeof s === 'number') return `[${s}]`;
      if (typeof s === 'object') return `[${s.from}→${s.to}]`;
      if (IDENT.test(s)) return i === 0 ? s : `.${s}`;
      return `[${JSON.stringify(s)}]`;
    })
    .join('');
}

export const show = (v: unknown): string => JSON.stringify(v) ?? 'undefined';

type Obj = Record<string, unknown>;
const isPlain = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Empty objects and arrays are values of their own: there is no field below them to list. */
const isBranch = (v: unknown): v is Obj | unknown[] => typeof v === 'object' && v !== null && Object.keys(v).length > 0;

/** JSON with sorted keys: two items are equal when these are, whatever their key order. */
function canon(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  if (isPlain(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canon(v[k])}`)
      .join(',')}}`;
  return show(v);
}

function line(path: Segment[], kind: DiffKind, old?: unknown, now?: unknown): DiffLine {
  const l: DiffLine = { path, label: pathLabel(path), kind };
  if (kind !== 'added') l.old = show(old);
  if (kind !== 'removed') l.new = show(now);
  return l;
}

/** Every leaf under `v`, all of one kind (a field that came, went, or stayed). */
function leaves(v: unknown, path: Segment[], kind: 'added' | 'removed' | 'same', out: DiffLine[]): void {
  if (!isBranch(v)) {
    out.push(line(path, kind, v, v));
    return;
  }
  if (Array.isArray(v)) v.forEach((x, i) => leaves(x, [...path, i], kind, out));
  else for (const [k, x] of Object.entries(v)) leaves(x, [...path, k], kind, out);
}

function walk(a: unknown, b: unknown, path: Segment[], out: DiffLine[]): void {
  // An object emptied or filled stays an object: its fields went or came, one line each, as at
  // the top level (not a field removed and an "added {}" beside it). Both empty is one line, below.
  const filled = isBranch(a) || isBranch(b);
  if (isPlain(a) && isPlain(b) && filled) {
    for (const k of Object.keys(a)) {
      if (Object.hasOwn(b, k)) walk(a[k], b[k], [...path, k], out);
      else leaves(a[k], [...path, k], 'removed', out);
    }
    for (const k of Object.keys(b)) if (!Object.hasOwn(a, k)) leaves(b[k], [...path, k], 'added', out);
  } else if (Array.isArray(a) && Array.isArray(b) && filled) {
    arrays(a, b, path, out);
  } else if (!isBranch(a) && !isBranch(b)) {
    const before = show(a);
    const after = show(b);
    out.push({ path, label: pathLabel(path), kind: before === after ? 'same' : 'changed', old: before, new: after });
  } else {
    // An object became a list, a list a number…: what was there went, what is there came.
    leaves(a, path, 'removed', out);
    leaves(b, path, 'added', out);
  }
}

type Step = { op: 'keep' | 'pair'; i: number; j: number } | { op: 'del'; i: number } | { op: 'ins'; j: number };

/** Index pairs of a longest common subsequence of a and b (by key), in order. */
function lcs(a: string[], b: string[]): [number, number][] {
  const n = a.length;
  const m = b.length;
  // len[i * (m + 1) + j]: LCS length of a[i..] and b[j..].
  const len = new Uint32Array((n + 1) * (m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      len[i * (m + 1) + j] =
        a[i] === b[j]
          ? len[(i + 1) * (m + 1) + j + 1] + 1
          : Math.max(len[(i + 1) * (m + 1) + j], len[i * (m + 1) + j + 1]);
    }
  }
  const pairs: [number, number][] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) pairs.push([i++, j++]);
    else if (len[(i + 1) * (m + 1) + j] >= len[i * (m + 1) + j + 1]) i++;
    else j++;
  }
  return pairs;
}

/** The edit script: equal items kept, the rest deleted or inserted. */
function align(a: unknown[], b: unknown[]): Step[] {
  const ka = a.map(canon);
  const kb = b.map(canon);
  let head = 0;
  while (head < ka.length && head < kb.length && ka[head] === kb[head]) head++;
  let tail = 0;
  while (tail < ka.length - head && tail < kb.length - head && ka[ka.length - 1 - tail] === kb[kb.length - 1 - tail])
    tail++;
  const midA = ka.slice(head, ka.length - tail);
  const midB = kb.slice(head, kb.length - tail);
  const steps: Step[] = [];
  for (let x = 0; x < head; x++) steps.push({ op: 'keep', i: x, j: x });
  if (midA.length * midB.length > MAX_ALIGN_CELLS) {
    // Too big to align in a frame: index by index, as a plain positional diff would.
    const common = Math.min(midA.length, midB.length);
    for (let x = 0; x < common; x++) steps.push({ op: 'pair', i: head + x, j: head + x });
    for (let x = common; x < midA.length; x++) steps.push({ op: 'del', i: head + x });
    for (let x = common; x < midB.length; x++) steps.push({ op: 'ins', j: head + x });
  } else {
    let i = 0;
    let j = 0;
    const gap = (toI: number, toJ: number) => {
      // Within a gap, items face each other in order and are compared field by field, so one
      // field changed in a list of objects reads as that field, not as a removal and an addition.
      while (i < toI && j < toJ) steps.push({ op: 'pair', i: head + i++, j: head + j++ });
      while (i < toI) steps.push({ op: 'del', i: head + i++ });
      while (j < toJ) steps.push({ op: 'ins', j: head + j++ });
    };
    for (const [pi, pj] of lcs(midA, midB)) {
      gap(pi, pj);
      steps.push({ op: 'keep', i: head + i++, j: head + j++ });
    }
    gap(midA.length, midB.length);
  }
  for (let x = tail; x > 0; x--) steps.push({ op: 'keep', i: a.length - x, j: b.length - x });
  return steps;
}

function arrays(a: unknown[], b: unknown[], path: Segment[], out: DiffLine[]): void {
  const at = (i: number, j: number): Segment[] => [...path, i === j ? j : { from: i, to: j }];
  for (const s of align(a, b)) {
    // A whole item that came or went is one line, its value as JSON.
    if (s.op === 'del') out.push(line([...path, s.i], 'removed', a[s.i]));
    else if (s.op === 'ins') out.push(line([...path, s.j], 'added', undefined, b[s.j]));
    else if (s.op === 'keep') leaves(b[s.j], at(s.i, s.j), 'same', out);
    else walk(a[s.i], b[s.j], at(s.i, s.j), out);
  }
}

/** A state that is null, absent or an empty object holds no fields (nothing vetted, or all cleared). */
const fields = (v: unknown): unknown => (v === null || (isPlain(v) && Object.keys(v).length === 0) ? undefined : v);

export function diffStates(before: unknown, after: unknown): DiffLine[] {
  const a = fields(before);
  const b = fields(after);
  const out: DiffLine[] = [];
  if (a === undefined && b !== undefined) leaves(b, [], 'added', out);
  else if (b === undefined && a !== undefined) leaves(a, [], 'removed', out);
  else if (a !== undefined) walk(a, b, [], out);
  return out;
}
