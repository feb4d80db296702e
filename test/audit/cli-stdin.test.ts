import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { interruptWhen, runCli, type CliRun } from '../cli.ts';
import { cachedEvents, makeEvent, tempDir } from './helpers.ts';

// The real CLI in its own process over a real SQLite cache; no API is reached.
const tmp = tempDir('md-audit-stdin-');
afterAll(() => tmp.cleanup());
let homes = 0;
const envOf = (home = join(tmp.dir, `home${++homes}`)) => ({
  MEDIADESK_HOME: home,
  MEDIADESK_API_URL: 'http://127.0.0.1:9',
  MEDIADESK_API_KEY: 'unused',
});

/** `mediadesk args…` with `input` on its standard input; with `interruptOn`, Ctrl-C once stderr matches it. */
const pipeInto = (
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  input: { text: string } | { file: string },
  interruptOn?: RegExp,
): Promise<CliRun> => interruptWhen(args, { env, input, until: interruptOn });

const ndjson = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => JSON.stringify(makeEvent(from + i))).join('\n') + '\n';
const cachedCount = (env: NodeJS.ProcessEnv) => cachedEvents(env.MEDIADESK_HOME!);

describe('mediadesk audit import - (standard input)', () => {
  it('imports NDJSON, a JSON array and CSV piped in, each format told from its first bytes', async () => {
    const env = envOf();
    const nd = await pipeInto(['audit', 'import', '-'], env, { text: ndjson(0, 30) });
    expect([nd.code, nd.out], nd.err).toEqual([
      0,
      'standard input (ndjson): 30 item(s), 30 added, 0 already cached, 0 rejected\n',
    ]);

    const arr = await pipeInto(['audit', 'import', '-', '--json'], env, {
      text: JSON.stringify(
        Array.from({ length: 20 }, (_, i) => makeEvent(30 + i)),
        null,
        2,
      ),
    });
    expect(arr.code, arr.err).toBe(0);
    expect(JSON.parse(arr.out)).toMatchObject([{ path: '-', format: 'json', items: 20, accepted: 20, duplicates: 0 }]);

    // CSV as the CLI exports it, into another cache.
    const csv = (await runCli(['audit', 'export', '--out', '-', '--csv'], { env })).out;
    const other = envOf();
    const c = await pipeInto(['audit', 'import', '-'], other, { text: csv });
    expect([c.code, c.out], c.err).toEqual([
      0,
      'standard input (csv): 50 item(s), 50 added, 0 already cached, 0 rejected\n',
    ]);
    const q = await runCli(['audit', 'query', '--json', '--limit', '100'], { env: other });
    expect(
      q.out
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { event_id: string }).event_id)
        .sort(),
    ).toEqual(Array.from({ length: 50 }, (_, i) => `evt_${i}`).sort());
  });

  it("a rejected line's reason quoting an ESC from the file is printed escaped: it cannot clear the screen", async () => {
    const r = await pipeInto(['audit', 'import', '-', '--format', 'ndjson'], envOf(), {
      text: ndjson(200, 2) + '\u001b[2J\rall fine\n',
    });
    // Exit 1: lines were rejected. A lone CR ends a line (an NDJSON file from an old Mac tool), so
    // the ESC's line and "all fine" are two lines, each rejected on its own.
    expect(r.code, r.err).toBe(1);
    const lines = r.out.trimEnd().split('\n');
    expect(lines).toEqual([
      'standard input (ndjson): 4 item(s), 2 added, 0 already cached, 2 rejected',
      expect.stringMatching(/^ {2}line 3, item 3: not valid JSON .*\\x1b\[2J/),
      expect.stringMatching(/^ {2}line 4, item 4: not valid JSON .*"all fine"/),
    ]);
    expect(r.out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/);
  });

  it('--format ndjson reads a log whose first line is broken as NDJSON (one line rejected), where the bytes alone say JSON', async () => {
    const text = '{"event_id": "broken",\n' + ndjson(100, 10);
    const guessed = await pipeInto(['audit', 'import', '-', '--json'], envOf(), { text });
    expect(JSON.parse(guessed.out)[0]).toMatchObject({ format: 'json', accepted: 0 });

    const told = await pipeInto(['audit', 'import', '-', '--format', 'ndjson', '--json'], envOf(), { text });
    expect(told.code).toBe(1);
    expect(JSON.parse(told.out)[0]).toMatchObject({
      format: 'ndjson',
      items: 11,
      accepted: 10,
      rejected: 1,
      rejects: [{ line: 1 }],
    });

    const bad = await runCli(['audit', 'import', '-', '--format', 'xml'], { env: envOf() });
    expect([bad.code, bad.err]).toEqual([2, 'mediadesk audit: --format is ndjson, json or csv, got "xml"\n']);
  });

  it('says so when nothing is piped in, and refuses - together with files', async () => {
    const empty = await pipeInto(['audit', 'import', '-'], envOf(), { text: '' });
    expect([empty.code, empty.out]).toEqual([
      0,
      'standard input (ndjson): 0 item(s), 0 added, 0 already cached, 0 rejected\n  warning: standard input is empty (no events): nothing to import\n',
    ]);
    const file = tmp.file('three.ndjson', ndjson(200, 3));
    const both = await pipeInto(['audit', 'import', file, '-'], envOf(), { text: ndjson(0, 1) });
    expect([both.code, both.err]).toEqual([
      2,
      'mediadesk audit: - (standard input) is imported alone: give it or files, not both\n',
    ]);
  });
});

