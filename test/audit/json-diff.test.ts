import { describe, expect, it } from 'vitest';
import {
  diffStates,
  MAX_ALIGN_CELLS,
  pathLabel,
  type DiffLine,
} from '../../renderer/src/components/audit/json-diff.ts';

/** The lines that say something changed, as `kind label old→new` for readable failures. */
const changes = (lines: DiffLine[]) =>
  lines.filter((l) => l.kind !== 'same').map((l) => `${l.kind} ${l.label} ${l.old ?? ''}→${l.new ?? ''}`);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('state diff: paths', () => {
  it('keeps a dotted key and a nested path apart: two changes, two lines', () => {
    const lines = diffStates({ 'a.b': 1, a: { b: 1 } }, { 'a.b': 2, a: { b: 3 } });
    expect(lines.map((l) => l.label)).toEqual(['["a.b"]', 'a.b']);
    expect(lines.map((l) => l.path)).toEqual([['a.b'], ['a', 'b']]);
    expect(changes(lines)).toEqual(['changed ["a.b"] 1→2', 'changed a.b 1→3']);
  });

  it('labels keys that are not identifiers so no two paths read alike', () => {
    expect(pathLabel(['0'])).toBe('["0"]');
    expect(pathLabel(['list', 0])).toBe('list[0]');
    expect(pathLabel(['(value)'])).toBe('["(value)"]');
    expect(pathLabel([])).toBe('(value)');
    expect(pathLabel(['a', 'say "hi"', 'b-c'])).toBe('a["say \\"hi\\""]["b-c"]');
    const lines = diffStates({ list: { 0: 'x' } }, { list: ['x'] });
    expect(changes(lines)).toEqual(['removed list["0"] "x"→', 'added list[0] →"x"']);
  });
});

describe('state diff: arrays', () => {
  it('shows an item taken from the middle as one removal, the later items unchanged', () => {
    const lines = diffStates({ tags: ['a', 'b', 'c', 'd'] }, { tags: ['a', 'c', 'd'] });
    expect(changes(lines)).toEqual(['removed tags[1] "b"→']);
    expect(lines.filter((l) => l.kind === 'same').map((l) => l.label)).toEqual(['tags[0]', 'tags[2→1]', 'tags[3→2]']);
  });

  it('shows an object removed from a list of objects as one line with its value', () => {
    const members = [
      { id: 1, role: 'admin' },
      { id: 2, role: 'viewer' },
      { id: 3, role: 'member' },
    ];
    const lines = diffStates({ members }, { members: [members[0], { role: 'member', id: 3 }] });
    expect(changes(lines)).toEqual(['removed members[1] {"id":2,"role":"viewer"}→']);
  });

  it('shows an item inserted in the middle as one addition', () => {
    expect(changes(diffStates({ v: [1, 2, 3] }, { v: [1, 9, 2, 3] }))).toEqual(['added v[1] →9']);
  });

  it('still compares facing items field by field when one of them changed', () => {
    const before = {
      members: [
        { id: 1, role: 'admin' },
        { id: 2, role: 'viewer' },
      ],
    };
    const after = {
      members: [
        { id: 1, role: 'admin' },
        { id: 2, role: 'owner' },
      ],
    };
    expect(changes(diffStates(before, after))).toEqual(['changed members[1].role "viewer"→"owner"']);
  });

  it('aligns arrays up to the bound and compares index by index beyond it', () => {
    // Shifted by one: aligned, it is one removal at the start and one addition at the end.
    const small = 400;
    expect(small * small).toBeLessThanOrEqual(MAX_ALIGN_CELLS);
    expect(changes(diffStates({ v: range(0, small) }, { v: range(1, small + 1) }))).toEqual([
      'removed v[0] 0→',
      `added v[${small - 1}] →${small}`,
    ]);
    const big = 600;
    expect(big * big).toBeGreaterThan(MAX_ALIGN_CELLS);
    const lines = diffStates({ v: range(0, big) }, { v: range(1, big + 1) });
    expect(lines).toHaveLength(big);
    expect(lines.every((l) => l.kind === 'changed')).toBe(true);
  });
});

describe('state diff: whole states', () => {
  it('lists the fields of an empty or missing side as added or removed, with no "(value)" line', () => {
    expect(changes(diffStates({ role: 'member', seats: 3 }, {}))).toEqual([
      'removed role "member"→',
      'removed seats 3→',
    ]);
    expect(changes(diffStates(null, { role: 'admin' }))).toEqual(['added role →"admin"']);
    expect(diffStates(null, undefined)).toEqual([]);
    expect(diffStates({}, {})).toEqual([]);
  });

  it('shows a nested object or list emptied or filled as its fields that went or came, one line each, as at the top level', () => {
    expect(changes(diffStates({ limits: { x: 1 }, role: 'a' }, { limits: {}, role: 'a' }))).toEqual([
      'removed limits.x 1→',
    ]);
    expect(changes(diffStates({ limits: { x: 1, y: { z: 2 } } }, { limits: {} }))).toEqual([
      'removed limits.x 1→',
      'removed limits.y.z 2→',
    ]);
    expect(changes(diffStates({ limits: {} }, { limits: { x: 1 } }))).toEqual(['added limits.x →1']);
    expect(changes(diffStates({ tags: ['a'] }, { tags: [] }))).toEqual(['removed tags[0] "a"→']);
    expect(changes(diffStates({ members: [{ id: 1 }] }, { members: [{}] }))).toEqual(['removed members[0].id 1→']);
    // An empty object that itself came or went is still a change of its own; one that stayed empty is not.
    expect(changes(diffStates({ limits: {}, role: 'a' }, { role: 'a' }))).toEqual(['removed limits {}→']);
    expect(diffStates({ limits: {} }, { limits: {} })).toEqual([
      { path: ['limits'], label: 'limits', kind: 'same', old: '{}', new: '{}' },
    ]);
  });

  it('shows a scalar state as "(value)" and a type change as what went and what came', () => {
    expect(changes(diffStates(1, 2))).toEqual(['changed (value) 1→2']);
    expect(changes(diffStates({ a: { x: 1 } }, { a: 5 }))).toEqual(['removed a.x 1→', 'added a →5']);
    expect(diffStates({ a: { x: 1 } }, { a: { x: 1 } })).toEqual([
      { path: ['a', 'x'], label: 'a.x', kind: 'same', old: '1', new: '1' },
    ]);
  });
});
