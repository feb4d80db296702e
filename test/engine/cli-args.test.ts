import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../cli.ts';
import { control, creates, makeImages, sandboxAndFolder } from './helpers.ts';

/** What a script types, as a child process against the Sandbox over HTTP: options parsed as getopt users expect. */
const at = sandboxAndFolder('cli-args', 50);

const cli = (args: string[]) => runCli(args, { env: cliEnv(join(at.dir, 'home'), at.url), cwd: at.dir });

describe('mediadesk run: an option given twice is refused, not the last one taken', () => {
  it('--out, -o, --timeout, --concurrency, and one --param key twice: exit 2, one line, nothing created or sent', async () => {
    const input = join(at.dir, 'twice');
    await makeImages(input, ['a.png']);
    const cases: [string[], string][] = [
      [['--out', 'a', '--out', 'b'], '--out is given more than once'],
      [['-o', 'a', '--out=b'], '--out is given more than once'],
      [['--timeout', '5m', '--timeout', '10m'], '--timeout is given more than once'],
      [['-c', '2', '--concurrency', '3'], '--concurrency is given more than once'],
      [['--param', 'scale_factor=2', '-p', 'scale_factor=4'], '--param scale_factor is given more than once'],
      [['-x'], 'unknown option -x'],
    ];
    for (const [opts, msg] of cases) {
      const r = await cli(['run', 'upscaler-precision', input, ...opts]);
      expect([r.code, r.out, r.err], opts.join(' ')).toEqual([2, '', `mediadesk run: ${msg}\n`]);
    }
    // `--out a --out b` made the folder b and wrote there.
    expect(readdirSync(at.dir).filter((n) => n === 'a' || n === 'b')).toEqual([]);
    expect(creates(await control(at.url, 'stats'))).toBe(0);
  });
});

describe('`--` ends the options', () => {
  it('run -- FILE runs a file whose name starts with a dash (it was "unknown option --")', async () => {
    const input = join(at.dir, 'dash');
    await makeImages(input, ['-x.png']);
    const r = await cli(['run', 'upscaler-precision', '--out', join(at.dir, 'dash-out'), '--', join(input, '-x.png')]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/1 of 1 done/);
    expect(readdirSync(join(at.dir, 'dash-out'))).toEqual(['-x_upscaler-precision.png']);
  });

  it('jobs list --, audit import -- FILE; -h after -- is not help', async () => {
    const list = await cli(['jobs', 'list', '--']);
    expect(list.code).toBe(0);
    const imp = await cli(['audit', 'import', '--', '-h']);
    expect([imp.code, imp.out, imp.err]).toEqual([2, '', 'mediadesk audit: -h: no such file\n']);
  });
});

describe('apps run --input', () => {
  it('one input id given twice is refused (the last one won)', async () => {
    const r = await cli(['apps', 'run', 'jM4nX8sc', '-i', 'brief=a', '--input', 'brief=b', '--yes']);
    expect([r.code, r.out, r.err]).toEqual([2, '', 'mediadesk apps: --input brief is given more than once\n']);
  });
});

describe('an unknown command', () => {
  it('suggests the command a typo is closest to', async () => {
    const r = await cli(['rnu', 'upscaler-precision']);
    expect([r.code, r.out]).toEqual([2, '']);
    expect(r.err).toMatch(/^mediadesk: unknown command "rnu" \(did you mean run\? try: run, tools, watch, jobs, /);
  });
});
