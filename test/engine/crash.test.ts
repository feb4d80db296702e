import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { openDatabase } from '../../electron/core/db/open.ts';
import { QUEUE_MIGRATIONS } from '../../electron/core/queue/migrations.ts';
import { JobStore } from '../../electron/core/queue/store.ts';
import { cleanup, control, creates, makeImages, tmp } from './helpers.ts';

const BIN = resolve(import.meta.dirname, '../../bin/mediadesk.js');
const JOBS = 300;
const KILLS = 4;

let sandbox: ChildProcess;
let url: string;
let dir: string;

beforeAll(async () => {
  dir = tmp('crash');
  sandbox = spawn(process.execPath, [BIN, 'sandbox', '--port', '0', '--task-duration-ms', '150'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  url = await new Promise<string>((res, rej) => {
    createInterface({ input: sandbox.stdout! }).on('line', (l) => {
      const m = /listening on (http:\/\/\S+)/.exec(l);
      if (m) res(m[1]);
    });
    sandbox.once('exit', (c) => rej(new Error(`sandbox exited ${c}`)));
  });
});
afterAll(() => {
  sandbox?.kill();
  cleanup(dir);
});

function runCli(
  args: string[],
  killAfterMs?: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: {
      ...process.env,
      MEDIADESK_HOME: join(dir, 'home'),
      MEDIADESK_API_URL: url,
      MEDIADESK_API_KEY: 'sandbox-owner',
      MEDIADESK_POLL_MIN_MS: '50',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  if (killAfterMs !== undefined) setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  return new Promise((res) => child.once('exit', (code, signal) => res({ code, signal, out })));
}

describe('crash safety', () => {
  it(`SIGKILLed ${KILLS} times during a ${JOBS}-job batch: every job ends done or needs_attention, no partial or duplicated output, no task created twice`, async () => {
    const input = join(dir, 'in');
    const out = join(dir, 'out');
    await makeImages(
      input,
      Array.from({ length: JOBS }, (_, i) => `d${i % 7}/img${i}.png`),
      16,
    );
    const args = ['run', 'upscaler-precision', input, '--out', out, '--concurrency', '24'];
    let kills = 0;
    for (let k = 0; k < KILLS; k++) {
      // Random points: during start-up, submission, polling and downloading.
      const r = await runCli(args, 300 + Math.floor(Math.random() * 1500));
      if (r.signal === 'SIGKILL') kills++;
      else expect([0, 1]).toContain(r.code);
    }
    expect(kills).toBeGreaterThan(0);
    const last = await runCli(args);
    expect([0, 1]).toContain(last.code);

    const db = openDatabase(join(dir, 'home', 'mediadesk.db'), QUEUE_MIGRATIONS);
    const store = new JobStore(db);
    const jobs = store.list({ limit: 10_000, offset: 0 }).jobs;
    db.close();
    expect(jobs).toHaveLength(JOBS);
    const done = jobs.filter((j) => j.state === 'done');
    expect(jobs.every((j) => j.state === 'done' || j.state === 'needs_attention')).toBe(true);
    expect(last.code).toBe(done.length === JOBS ? 0 : 1);

    const files = readdirSync(out, { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile())
      .map((d) => join(d.parentPath, d.name));
    expect(files.filter((f) => f.endsWith('.part'))).toEqual([]);
    // One output per done job, exactly at its planned name (a duplicate would carry a -2 suffix).
    expect(files.sort()).toEqual(done.flatMap((j) => j.outputs).sort());
    expect(done.every((j) => j.outputs.length === 1 && !/-\d+\.png$/.test(j.outputs[0]))).toBe(true);

    const stats = await control(url, 'stats');
    const taskIds = jobs.map((j) => j.taskId).filter(Boolean);
    expect(new Set(taskIds).size).toBe(taskIds.length);
    // Every create the server saw belongs to a distinct job: done jobs, plus at most the jobs whose
    // submission was cut by a kill (needs_attention, which the user decides about).
    expect(creates(stats)).toBeGreaterThanOrEqual(done.length);
    expect(creates(stats)).toBeLessThanOrEqual(done.length + jobs.filter((j) => j.state === 'needs_attention').length);
  }, 200_000);
});
