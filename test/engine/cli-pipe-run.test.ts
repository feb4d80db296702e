import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, cliEnv, runCli, type CliRun } from '../cli.ts';
import { control, creates, makeImages, sandboxAndFolder } from './helpers.ts';

/** `mediadesk run` in a pipeline whose reader goes away: a child process against the Sandbox over HTTP. */
const at = sandboxAndFolder('cli-pipe-run', 300);

/** Runs the CLI with one of its output pipes closed by the reader before it writes a line. */
function withClosed(stream: 'stdout' | 'stderr', args: string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child[stream].destroy();
  const r = { out: '', err: '' };
  const other = stream === 'stdout' ? 'stderr' : 'stdout';
  child[other].on('data', (d: Buffer) => (r[other === 'stdout' ? 'out' : 'err'] += d.toString()));
  return new Promise((res) => child.once('exit', (code) => res({ code, ...r })));
}

const states = async (env: NodeJS.ProcessEnv) => {
  const list = await runCli(['jobs', 'list', '--json'], { env });
  return (JSON.parse(list.out) as { jobs: { state: string }[] }).jobs.map((j) => j.state).sort();
};

describe('mediadesk run when a reader closes its pipe', () => {
  it('stderr closed (`… 2>&1 | head -1`): the run goes on to its end and its exit code (it crashed at its first progress line, exit 1)', async () => {
    const input = join(at.dir, 'err-closed');
    await makeImages(input, ['a.png', 'b.png', 'c.png']);
    const env = cliEnv(join(at.dir, 'home-err'), at.url);
    const r = await withClosed('stderr', ['run', 'upscaler-precision', input, '--out', join(at.dir, 'out-err')], env);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^batch \w{8}: 3 queued\n3 of 3 done; results in .*out-err\n$/);
    expect(await states(env)).toEqual(['done', 'done', 'done']);
  });

  it('stdout closed (`… | true`): it stops following as after Ctrl-C, exit 130, and the same command resumes with nothing sent twice (it exited 0 at once)', async () => {
    const input = join(at.dir, 'out-closed');
    await makeImages(input, ['a.png', 'b.png', 'c.png', 'd.png']);
    const env = cliEnv(join(at.dir, 'home-out'), at.url);
    const before = creates(await control(at.url, 'stats'));
    const args = ['run', 'upscaler-precision', input, '--out', join(at.dir, 'out-out')];
    const r = await withClosed('stdout', args, env);
    expect(r.code).toBe(130);
    expect(r.err).toContain('stopped; run the same command again to resume (nothing is submitted twice)\n');
    // No create cut off in flight: none is left to be "needs attention: may have been charged".
    expect((await states(env)).filter((s) => s === 'submitting' || s === 'needs_attention')).toEqual([]);
    const again = await runCli(args, { env });
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/4 of 4 done/);
    expect(creates(await control(at.url, 'stats')) - before).toBe(4);
  });
});
