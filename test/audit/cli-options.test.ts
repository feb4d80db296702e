import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli.ts';
import { makeEvent, tempDir } from './helpers.ts';

// No API is reached: every command here reads the cache an import filled (a real SQLite file).
const tmp = tempDir('md-audit-cli-');
const env = {
  MEDIADESK_HOME: join(tmp.dir, 'home'),
  MEDIADESK_API_URL: 'http://127.0.0.1:9',
  MEDIADESK_API_KEY: 'unused',
};
const audit = (...args: string[]) => runCli(['audit', ...args], { env });
const N = 12_000;

let file = '';
beforeAll(async () => {
  file = tmp.file('events.ndjson', Array.from({ length: N }, (_, i) => JSON.stringify(makeEvent(i))).join('\n') + '\n');
  const r = await audit('import', file);
  expect(r.code, r.err).toBe(0);
}, 60_000);
afterAll(() => tmp.cleanup());

describe('what mediadesk audit query loads', () => {
  it('reads the cache without the settings library (conf, ajv, semver) or the core: only forwarding needs them', async () => {
    const list = join(tmp.dir, 'modules.txt');
    const hook = pathToFileURL(resolve(import.meta.dirname, '../loaded-modules-hook.ts')).href;
    const r = await runCli(['audit', 'query', '--limit', '3', '--json'], {
      env: { ...env, MEDIADESK_TEST_MODULE_LIST: list, NODE_OPTIONS: `--import=${hook}` },
    });
    expect(r.code, r.err).toBe(0);
    expect(r.out.trim().split('\n')).toHaveLength(3);
    const urls = readFileSync(list, 'utf8').trim().split('\n');
    expect(urls.filter((u) => /\/node_modules\/(conf|ajv|semver)\//.test(u))).toEqual([]);
    expect(urls.filter((u) => /\/electron\/core\/(index|settings)\.ts$/.test(u))).toEqual([]);
  });
});

describe('mediadesk audit --help', () => {
  it('lists the sort options on both the query and the export line, and the filters they share once', async () => {
    for (const sub of ['query', 'export']) {
      const r = await audit(sub, '--help');
      expect([r.code, r.err], sub).toEqual([0, '']);
      const lines = r.out.split('\n');
      for (const cmd of ['query', 'export']) {
        const line = lines.find((l) => l.includes(`mediadesk audit ${cmd} `));
        expect(line, `${sub} --help: the ${cmd} line`).toContain(
          '[query filters] [--sort date|event_type|member] [--asc]',
        );
      }
      // The filters, listed once under their heading (wrapped), and sort is not among them.
      const start = lines.findIndex((l) => l.startsWith('   query filters: '));
      const filters = lines
        .slice(
          start,
          lines.findIndex((l, i) => i > start && !l.startsWith(' '.repeat(18) + '[')),
        )
        .join(' ');
      for (const f of [
        '--from D',
        '--to D',
        '--member ID',
        '--no-user-id]',
        '--no-user-id-email EMAIL',
        '--group ID',
        '--folder REF',
        '--event-type T',
        '--request-id R',
        '--correlation-id C',
        '--search TEXT',
      ]) {
        expect(filters, f).toContain(`[${f}`);
        expect(r.out.split(`[${f}`), f).toHaveLength(2);
      }
      expect(filters).not.toContain('--sort');
      expect(r.out).toContain('\n   --sort: by date unless told; descending (newest first) unless --asc\n');
    }
  });
});

describe('mediadesk audit refuses options it cannot honour', () => {
  it('import --json prints the reports as JSON on stdout, and the progress of the load on stderr', async () => {
    const r = await audit('import', file, '--json');
    expect(r.code, r.err).toBe(0);
    const reports = JSON.parse(r.out) as { path: string; accepted: number; duplicates: number }[];
    expect(reports).toMatchObject([{ path: file, accepted: 0, duplicates: N }]);
    expect(r.err).toMatch(/events\.ndjson: \d+ item\(s\) read, \d+ added, 0 rejected\n/);
  });

  it('refuses a day that does not exist instead of rolling it over', async () => {
    for (const from of ['2026-02-30', '2026-02-30T10:00:00Z', '2026-04-31']) {
      const r = await audit('query', '--from', from);
      expect(r.code, from).toBe(2);
      expect(r.err, from).toMatch(/--from must be a real date/);
      expect(r.out, from).toBe('');
    }
    expect((await audit('query', '--from', '2028-02-29', '--limit', '1')).code).toBe(0);
  });

  it('refuses a reversed range, and takes a range inside one day', async () => {
    const r = await audit('query', '--from', '2026-03-10', '--to', '2026-03-01');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--from is after --to/);
    const sameDay = await audit('query', '--from', '2026-03-01T12:00:00Z', '--to', '2026-03-01', '--json');
    expect(sameDay.code).toBe(0);
    // 10 minutes apart from midnight: 12:00 to the end of the day holds 72 events.
    expect(sameDay.out.trim().split('\n')).toHaveLength(72);
  });

  it("reads a time without a zone as UTC, whatever the machine's zone, and honours a zone when one is given", async () => {
    const dates = (out: string) =>
      out
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { date: string }).date)
        .sort();
    const hour = Array.from({ length: 7 }, (_, k) => new Date(Date.UTC(2026, 2, 1, 12, k * 10)).toISOString());
    for (const TZ of ['America/New_York', 'Asia/Kolkata', 'UTC']) {
      const r = await runCli(['audit', 'query', '--from', '2026-03-01T12:00', '--to', '2026-03-01T13:00', '--json'], {
        env: { ...env, TZ },
      });
      expect(r.code, r.err).toBe(0);
      expect(dates(r.out), TZ).toEqual(hour);
      const exported = await runCli(
        ['audit', 'export', '--out', '-', '--from', '2026-03-01T12:00:00', '--to', '2026-03-01T13:00:00'],
        { env: { ...env, TZ } },
      );
      expect(dates(exported.out), TZ).toEqual(hour);
    }
    const zoned = await audit('query', '--from', '2026-03-01T14:00+02:00', '--to', '2026-03-01T15:00+02:00', '--json');
    expect(dates(zoned.out)).toEqual(hour);
  });

  it('says a value option has no value rather than eating the next option', async () => {
    const r = await audit('query', '--event-type', '--json');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--event-type needs a value/);
    expect((await audit('query', '--event-type=--json', '--json')).code).toBe(0);
  });

  it('refuses options the subcommand does not use', async () => {
    const out = join(tmp.dir, 'out.ndjson');
    for (const [args, message] of [
      [['export', '--out', out, '--limit', '3'], 'audit export does not take --limit'],
      [['query', '--per-page', '5'], 'audit query does not take --per-page'],
      [['status', '--csv'], 'audit status does not take --csv'],
    ] as const) {
      const r = await audit(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err, args.join(' ')).toContain(message);
    }
    const ok = await audit('export', '--out', out, '--event-type', 'project.folder.shared');
    expect(ok.code).toBe(0);
    expect(readFileSync(out, 'utf8').trim().split('\n')).toHaveLength(N / 4);
  });

  it('prints as many rows as --limit asks in text mode, past one page of 1000', async () => {
    const r = await audit('query', '--limit', '2500');
    expect(r.code).toBe(0);
    const lines = r.out.trim().split('\n');
    // Events alone on stdout; the count on stderr, as `jobs list` and `creations` put theirs.
    expect(r.err).toBe(`2500 of ${N} event(s)\n`);
    expect(lines).toHaveLength(2500);
    // Newest first, each event once.
    expect(new Set(lines.map((l) => l.split(/\s+/).at(-1))).size).toBe(2500);
    expect(lines[0]).toContain(`evt_${N - 1}`);
  });
});

