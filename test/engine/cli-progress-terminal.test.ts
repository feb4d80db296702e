import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, cliEnv, type CliRun } from '../cli.ts';
import { makeImages, sandboxAndFolder } from './helpers.ts';

/**
 * `mediadesk run`'s progress at a real terminal: the CLI runs under script(1), which gives it a
 * pseudo-terminal for stdin, stdout and stderr, so `isTTY` is true as at a user's terminal.
 */
const SCRIPT = (() => {
  try {
    return /util-linux/.test(execFileSync('script', ['--version'], { encoding: 'utf8' })) ? 'script' : null;
  } catch {
    return null;
  }
})();
if (!SCRIPT)
  console.log(
    'cli-progress-terminal: skipped, script(1) from util-linux is not installed: no pseudo-terminal to run the CLI at',
  );

const at = sandboxAndFolder('cli-progress-tty', 1500);

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** `mediadesk args…` at a pseudo-terminal with `TERM=term`; what the terminal received (stdout and stderr together). */
function atTerminal(args: string[], env: NodeJS.ProcessEnv, term: string): Promise<CliRun> {
  const command = [process.execPath, BIN, ...args].map(quote).join(' ');
  // -e: the CLI's exit code is script's; -f: flushed as written; -c: the command; /dev/null: no typescript file.
  const child = spawn(SCRIPT!, ['-qfec', command, '/dev/null'], {
    env: { ...process.env, ...env, TERM: term, SHELL: '/bin/sh' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return new Promise((res) => child.once('exit', (code) => res({ code, out, err: '' })));
}

const CURSOR = /\u001b\[/;

describe.skipIf(!SCRIPT)('mediadesk run progress at a terminal', () => {
  it('TERM=dumb (a terminal that cannot move its cursor: Emacs shell, some CI consoles) gets plain `progress N/M: …` lines, not a bar redrawn with cursor codes', async () => {
    const input = join(at.dir, 'dumb');
    await makeImages(input, ['a.png', 'b.png']);
    const r = await atTerminal(
      ['run', 'upscaler-precision', input, '--out', join(at.dir, 'out-dumb')],
      cliEnv(join(at.dir, 'home-dumb'), at.url),
      'dumb',
    );
    expect(r.code, r.out).toBe(0);
    expect(r.out).not.toMatch(CURSOR);
    expect(r.out).not.toMatch(/\r(?!\n)/);
    expect(r.out).toMatch(/^progress 0\/2: 0 done, /m);
    expect(r.out).toMatch(/^progress 2\/2: 2 done, 0 in flight\r?\n/m);
    expect(r.out).toMatch(/2 of 2 done; results in /);
  }, 60_000);

  it('another terminal (TERM=xterm-256color) still gets the bar redrawn in place', async () => {
    const input = join(at.dir, 'xterm');
    await makeImages(input, ['a.png', 'b.png']);
    const r = await atTerminal(
      ['run', 'upscaler-precision', input, '--out', join(at.dir, 'out-xterm')],
      cliEnv(join(at.dir, 'home-xterm'), at.url),
      'xterm-256color',
    );
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('\r\u001b[2K[');
    expect(r.out).toMatch(/\] 2\/2 2 done/);
    expect(r.out).not.toMatch(/^progress /m);
  }, 60_000);
});
