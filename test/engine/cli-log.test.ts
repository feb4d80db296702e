import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../cli.ts';
import { control, makeImages, sandboxAndFolder } from './helpers.ts';

const ctx = sandboxAndFolder('cli-log', 100);

/** Whether a package.json lies in `dir` or any folder above it (what electron-log used to name the app by). */
function packageAbove(dir: string): boolean {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, 'package.json'))) return true;
    if (dirname(d) === d) return false;
  }
}

describe('the log', () => {
  it('is written when the CLI runs from a photo folder with no package.json above it, with the runners and commands that failed', async () => {
    const photos = join(ctx.dir, 'photos');
    mkdirSync(photos, { recursive: true });
    await makeImages(photos, ['a.png']);
    expect(packageAbove(photos)).toBe(false);
    const home = join(ctx.dir, 'home');
    const env = cliEnv(home, ctx.url);
    await control(ctx.url, 'faults', { failureRate: 1 });
    try {
      const run = await runCli(['run', 'upscaler-precision', 'a.png', '--out', join(ctx.dir, 'out')], {
        env,
        cwd: photos,
      });
      expect(run.code).toBe(1);
    } finally {
      await control(ctx.url, 'faults', { failureRate: 0 });
    }
    const report = await runCli(['report', 'no-such-batch'], { env, cwd: photos });
    expect(report.code).not.toBe(0);
    const log = readFileSync(join(home, 'logs', 'cli.log'), 'utf8');
    expect(log).toMatch(/\[info\] +cli: mediadesk run/);
    // The runner's failure, with the server's reason.
    expect(log).toMatch(/\[warn\] +job \S+ \(upscaler-precision\) failed: The task failed on the server/);
    // The command's refusal, as stderr said it.
    expect(log).toMatch(/\[warn\] +"batches.report" failed: .*no batch no-such-batch/);
  }, 60_000);
});