describe('mediadesk audit export --out -', () => {
  it('writes to standard output what it writes to a file, in either format, and makes no file named "-"', async () => {
    const cwd = join(tmp.dir, 'cwd');
    mkdirSync(cwd);
    for (const [name, flags] of [
      ['all.ndjson', []],
      ['all.csv', ['--csv']],
    ] as const) {
      const toFile = await audit('export', '--out', join(tmp.dir, name));
      expect(toFile.code, toFile.err).toBe(0);
      const piped = await runCli(['audit', 'export', '--out', '-', ...flags], { env, cwd });
      expect(piped.code, piped.err).toBe(0);
      expect(piped.out).toBe(readFileSync(join(tmp.dir, name), 'utf8'));
      expect(piped.err).toBe(`wrote ${N} event(s) to standard output\n`);
    }
    expect(readdirSync(cwd)).toEqual([]);

    // The round trip a script makes: export to a pipe, import the file it became into another cache.
    const csv = tmp.file(
      'piped.csv',
      (await runCli(['audit', 'export', '--out', '-', '--csv', '--event-type', 'project.folder.shared'], { env, cwd }))
        .out,
    );
    const other = await runCli(['audit', 'import', csv], {
      env: { ...env, MEDIADESK_HOME: join(tmp.dir, 'other-home') },
    });
    expect(other.code, other.err).toBe(0);
    expect(other.out).toContain(`: ${N / 4} item(s), ${N / 4} added, 0 already cached, 0 rejected`);

    const both = await audit('export', '--out', '-', '--csv', '--ndjson');
    expect([both.code, both.out, both.err]).toEqual([2, '', 'mediadesk audit: give --csv or --ndjson, not both\n']);
  });
});

