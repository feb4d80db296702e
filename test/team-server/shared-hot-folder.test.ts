import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dbPaths } from '../../electron/core/paths.ts';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { BIN, cliEnv, endChild, runCli } from '../cli.ts';
import { cleanup, control, makeImages, tmp } from '../engine/helpers.ts';
import { pgMissing, startPg, type TestPg } from '../pg.ts';

/**
 * One hot folder on a "shared drive" watched by three CLI processes, each with its own data folder,
 * all on one team server (a real PostgreSQL) and one Sandbox: each file is sent to the service once.
 */
const missing = pgMissing();
if (missing) console.log(`team server tests skipped: ${missing}`);

const TOOL = 'upscaler-precision';
const CREATE = 'POST /v1/ai/image-upscaler-precision-v2';
const LEASE_MS = 3000;

let pg: TestPg;
let sb: RunningSandbox;
let dir: string;
const running: Watcher[] = [];

interface Watcher {
  name: string;
  home: string;
  out: string;
  env: NodeJS.ProcessEnv;
  child: ChildProcess;
  /** Its stdout and stderr so far. */
  out_: string;
  err: string;
  /** Its name on the team server. */
  machine: string;
}

beforeAll(async () => {
  if (missing) return;
  pg = await startPg();
  sb = await startSandbox({ port: 0, taskDurationMs: 300 });
  dir = tmp('team-hot');
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((w) => endChild(w.child)));
});
afterAll(async () => {
  if (missing) return;
  await sb?.close();
  await pg?.close();
  cleanup(dir);
});