describe('mediadesk audit import of an empty input', () => {
  // `echo | …` sends a newline; an export that matched nothing is an empty file. Neither is a CSV
  // without a header (a warning) or with whitespace for one (refused, exit 1), as they were read.
  it('standard input of only a newline or white space, and an empty or blank file, each say it is empty (no events), exit 0, nothing cached', async () => {
    const said = (name: string, format: string, what: string) =>
      `${name} (${format}): 0 item(s), 0 added, 0 already cached, 0 rejected\n  warning: ${what} is empty (no events): nothing to import\n`;
    const env = envOf();
    for (const text of ['\n', '  \r\n\t\n', '\ufeff\n']) {
      const r = await pipeInto(['audit', 'import', '-'], env, { text });
      expect([r.code, r.out, r.err], JSON.stringify(text)).toEqual([
        0,
        said('standard input', 'ndjson', 'standard input'),
        '',
      ]);
    }
    const told = await pipeInto(['audit', 'import', '-', '--format', 'csv'], env, { text: '\n' });
    expect([told.code, told.out]).toEqual([0, said('standard input', 'csv', 'standard input')]);
    for (const [name, text, format] of [
      ['empty.ndjson', '', 'ndjson'],
      ['blank.csv', '\n', 'csv'],
      ['blank', ' \n\n', 'ndjson'],
      ['blank.json', '\n', 'json'],
    ]) {
      const file = tmp.file(name, text);
      const r = await runCli(['audit', 'import', file], { env });
      expect([r.code, r.out, r.err], name).toEqual([0, said(file, format, 'the file'), '']);
    }
    expect(await cachedCount(env)).toBe(0);
  });
});

describe('mediadesk audit query over an untrusted export', () => {
  it('prints each event on one line with control characters escaped, so a file cannot split lines or drive the terminal', async () => {
    const env = envOf();
    const hostile = makeEvent(500, {
      event_id: 'evt_\u001b]0;owned\u0007',
      member: { type: 'user', user_id: 7, email: 'a@b.test\nFAKE 2026-01-01 line' },
    });
    (hostile.action as Record<string, unknown>).event_type = 'team.member.\u001b[2Jrole_changed';
    (hostile.action as Record<string, unknown>).status = 'ok\r';
    const imported = await pipeInto(['audit', 'import', '-'], env, {
      text: JSON.stringify(hostile) + '\n' + ndjson(501, 1),
    });
    expect(imported.code, imported.out + imported.err).toBe(0);
    const q = await runCli(['audit', 'query'], { env });
    expect(q.code, q.err).toBe(0);
    const lines = q.out.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(q.out).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
    const line = lines.find((l) => l.includes('owned'))!;
    expect(line).toContain('team.member.\\x1b[2Jrole_changed');
    expect(line).toContain('a@b.test\\nFAKE 2026-01-01 line');
    expect(line).toContain('ok\\r');
    expect(line.endsWith('evt_\\x1b]0;owned\\x07')).toBe(true);
  });
});

