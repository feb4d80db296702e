import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { BIN, cliEnv } from '../cli.ts';
import { control, makeImages, sandboxAndFolder } from './helpers.ts';
import { until } from '../wait.ts';
import { dbPaths } from '../../electron/core/paths.ts';

// Counts the engines a command builds; each is still the real one.
const opened = vi.hoisted(() => ({ engines: 0 }));
vi.mock('../../electron/core/engine/open.ts', async (original) => {
  const real = await original<typeof import('../../electron/core/engine/open.ts')>();
  return {
    ...real,
    openEngine: (...args: Parameters<typeof real.openEngine>) => {
      opened.engines++;
      return real.openEngine(...args);
    },
  };
});

const ctx = sandboxAndFolder('cli-one-engine', 100);

const sink = () => {
  let text = '';
  const stream = new Writable({
    write(chunk, _enc, done) {
      text += chunk;
      done();
    },
  });
  return { stream, text: () => text };
};

/** Resolves when `read()` (output so far, or a file) matches `re`. */
const untilSaid = (read: () => string, re: RegExp) =>
  until(() => re.test(read()), { what: String(re), log: read, interval: 100 });

describe('the CLI', () => {
  it('runs `mediadesk run` on the one engine of its core', async () => {
    const { runCli } = await import('../../electron/host/cli/main.ts');
    const home = join(ctx.dir, 'home-one');
    await makeImages(ctx.dir, ['one.png']);
    const out = sink();
    const err = sink();
    const code = await runCli(
      ['run', 'upscaler-precision', join(ctx.dir, 'one.png'), '--out', join(ctx.dir, 'out-one'), '-c', '2'],
      { env: { ...process.env, ...cliEnv(home, ctx.url) }, home, stdout: out.stream, stderr: err.stream },
    );
    expect([code, err.text()]).toEqual([0, expect.stringContaining('progress 1/1: 1 done')]);
    expect(opened.engines).toBe(1);
  }, 60_000);

  it('writes a runner failure of `mediadesk run` to logs/cli.log, and to stderr as before', async () => {
    const home = join(ctx.dir, 'home-locked');
    await makeImages(ctx.dir, ['two.png']);
    // The task stays running while the queue's database is locked under the runner.
    await control(ctx.url, 'faults', { taskDurationMs: 120_000 });
    const child = spawn(
      process.execPath,
      [BIN, 'run', 'upscaler-precision', join(ctx.dir, 'two.png'), '--out', join(ctx.dir, 'out-two')],
      { env: { ...process.env, ...cliEnv(home, ctx.url) }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise((res) => child.once('exit', res));
    try {
      await untilSaid(() => stderr, /1 in flight/);
      const db = new Database(dbPaths(home).jobs);
      db.exec('BEGIN IMMEDIATE');
      const log = join(home, 'logs', 'cli.log');
      try {
        await untilSaid(
          () => (existsSync(log) ? readFileSync(log, 'utf8') : ''),
          /\[error\] +engine: database is locked/,
        );
      } finally {
        db.exec('ROLLBACK');
        db.close();
      }
      await untilSaid(() => stderr, /mediadesk engine: database is locked/);
    } finally {
      child.kill('SIGINT');
      await exited;
      await control(ctx.url, 'faults', { taskDurationMs: 100 });
    }
  }, 90_000);
});