describe('mediadesk audit: files and folders named wrong are bad input, caught before anything is read or written', () => {
  it('import with a missing file or a folder among its files exits 2 and imports none of them', async () => {
    const before = (await audit('status')).out.split('\n')[0];
    // New events first: had the import begun, they would be in the cache.
    const fresh = tmp.file(
      'fresh.ndjson',
      Array.from({ length: 5 }, (_, i) => JSON.stringify(makeEvent(N + i))).join('\n') + '\n',
    );
    for (const [bad, why] of [
      [join(tmp.dir, 'nope.ndjson'), 'no such file'],
      [tmp.dir, 'not a file (a folder?)'],
    ] as const) {
      const r = await audit('import', fresh, bad);
      expect([r.code, r.out, r.err]).toEqual([
        2,
        '',
        `mediadesk audit: ${bad}: ${why}${why.startsWith('not') ? '; give the exported files themselves' : ''}\n`,
      ]);
    }
    expect((await audit('status')).out.split('\n')[0]).toBe(before);
  });

  it('export to a missing folder, or to a .json name it would not honour, says so and writes nothing', async () => {
    const missing = join(tmp.dir, 'no-such-folder', 'x.csv');
    const r = await audit('export', '--out', missing);
    expect([r.code, r.err]).toEqual([
      2,
      `mediadesk audit: --out: the folder ${join(tmp.dir, 'no-such-folder')} does not exist\n`,
    ]);
    const json = join(tmp.dir, 'events.json');
    const j = await audit('export', '--out', json);
    expect([j.code, j.err]).toEqual([
      2,
      `mediadesk audit: audit export writes NDJSON (one event a line) or CSV, not a JSON array: name the file .ndjson or .csv, or add --ndjson to write NDJSON to ${json}\n`,
    ]);
    expect(readdirSync(tmp.dir)).not.toContain('events.json');
    expect((await audit('export', '--out', json, '--ndjson')).code).toBe(0);
  });
});

