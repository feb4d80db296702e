import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import sharp from 'sharp';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { cliEnv, runCli } from '../cli.ts';

let sb: RunningSandbox;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, taskDurationMs: 300 });
});
afterAll(() => sb.close());

it('a queue whose holder was SIGKILLed is taken at once, and the run never says another process runs it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'md-dead-holder-'));
  const home = join(dir, 'home');
  const shoot = join(dir, 'shoot');
  mkdirSync(shoot);
  writeFileSync(
    join(shoot, 'a.png'),
    await sharp({ create: { width: 32, height: 32, channels: 3, background: '#663399' } })
      .png()
      .toBuffer(),
  );
  const env = cliEnv(home, sb.url);
  expect((await runCli(['jobs', 'list'], { env })).code).toBe(0);
  // The lease a killed run left: its process gone, its heartbeat fresh.
  const gone = spawnSync(process.execPath, ['-e', '']).pid!;
  const db = new Database(join(home, 'mediadesk.db'));
  db.prepare(
    'INSERT INTO queue_lease (id, owner, pid, host, heartbeat) VALUES (1, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET owner = excluded.owner, pid = excluded.pid, host = excluded.host, heartbeat = excluded.heartbeat',
  ).run('killed-run', gone, hostname(), Date.now());
  db.close();
  const run = await runCli(['run', 'upscaler-precision', shoot, '--out', join(dir, 'out')], { env });
  expect(run.code, run.err).toBe(0);
  expect(run.err).not.toContain('another MediaDesk process');
  expect(run.err).toMatch(/progress 1\/1/);
});
