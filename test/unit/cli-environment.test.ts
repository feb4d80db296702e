import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, runCli } from '../cli.ts';

// A CI job's environment, as a power user's script meets it: each mistake is one line on stderr,
// exit 2, before anything is queued or opened.
const tmp = mkdtempSync(join(tmpdir(), 'md-cli-env-'));
afterAll(() => {
  chmodSync(join(tmp, 'readonly'), 0o755);
  rmSync(tmp, { recursive: true, force: true });
});
mkdirSync(join(tmp, 'photos'));
writeFileSync(join(tmp, 'photos', 'a.png'), Buffer.from('89504e470d0a1a0a', 'hex'));

const home = (name: string) => join(tmp, name);
const noApi = { MEDIADESK_API_URL: '', MEDIADESK_API_KEY: '' };

describe('MEDIADESK_API_URL and MEDIADESK_API_KEY', () => {
  const cases: [string, NodeJS.ProcessEnv, RegExp][] = [
    [
      'a URL that does not parse',
      { MEDIADESK_API_URL: 'api.example.com', MEDIADESK_API_KEY: 'sandbox-owner' },
      /^mediadesk run: MEDIADESK_API_URL must be an http\(s\) URL such as https:\/\/api\.magnific\.com, got "api\.example\.com"\n$/,
    ],
    [
      'a URL that is not http(s)',
      { MEDIADESK_API_URL: 'ftp://127.0.0.1/', MEDIADESK_API_KEY: 'sandbox-owner' },
      /^mediadesk run: MEDIADESK_API_URL must be an http\(s\) URL/,
    ],
    // An unset CI secret: the run went to the built-in Sandbox without a word.
    [
      'a URL with an empty key',
      { MEDIADESK_API_URL: 'http://127.0.0.1:9', MEDIADESK_API_KEY: '' },
      /^mediadesk run: MEDIADESK_API_URL is set but MEDIADESK_API_KEY is empty: set both to use that server, or neither/,
    ],
    [
      'a key without a URL',
      { MEDIADESK_API_URL: '', MEDIADESK_API_KEY: 'sandbox-owner' },
      /^mediadesk run: MEDIADESK_API_KEY is set but MEDIADESK_API_URL is empty/,
    ],
    [
      'a key read with its line end',
      { MEDIADESK_API_URL: 'http://127.0.0.1:9', MEDIADESK_API_KEY: 'sandbox-owner\r' },
      /^mediadesk run: MEDIADESK_API_KEY holds a space, line end or other control character/,
    ],
  ];
  for (const [what, env, err] of cases) {
    it(`${what}: one line on stderr, exit 2, nothing queued`, async () => {
      const h = home(`api-${cases.findIndex((c) => c[0] === what)}`);
      const r = await runCli(
        ['run', 'upscaler-precision', join(tmp, 'photos'), '--out', join(tmp, 'out'), '--timeout', '20s'],
        { env: { MEDIADESK_HOME: h, ...env } },
      );
      expect([r.code, r.out]).toEqual([2, '']);
      expect(r.err).toMatch(err);
      expect(r.err.split('\n')).toHaveLength(2);
      // Before: the jobs were queued and each put to "needs attention: may have been charged".
      const list = await runCli(['jobs', 'list'], { env: { MEDIADESK_HOME: h, ...noApi } });
      expect([list.code, list.out, list.err]).toEqual([0, '', '0 of 0 jobs\n']);
    });
  }

  it('both empty is the same as both unset', async () => {
    const r = await runCli(['jobs', 'list'], { env: { MEDIADESK_HOME: home('both-empty'), ...noApi } });
    expect([r.code, r.err]).toEqual([0, '0 of 0 jobs\n']);
  });

  it('commands that use neither (sandbox --print-keys) are not held to them', async () => {
    const r = await runCli(['sandbox', '--print-keys'], {
      env: { MEDIADESK_HOME: home('standalone'), MEDIADESK_API_URL: 'nope', MEDIADESK_API_KEY: '' },
    });
    expect([r.code, r.err]).toEqual([0, '']);
  });
});

describe('MEDIADESK_HOME', () => {
  it('naming a file (or a path below one): one line, exit 2', async () => {
    const file = join(tmp, 'a-file');
    writeFileSync(file, 'x');
    for (const [h, what] of [
      [file, 'is a file, not a folder'],
      [join(file, 'sub'), 'cannot be created (ENOTDIR)'],
    ]) {
      for (const args of [['jobs', 'list'], ['audit', 'status'], ['settings', 'get'], ['creations']]) {
        const r = await runCli(args, { env: { MEDIADESK_HOME: h, ...noApi } });
        expect([r.code, r.out, r.err], args.join(' ')).toEqual([
          2,
          '',
          `mediadesk ${args[0]}: the data folder ${h} (MEDIADESK_HOME) ${what}\n`,
        ]);
      }
    }
  });

  it('a folder that does not exist yet is made', async () => {
    const h = join(tmp, 'new', 'deeper');
    const r = await runCli(['audit', 'status'], { env: { MEDIADESK_HOME: h, ...noApi } });
    expect(r.code).toBe(0);
    expect(existsSync(join(h, 'audit.db'))).toBe(true);
  });

  // Root writes anywhere; without CAP_DAC_OVERRIDE (setpriv) it is held to the folder's mode like anyone.
  const asUser = (() => {
    if (process.getuid?.() !== 0) return [];
    if (spawnSync('setpriv', ['--version']).status !== 0) return null;
    return ['setpriv', '--bounding-set=-dac_override,-dac_read_search', '--inh-caps=-dac_override,-dac_read_search'];
  })();
  it.skipIf(asUser === null)(
    'a folder that cannot be written: one line, exit 2 (before: SQLite\'s "unable to open database file", exit 1)',
    () => {
      const h = join(tmp, 'readonly');
      mkdirSync(h);
      chmodSync(h, 0o555);
      const [cmd, ...pre] = asUser!.length ? asUser! : [process.execPath];
      const args = [...pre, ...(asUser!.length ? [process.execPath] : []), BIN, 'jobs', 'list'];
      const r = spawnSync(cmd, args, { env: { ...process.env, MEDIADESK_HOME: h, ...noApi }, encoding: 'utf8' });
      expect([r.status, r.stdout, r.stderr]).toEqual([
        2,
        '',
        `mediadesk jobs: the data folder ${h} (MEDIADESK_HOME) is not writable (EACCES)\n`,
      ]);
    },
  );
});