describe('mediadesk audit query and export: line separators and bidi controls', () => {
  /** Lines as a reader that takes U+2028, U+2029 and NEL for line breaks sees them (Python's splitlines, some terminals). */
  const linesOf = (out: string) =>
    out.replace(/\n$/, '').split(/\r\n|[\n\r\u000b\u000c\u001c-\u001e\u0085\u2028\u2029]/);
  const UNSAFE = /[\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;

  it('are printed escaped (\\u2028, \\u202e) in the table, in --json and in the NDJSON export, which parse back to the event; CSV keeps them exact', async () => {
    const env = envOf();
    const hostile = makeEvent(600, {
      event_id: 'evt_\u202Egnp.exe',
      member: { type: 'user', user_id: 7, email: 'a@b.test\u2028FAKE 2026-01-01 line' },
    });
    const action = hostile.action as Record<string, unknown>;
    action.event_type = 'team.member.\u2029role_changed';
    action.status = 'ok\u2066\u200f';
    action.data = { note: 'x\u061cy\u200e', name: 'שלום é 🎬 漢字' };
    const imported = await pipeInto(['audit', 'import', '-'], env, {
      text: JSON.stringify(hostile) + '\n' + ndjson(601, 1),
    });
    expect(imported.code, imported.out + imported.err).toBe(0);

    const q = await runCli(['audit', 'query'], { env });
    expect(q.code, q.err).toBe(0);
    expect(linesOf(q.out)).toHaveLength(2);
    expect(q.out).not.toMatch(UNSAFE);
    const line = linesOf(q.out).find((l) => l.includes('FAKE'))!;
    expect(line).toContain('team.member.\\u2029role_changed');
    expect(line).toContain('a@b.test\\u2028FAKE 2026-01-01 line');
    expect(line).toContain('ok\\u2066\\u200f');
    expect(line.endsWith('evt_\\u202egnp.exe')).toBe(true);

    for (const args of [
      ['audit', 'query', '--json'],
      ['audit', 'export', '--out', '-', '--ndjson'],
    ]) {
      const r = await runCli(args, { env });
      expect(r.code, r.err).toBe(0);
      expect(r.out, args.join(' ')).not.toMatch(UNSAFE);
      const events = linesOf(r.out).map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(events, args.join(' ')).toHaveLength(2);
      expect(events, args.join(' ')).toContainEqual(hostile);
      expect(r.out).toContain('שלום é 🎬 漢字');
    }

    const named = join(tmp.dir, `out\u2028${homes}.ndjson`);
    const wrote = await runCli(['audit', 'export', '--out', named], { env });
    expect([wrote.code, wrote.out]).toEqual([0, `wrote 2 event(s) to ${join(tmp.dir, `out\\u2028${homes}.ndjson`)}\n`]);
    expect(readFileSync(named, 'utf8')).toBe((await runCli(['audit', 'export', '--out', '-'], { env })).out);

    // CSV is a file format: its cells hold the data exactly as it is (no escape syntax exists there).
    const csv = await runCli(['audit', 'query', '--csv'], { env });
    expect(csv.out).toContain('a@b.test\u2028FAKE 2026-01-01 line');
    expect(csv.out).toContain('evt_\u202Egnp.exe');
  });

  it('an event of a pretty-printed JSON array is one NDJSON line in --json and in the export (to standard output and to a file)', async () => {
    const env = envOf();
    const events = [makeEvent(700), makeEvent(701, { category: 'a\u2028b' })];
    const imported = await pipeInto(['audit', 'import', '-'], env, { text: JSON.stringify(events, null, 2) });
    expect(imported.code, imported.out + imported.err).toBe(0);
    const file = join(tmp.dir, `pretty-${homes}.ndjson`);
    const exported = await runCli(['audit', 'export', '--out', file], { env });
    expect(exported.code, exported.err).toBe(0);
    for (const out of [
      (await runCli(['audit', 'query', '--json'], { env })).out,
      (await runCli(['audit', 'export', '--out', '-'], { env })).out,
      readFileSync(file, 'utf8'),
    ]) {
      const lines = linesOf(out);
      expect(lines).toHaveLength(2);
      expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([...events].reverse());
    }
  });
});

describe('Ctrl-C during mediadesk audit import', () => {
  // Large enough that the import is far from done when the first batch's progress line shows.
  const N = 60_000;
  const big = tmp.file('big.ndjson', ndjson(0, N));
  const stopped =
    /interrupted: (\d+) event\(s\) imported so far are kept; run the same command again to continue \(events already cached are skipped\)\n$/;

  for (const [how, args, input] of [
    ['a file', ['audit', 'import', big], { text: '' }],
    ['standard input', ['audit', 'import', '-'], { file: big }],
  ] as const) {
    it(`of ${how} stops after the batch in hand, says what is kept, exits 130; the same command again imports the rest`, async () => {
      const env = envOf();
      const r = await pipeInto(args, env, input, /item\(s\) read/);
      expect(r.code, r.err).toBe(130);
      const kept = Number(stopped.exec(r.err)?.[1]);
      expect(kept, r.err).toBeGreaterThan(0);
      expect(kept).toBeLessThan(N);
      expect(await cachedCount(env)).toBe(kept);

      const again = await pipeInto([...args, '--json'], env, input);
      expect(again.code, again.err).toBe(0);
      expect(JSON.parse(again.out)[0]).toMatchObject({ items: N, accepted: N - kept, duplicates: kept, rejected: 0 });
      expect(await cachedCount(env)).toBe(N);
    }, 120_000);
  }
});
