import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_EVENT_DEPTH } from '../../electron/core/audit/event.ts';
import { dbPaths } from '../../electron/core/paths.ts';
import { runCli } from '../cli.ts';
import { deepEventLine, makeEvent, openService, rowOf, tempDir } from './helpers.ts';

// A cache filled before import refused events beyond the limits of one event: the hostile event
// is stored as it came. No API is reached.
const tmp = tempDir('md-audit-cli-hostile-');
const home = join(tmp.dir, 'home');
const env = { MEDIADESK_HOME: home, MEDIADESK_API_URL: 'http://127.0.0.1:9', MEDIADESK_API_KEY: 'unused' };
const audit = (...args: string[]) => runCli(['audit', ...args], { env });

beforeAll(() => {
  const dbPath = dbPaths(home).audit;
  mkdirSync(dirname(dbPath), { recursive: true });
  const service = openService(dbPath);
  try {
    service.store.insertBatch(
      [rowOf(makeEvent(0)), { ...rowOf(makeEvent(1)), raw: deepEventLine(1) }, rowOf(makeEvent(2))],
      'import',
    );
  } finally {
    service.close();
  }
});
afterAll(() => tmp.cleanup());

const NOTE = new RegExp(
  `^mediadesk audit: event evt_1: the event is nested deeper than ${MAX_EVENT_DEPTH} levels; written as a note with its indexed fields only$`,
  'm',
);

describe('mediadesk audit query and export over a hostile event an older cache holds', () => {
  it('query --json writes a note with its indexed fields in its place, says so on stderr, and the other events as they are', async () => {
    const r = await audit('query', '--json', '--asc');
    expect(r.code, r.err).toBe(0);
    const lines = r.out.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines.every((l) => l.length < 2000)).toBe(true);
    const [first, note, last] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(first).toEqual(makeEvent(0));
    expect(last).toEqual(makeEvent(2));
    expect(note).toMatchObject({
      event_id: 'evt_1',
      date: makeEvent(1).date,
      action: { event_type: (makeEvent(1).action as { event_type: string }).event_type },
      member: { user_id: 2 },
    });
    expect(note.withheld).toMatch(
      /^the event is nested deeper than 32 levels: cached before MediaDesk refused such events, it is not written/,
    );
    expect(note).not.toHaveProperty('extra');
    expect(r.err).toMatch(NOTE);
  });

  it('query --csv and export to a file do the same', async () => {
    const csv = await audit('query', '--csv', '--asc');
    expect(csv.code, csv.err).toBe(0);
    expect(csv.out.split('\r\n').filter(Boolean)).toHaveLength(4);
    expect(csv.out).toMatch(/\r\nevt_1,/);
    expect(csv.err).toMatch(NOTE);
    const out = join(tmp.dir, 'out.ndjson');
    const exp = await audit('export', '--out', out, '--asc');
    expect(exp.code, exp.err).toBe(0);
    const lines = readFileSync(out, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => [l.event_id, typeof l.withheld])).toEqual([
      ['evt_0', 'undefined'],
      ['evt_1', 'string'],
      ['evt_2', 'undefined'],
    ]);
  });
});