describe('mediadesk audit: actors without a user id', () => {
  const idless = [
    makeEvent(N + 100, { member: { type: 'api_key', user_id: null, email: 'ci-key@example.test' } }),
    makeEvent(N + 101, { member: { type: 'api_key' } }),
    makeEvent(N + 102, { member: { type: 'system', user_id: null, email: null } }),
  ];
  beforeAll(async () => {
    const r = await audit('import', tmp.file('idless.ndjson', idless.map((e) => JSON.stringify(e)).join('\n') + '\n'));
    expect(r.code, r.err).toBe(0);
  });

  it('--no-user-id picks the events of API-key and system actors, alone or with --member, in query and export', async () => {
    const ids = (out: string) =>
      out
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { event_id: string }).event_id)
        .sort();
    const alone = await audit('query', '--no-user-id', '--json');
    expect(alone.code, alone.err).toBe(0);
    expect(ids(alone.out)).toEqual(idless.map((e) => e.event_id).sort());
    // Member 2 is user_id 1 + (i % 6): a sixth of the N events, plus the three without an id.
    const both = await audit('query', '--member', '2', '--no-user-id', '--json');
    expect(both.out.trim().split('\n')).toHaveLength(N / 6 + 3);
    const exported = await audit('export', '--out', '-', '--no-user-id');
    expect(ids(exported.out)).toEqual(idless.map((e) => e.event_id).sort());
    const refused = await audit('sync', '--no-user-id');
    expect([refused.code, refused.err]).toEqual([2, 'mediadesk audit: audit sync does not take --no-user-id\n']);
  });

  it("--no-user-id-email picks one such actor by its e-mail ('' : the one without), alone or with --member, in query and export", async () => {
    const ids = (out: string) =>
      out
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { event_id: string }).event_id)
        .sort();
    const key = await audit('query', '--no-user-id-email', 'ci-key@example.test', '--json');
    expect(key.code, key.err).toBe(0);
    expect(ids(key.out)).toEqual([`evt_${N + 100}`]);
    const none = await audit('query', '--no-user-id-email', '', '--json');
    expect(ids(none.out)).toEqual([`evt_${N + 101}`, `evt_${N + 102}`]);
    const both = await audit('query', '--member', '2', '--no-user-id-email', 'ci-key@example.test', '--json');
    expect(both.out.trim().split('\n')).toHaveLength(N / 6 + 1);
    const exported = await audit(
      'export',
      '--out',
      '-',
      '--no-user-id-email',
      'ci-key@example.test,nobody@example.test',
    );
    expect(ids(exported.out)).toEqual([`evt_${N + 100}`]);
    const table = await audit('query', '--no-user-id-email', 'ci-key@example.test');
    expect([table.out.includes('ci-key@example.test'), table.err]).toEqual([true, '1 of 1 event(s)\n']);
  });
});

describe('mediadesk audit --correlation-id', () => {
  /** Three events: two of one correlated operation, one of another. */
  const correlated = (i: number, correlationId: string) => {
    const e = makeEvent(N + 200 + i);
    (e.action as Record<string, unknown>).correlation_id = correlationId;
    return e;
  };
  const events = [correlated(0, 'cor-shared'), correlated(1, 'cor-other'), correlated(2, 'cor-shared')];
  beforeAll(async () => {
    const r = await audit(
      'import',
      tmp.file('correlated.ndjson', events.map((e) => JSON.stringify(e)).join('\n') + '\n'),
    );
    expect(r.code, r.err).toBe(0);
  });

  it('picks exactly the events of that correlation id, in query (table and --json) and export', async () => {
    const ids = (out: string) =>
      out
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { event_id: string }).event_id)
        .sort();
    const shared = [`evt_${N + 200}`, `evt_${N + 202}`];
    const json = await audit('query', '--correlation-id', 'cor-shared', '--json');
    expect(json.code, json.err).toBe(0);
    expect(ids(json.out)).toEqual(shared);
    const table = await audit('query', '--correlation-id=cor-shared');
    expect([table.code, table.err]).toEqual([0, '2 of 2 event(s)\n']);
    expect(
      table.out
        .trim()
        .split('\n')
        .map((l) => l.split(/\s+/).at(-1))
        .sort(),
    ).toEqual(shared);
    const exported = await audit(
      'export',
      '--out',
      '-',
      '--correlation-id',
      'cor-shared',
      '--event-type',
      String((events[2].action as { event_type: string }).event_type),
    );
    expect(ids(exported.out)).toEqual([`evt_${N + 202}`]);
    expect(ids((await audit('query', '--correlation-id', 'cor-other', '--json')).out)).toEqual([`evt_${N + 201}`]);
  });

  it('says a missing or empty value is bad input, is refused by sync, and is in the help', async () => {
    for (const [args, message] of [
      [['query', '--correlation-id'], '--correlation-id needs a value'],
      [['query', '--correlation-id', '--json'], '--correlation-id needs a value'],
      [
        ['export', '--out', '-', '--correlation-id', ''],
        '--correlation-id Too small: expected string to have >=1 characters',
      ],
      [['sync', '--correlation-id', 'cor-shared'], 'audit sync does not take --correlation-id'],
    ] as const) {
      const r = await audit(...args);
      expect([r.code, r.out, r.err], args.join(' ')).toEqual([2, '', `mediadesk audit: ${message}\n`]);
    }
    expect((await audit('--help')).out).toContain('[--correlation-id C]');
  });
});