async function until(what: () => boolean | Promise<boolean>, why: () => string, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > end) throw new Error(`timed out waiting: ${why()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const creates = async () => ((await control(sb.url, 'stats')).requests[CREATE] ?? 0) as number;

/** `mediadesk watch` on `drop` from its own data folder, its results in its own folder. */
function watcher(name: string, drop: string, teamDb: string, extra: string[] = []): Watcher {
  const home = join(dir, name, 'home');
  const out = join(dir, name, 'out');
  const env = {
    ...cliEnv(home, sb.url),
    MEDIADESK_TEAM_DB: teamDb,
    MEDIADESK_HOT_CLAIM_LEASE_MS: String(LEASE_MS),
    MEDIADESK_POLL_MIN_MS: '200',
  };
  const args = ['watch', drop, '--tool', TOOL, '--param', 'scale_factor=2', '--out', out, '--settle', '1', ...extra];
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const w: Watcher = { name, home, out, env, child, out_: '', err: '', machine: `${hostname()} ${home}` };
  child.stdout!.on('data', (d) => (w.out_ += d));
  child.stderr!.on('data', (d) => (w.err += d));
  running.push(w);
  return w;
}

/** The files a watcher has seen through: done here, or taken by another machine. */
const accounted = (w: Watcher, names: readonly string[]) =>
  names.filter((n) => new RegExp(`^(done \\S*${n} ->|skipped \\S*${n}: taken by )`, 'm').test(w.out_));

const doneHere = (w: Watcher, names: readonly string[]) =>
  names.filter((n) => new RegExp(`^done \\S*${n} ->`, 'm').test(w.out_));

/** Every result file in the watchers' output folders, by the input it was made from. */
function resultsByInput(ws: readonly Watcher[], names: readonly string[]): Map<string, number> {
  const counts = new Map(names.map((n) => [n, 0]));
  for (const w of ws)
    for (const f of existsSync(w.out) ? readdirSync(w.out) : []) {
      const input = names.find((n) => f.startsWith(n.replace(/\.png$/, '_')));
      if (input) counts.set(input, counts.get(input)! + 1);
    }
  return counts;
}

describe.skipIf(missing)('a shared hot folder watched by three machines', { timeout: 300_000 }, () => {
  it('sends each file to the service once, whichever machine takes it', async () => {
    await control(sb.url, 'reset', { tasks: true });
    const db = await pg.createDb('hot_once');
    const drop = join(dir, 'drop-once');
    mkdirSync(drop);
    const ws = [0, 1, 2].map((i) => watcher(`once${i}`, drop, db));
    await until(
      () => ws.every((w) => /shared with the team/.test(w.out_)),
      () => ws.map((w) => w.out_ + w.err).join('\n'),
    );
    const names = Array.from({ length: 12 }, (_, i) => `shot-${i}.png`);
    await makeImages(drop, names);
    // Each watcher has seen every file through: done by it, or taken by another (asked again until settled).
    await until(
      () => ws.every((w) => accounted(w, names).length === names.length),
      () => ws.map((w) => `${w.name}:\n${w.out_}${w.err}`).join('\n'),
    );
    expect(await creates()).toBe(names.length);
    expect([...resultsByInput(ws, names).values()]).toEqual(names.map(() => 1));
    const doneCounts = ws.map((w) => doneHere(w, names).length);
    expect(doneCounts.reduce((a, b) => a + b, 0)).toBe(names.length);
    // The folder's id on the team server, which each machine read from the folder itself.
    expect(existsSync(join(drop, '.mediadesk-hot-folder'))).toBe(true);
  });

  it('without the team server its files wait, saying why, and are processed once it is back', async () => {
    await control(sb.url, 'reset', { tasks: true });
    const db = await pg.createDb('hot_down');
    const drop = join(dir, 'drop-down');
    mkdirSync(drop);
    const w = watcher('down', drop, db);
    await until(
      () => /shared with the team/.test(w.out_),
      () => w.out_ + w.err,
    );
    await pg.stop();
    const names = ['down-0.png', 'down-1.png'];
    try {
      await makeImages(drop, names);
      await until(
        () => /shared with the team, so its files wait: the team server cannot be reached/.test(w.err),
        () => w.out_ + w.err,
      );
      // Said once the claim was refused for want of the server: nothing was queued, nothing sent.
      expect(w.out_).not.toMatch(/^queued /m);
      expect(await creates()).toBe(0);
    } finally {
      await pg.start();
    }
    await until(
      () => doneHere(w, names).length === names.length,
      () => w.out_ + w.err,
    );
    expect(await creates()).toBe(names.length);
  });

  it('a machine SIGKILLed mid-way: the files it claimed but had not sent are taken over, none is sent twice', async () => {
    await control(sb.url, 'reset', { tasks: true });
    await control(sb.url, 'faults', { taskDurationMs: 1500 });
    const db = await pg.createDb('hot_kill');
    const drop = join(dir, 'drop-kill');
    mkdirSync(drop);
    const names = Array.from({ length: 8 }, (_, i) => `kill-${i}.png`);
    // The victim first, one create at a time: it claims every file, then is killed after its first create.
    const victim = watcher('victim', drop, db, ['--concurrency', '1']);
    await until(
      () => /shared with the team/.test(victim.out_),
      () => victim.out_ + victim.err,
    );
    await makeImages(drop, names);
    await until(
      () => names.every((n) => new RegExp(`^queued \\S*${n}$`, 'm').test(victim.out_)),
      () => victim.out_ + victim.err,
    );
    const others = [1, 2].map((i) => watcher(`other${i}`, drop, db));
    await until(
      async () => (await creates()) >= 1,
      () => victim.err,
    );
    victim.child.kill('SIGKILL');
    await new Promise((r) => victim.child.once('exit', r));
    // Its unsent claims' lease ends; the others take those files over and see the rest as the victim's.
    await until(
      () => others.every((w) => accounted(w, names).length === names.length),
      () => others.map((w) => `${w.name}:\n${w.out_}${w.err}`).join('\n'),
    );
    const byOthers = others.flatMap((w) => doneHere(w, names));
    expect(new Set(byOthers).size).toBe(byOthers.length);
    const victims = names.filter((n) => !byOthers.includes(n));
    for (const n of victims)
      expect(others.some((w) => w.out_.includes(`${n}: taken by ${victim.machine} (a shared hot folder)`))).toBe(true);
    // Taken over: every file the victim claimed was, so all the others did came from it.
    expect(byOthers.length).toBeGreaterThan(0);
    const sent = await creates();
    expect(sent).toBeLessThanOrEqual(names.length);
    expect(sent).toBeGreaterThanOrEqual(byOthers.length);

    // The victim again, on its own data folder: it finishes what it had sent, and sends nothing the others did.
    const again = watcher('victim', drop, db, ['--concurrency', '1']);
    const jobsOf = async () => {
      const list = await runCli(['jobs', 'list', '--json', '--all'], { env: again.env });
      return (JSON.parse(list.out) as { jobs: { state: string; error: string | null }[] }).jobs;
    };
    // Waited for in its data folder's file, not by a CLI process each poll; the CLI lists them once settled.
    const statesOf = () => {
      const db = new Database(dbPaths(again.home).jobs, { readonly: true });
      try {
        return db.prepare('SELECT state FROM jobs').pluck().all() as string[];
      } finally {
        db.close();
      }
    };
    await until(
      () => statesOf().every((s) => ['done', 'canceled', 'needs_attention', 'failed'].includes(s)),
      () => again.out_ + again.err,
    );
    const jobs = await jobsOf();
    const unsure = jobs.filter((j) => j.state === 'needs_attention').length;
    expect(jobs.filter((j) => j.state === 'failed')).toEqual([]);
    // Its queued jobs for files the others took were canceled unsent, saying who took them.
    for (const j of jobs.filter((j) => j.state === 'canceled')) expect(j.error).toMatch(/was taken by .*other/);
    const results = resultsByInput([again, ...others], names);
    const made = [...results.values()].reduce((a, b) => a + b, 0);
    expect([...results.values()].every((n) => n <= 1)).toBe(true);
    // A create in flight at the kill is put to the person (needs attention), never sent again.
    expect(made + unsure).toBe(names.length);
    expect(await creates()).toBeLessThanOrEqual(names.length);
    expect(await creates()).toBeGreaterThanOrEqual(made);
  });
});
