// `mediadesk sandbox` options as a script gives them: a real process, exit codes, one line on stderr.
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { webhookSecret } from '../../electron/sandbox/webhooks.ts';
import { BIN, interruptWhen, runCli } from '../cli.ts';

const home = mkdtempSync(join(tmpdir(), 'cli-sandbox-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const cli = (args: string[]) => runCli(['sandbox', ...args], { env: { MEDIADESK_HOME: home } });

describe('mediadesk sandbox options', () => {
  it('an option given twice is refused (exit 2), not one of its values silently taken', async () => {
    const cases = [
      ['--print-keys', '--seed', '5', '--seed', '6'],
      ['--print-keys', '--port', '0', '--port', '1'],
      ['--print-keys', '--task-duration-ms', '10', '--task-duration-ms', '20'],
    ];
    for (const args of cases) {
      const r = await cli(args);
      expect([r.code, r.out, r.err], args.join(' ')).toEqual([
        2,
        '',
        `mediadesk sandbox: ${args[1]} is given more than once\n`,
      ]);
    }
  });

  it('--name=value works as in the other commands', async () => {
    const r = await cli(['--print-keys', '--seed=7']);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.out.trim().split('\n').at(-1)).toBe(`webhook signing secret (seed 7): ${webhookSecret(7)}`);
  });

  it('a bad --port or --task-duration-ms is refused with --print-keys too', async () => {
    for (const args of [
      ['--print-keys', '--port', '99999'],
      ['--print-keys', '--task-duration-ms', 'soon'],
    ]) {
      const r = await cli(args);
      expect([r.code, r.out], args.join(' ')).toEqual([2, '']);
      expect(r.err).toBe(
        `mediadesk sandbox: ${args[1]} expects an integer from 0 to ${args[1] === '--port' ? 65535 : 3600000}, got "${args[2]}"\n`,
      );
    }
  });
});

describe('mediadesk sandbox --limits', () => {
  it('anything but service or off is refused (exit 2)', async () => {
    const r = await cli(['--print-keys', '--limits', 'sometimes']);
    expect([r.code, r.out, r.err]).toEqual([
      2,
      '',
      'mediadesk sandbox: --limits expects "service" or "off", got "sometimes"\n',
    ]);
  });

  it('--limits service starts the Sandbox with the service limits on', async () => {
    const child = spawn(process.execPath, [BIN, 'sandbox', '--limits', 'service'], {
      env: { ...process.env, MEDIADESK_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise((res) => child.once('exit', res));
    let out = '';
    const url = await new Promise<string>((res) =>
      child.stdout.on('data', (d) => {
        out += d;
        const m = /^listening on (\S+)$/m.exec(out);
        if (m) res(m[1]);
      }),
    );
    const limits = await (await fetch(`${url}/__sandbox/limits`)).json();
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(limits.mode).toBe('service');
  });
});

describe('mediadesk sandbox running', () => {
  it('Ctrl-C closes the server (its port refuses, its temporary files are gone) and exits 130, as the other commands do (it exited 0)', async () => {
    const tmp = join(home, 'tmp');
    mkdirSync(tmp);
    const r = await interruptWhen(['sandbox'], {
      env: { MEDIADESK_HOME: home, TMPDIR: tmp },
      until: /^listening on /,
      watch: 'stdout',
    });
    expect([r.code, r.err]).toEqual([130, '']);
    const url = /^listening on (http:\/\/127\.0\.0\.1:\d+)$/m.exec(r.out)![1];
    await expect(fetch(`${url}/__sandbox/keys`)).rejects.toThrow();
    expect(readdirSync(tmp)).toEqual([]);
  });
});
