import { spawn } from 'node:child_process';
import { readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore } from '../../electron/core/index.ts';
import { openDatabase } from '../../electron/core/db/open.ts';
import { RUN_SANDBOX_GONE, SANDBOX_GONE } from '../../electron/core/queue/job-messages.ts';
import { QUEUE_MIGRATIONS } from '../../electron/core/queue/migrations.ts';
import { JobStore } from '../../electron/core/queue/store.ts';
import { MemorySecretStore } from '../../electron/core/secrets.ts';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { DeskError, type CommandName, type Req, type Res } from '../../shared/contract/index.ts';
import type { JobRecord } from '../../shared/contract/jobs.ts';
import type { AppRun } from '../../shared/contract/team.ts';
import { cliEnv, interruptWhen, runCli } from '../cli.ts';
import { desk, startHost } from '../e2e/host.ts';
import { cleanup, control, creates, makeImages, tmp } from './helpers.ts';

/**
 * The built-in Sandbox lives in the app or command that started it. Once that process has ended
 * (Ctrl-C on `mediadesk run`, a host killed), its jobs are not running, whoever looks at the queue
 * and whether or not a process holds it: they are queued, to be sent again to a Sandbox. A task on
 * the live service stays running: it really may be.
 */
let dir: string;
let live: RunningSandbox;
beforeAll(async () => {
  dir = tmp('sandbox-gone');
  // Stands in for the live service: a server that outlives every process of the test.
  live = await startSandbox({ port: 0, taskDurationMs: 60_000 });
});
afterAll(async () => {
  await live.close();
  cleanup(dir);
});

/** The CLI with no API key in its environment: it starts its own built-in Sandbox. */
/**
 * A new file at queue schema `version` (its first migrations), holding the batches, jobs and app
 * runs of `from` in the columns that version had: a data folder as that build left it.
 */
function atQueueVersion(path: string, version: number, from: string) {
  const db = openDatabase(path, QUEUE_MIGRATIONS.slice(0, version));
  db.prepare('ATTACH ? AS src').run(from);
  for (const table of ['batches', 'jobs', 'app_runs']) {
    const cols = (db.pragma(`main.table_info(${table})`) as { name: string }[]).map((c) => c.name).join(', ');
    db.exec(`INSERT INTO main.${table} (${cols}) SELECT ${cols} FROM src.${table}`);
  }
  db.exec('DETACH src');
  return db;
}

const sandboxEnv = (home: string): NodeJS.ProcessEnv => ({
  MEDIADESK_HOME: home,
  MEDIADESK_API_URL: undefined,
  MEDIADESK_API_KEY: undefined,
});
const listed = async (env: NodeJS.ProcessEnv, ...args: string[]) => {
  const r = await runCli(['jobs', 'list', '--json', ...args], { env });
  expect(r.code, r.err).toBe(0);
  return (JSON.parse(r.out) as { jobs: JobRecord[] }).jobs;
};
const stateOf = (jobs: JobRecord[]) => Object.fromEntries(jobs.map((j) => [j.input, [j.state, j.error]]));

describe('jobs whose built-in Sandbox has ended', () => {
  it('`mediadesk run` stopped with Ctrl-C: `jobs list` shows its jobs queued to be sent again (none running); the same run then finishes them', async () => {
    const home = join(dir, 'home-cli');
    const input = join(dir, 'in-cli');
    const out = join(dir, 'out-cli');
    await makeImages(input, ['a.png', 'b.png']);
    const env = sandboxEnv(home);
    const stopped = await interruptWhen(['run', 'upscaler-precision', input, '--out', out], {
      env,
      until: /2 in flight/,
    });
    expect(stopped.code, stopped.err).toBe(130);

    const jobs = await listed(env);
    expect(stateOf(jobs)).toEqual({
      [join(input, 'a.png')]: ['queued', SANDBOX_GONE],
      [join(input, 'b.png')]: ['queued', SANDBOX_GONE],
    });
    expect(jobs.map((j) => j.taskId)).toEqual([null, null]);
    expect(await listed(env, '--state', 'running')).toEqual([]);

    const again = await runCli(['run', 'upscaler-precision', input, '--out', out], { env });
    expect([again.code, again.out], again.err).toEqual([
      0,
      `batch ${jobs[0].batchId.slice(0, 8)}: 0 queued, 2 resumed from an earlier run\n2 of 2 done; results in ${out}\n`,
    ]);
    expect(readdirSync(out).sort()).toEqual(['a_upscaler-precision.png', 'b_upscaler-precision.png']);
    expect((await listed(env)).map((j) => [j.state, j.error])).toEqual([
      ['done', null],
      ['done', null],
    ]);
  });

  it('`mediadesk apps run` stopped with Ctrl-C on the built-in Sandbox says the run ends with it; `apps runs` shows it queued to be sent again (not running); the same command then finishes it', async () => {
    const home = join(dir, 'home-app');
    const out = join(dir, 'out-app');
    const env = sandboxEnv(home);
    const args = ['apps', 'run', 'jM4nX8sc', '--input', 'brief=a jingle', '--out', out, '--yes'];
    const stopped = await interruptWhen(args, { env, until: /^running/m });
    expect(stopped.code, stopped.err).toBe(130);
    const id = /^run (\w{8}) queued$/m.exec(stopped.out)![1];
    expect(stopped.err.trim().split('\n').at(-1)).toBe(
      `stopped following run ${id} (running); the built-in Sandbox running it stops with this command, so it is queued again, to be sent again to the Sandbox by itself (free) when the queue next runs there. Run the same command again to finish it: it follows this run and sends it again, free. \`mediadesk apps runs\` lists runs.`,
    );

    const runs = async () => {
      const r = await runCli(['apps', 'runs', '--json'], { env });
      expect(r.code, r.err).toBe(0);
      return JSON.parse(r.out) as AppRun[];
    };
    expect((await runs()).map((r) => [r.id.slice(0, 8), r.state, r.runId, r.error])).toEqual([
      [id, 'queued', null, RUN_SANDBOX_GONE],
    ]);

    const again = await runCli(args, { env });
    expect([again.code, again.out.split('\n')[0]], again.err).toEqual([
      0,
      `run ${id} resumed (queued): following the earlier run; its built-in Sandbox had ended, so it is sent to the Sandbox again, free (--new starts another)`,
    ]);
    expect(readdirSync(out)).toHaveLength(1);
    expect((await runs()).map((r) => [r.id.slice(0, 8), r.state, r.error])).toEqual([[id, 'done', null]]);
  });

  it("a web host killed mid-batch: the next look at the queue, by a host that does not hold it and by `mediadesk jobs list`, says queued; the live service's task stays running", async () => {
    const home = join(dir, 'home-web');
    // As a browser's drop arrives: a page names only inputs the person gave (PathPolicy).
    const shoot = join(home, 'inbox', 'drop-gone', 'shoot');
    await makeImages(shoot, ['c.png', 'd.png']);
    const paid = join(dir, 'paid');
    await makeImages(paid, ['e.png']);
    // A job on the live service, left running there by a script stopped with Ctrl-C.
    const liveRun = await interruptWhen(['run', 'upscaler-precision', paid, '--out', join(dir, 'out-live')], {
      env: cliEnv(home, live.url),
      until: /1 in flight/,
    });
    expect(liveRun.code, liveRun.err).toBe(130);
    const livePaid = creates(await control(live.url, 'stats'));

    const host = await startHost(home, { MEDIADESK_API_URL: undefined, MEDIADESK_API_KEY: undefined }, 0, [], {
      ownProcess: true,
    });
    try {
      // Its tasks must outlast a CLI's start below (seconds on a busy machine), not the default 3 s:
      // the host's built-in Sandbox, started by a first request, is told so through its control API.
      await desk(host, 'loras.list', {});
      const hostSandbox = (await desk<{ backend: { baseUrl: string } }>(host, 'app.info', {})).backend.baseUrl;
      await control(hostSandbox, 'faults', { taskDurationMs: 60_000 });
      await desk(host, 'batches.start', {
        tool: 'upscaler-precision',
        inputs: [shoot],
        outDir: join(home, 'results', 'out-web'),
        params: {},
      });
      const inShoot = (jobs: JobRecord[]) => jobs.filter((j) => j.input?.startsWith(shoot));
      await expect
        .poll(
          async () =>
            inShoot((await desk<{ jobs: JobRecord[] }>(host, 'jobs.list', { limit: 10, offset: 0 })).jobs).map(
              (j) => j.state,
            ),
          { timeout: 20_000, interval: 50 },
        )
        .toEqual(['running', 'running']);
      // While the host lives, its Sandbox and tasks do: another process looking sees them running.
      expect(inShoot(await listed(cliEnv(home, live.url))).map((j) => j.state)).toEqual(['running', 'running']);
    } finally {
      await host.stop('SIGKILL');
    }

    // The queue as the Queue screen reads it, from a process that does not hold it, before anyone has taken it.
    const dead = openDatabase(join(home, 'mediadesk.db'), QUEUE_MIGRATIONS);
    const lease = new JobStore(dead).lease();
    dead.close();
    expect(lease?.pid).toBe(host.child.pid);
    const looker = await createCore({
      home,
      host: 'web',
      env: {},
      secrets: new MemorySecretStore(),
      runQueue: false,
      startSandbox: () => startSandbox({ port: 0 }),
    });
    try {
      const call = async <K extends CommandName>(name: K, req: Req<K>): Promise<Res<K>> => {
        const reply = await looker.dispatch(name, req);
        if (!reply.ok) throw DeskError.from(reply.error);
        return reply.result as Res<K>;
      };
      const status = await call('jobs.status', {});
      expect([status.running, status.counts.running, status.counts.queued]).toEqual([false, 1, 2]);
      const batches = await call('batches.list', { limit: 10, offset: 0 });
      expect(batches.map((b) => [b.backend, b.counts.running, b.counts.queued])).toEqual([
        ['sandbox', 0, 2],
        [expect.stringMatching(/^live /), 1, 0],
      ]);
      const jobs = (await call('jobs.list', { limit: 10, offset: 0 })).jobs;
      expect(stateOf(jobs)).toEqual({
        [join(paid, 'e.png')]: ['running', null],
        [join(shoot, 'c.png')]: ['queued', SANDBOX_GONE],
        [join(shoot, 'd.png')]: ['queued', SANDBOX_GONE],
      });
      expect(looker.engine.store.lease()).toEqual(lease);
    } finally {
      await looker.close();
    }
    const cli = await listed(cliEnv(home, live.url));
    expect(cli.map((j) => j.state)).toEqual(['running', 'queued', 'queued']);
    // Nothing was sent anywhere by looking.
    expect(creates(await control(live.url, 'stats'))).toBe(livePaid);
  });

  it('a data folder from before the rule (schema 5): its in-flight Sandbox job and app run are queued to be sent again on upgrade, its live-service job stays running, and nothing else changes', async () => {
    const home = join(dir, 'home-upgrade');
    const input = join(dir, 'in-upgrade');
    const out = join(dir, 'out-upgrade');
    await makeImages(input, ['f.png']);
    const paid = join(dir, 'paid-upgrade');
    await makeImages(paid, ['g.png']);
    const env = sandboxEnv(home);
    for (const [args, e, until] of [
      [['run', 'upscaler-precision', input, '--out', out], env, /1 in flight/],
      [['run', 'upscaler-precision', paid, '--out', join(dir, 'out-paid')], cliEnv(home, live.url), /1 in flight/],
      [['apps', 'run', 'jM4nX8sc', '--input', 'brief=an upgrade', '--out', out, '--yes'], env, /^running/m],
    ] as const) {
      const stopped = await interruptWhen(args, { env: e, until });
      expect(stopped.code, stopped.err).toBe(130);
    }
    // The file as the version before migrations 6 and 7 left it: made by the queue's first five
    // migrations, holding the rows just written in the columns that version had.
    const file = join(home, 'mediadesk.db');
    const written = join(dir, 'written-upgrade.db');
    openDatabase(file, QUEUE_MIGRATIONS).close(); // the last connection closed: its WAL is in the file
    renameSync(file, written);
    const old = atQueueVersion(file, 5, written);
    const rows = (db: typeof old) => ({
      jobs: db
        .prepare('SELECT id, batch_id, input_path, out_dir, params, state, task_id FROM jobs ORDER BY seq')
        .all() as { state: string; task_id: string | null }[],
      runs: db.prepare('SELECT id, app_id, inputs, out_dir, cost, state FROM app_runs ORDER BY seq').all() as {
        state: string;
      }[],
      batches: db
        .prepare('SELECT id, tool, out_dir, params, roots, created_at, backend FROM batches ORDER BY created_at')
        .all(),
    });
    const before = rows(old);
    old.close();
    expect(before.jobs.map((j) => [j.state, j.task_id !== null])).toEqual([
      ['running', true],
      ['running', true],
    ]);
    expect(before.runs.map((r) => r.state)).toEqual(['running']);

    const jobs = await listed(env);
    expect(stateOf(jobs)).toEqual({
      [join(input, 'f.png')]: ['queued', SANDBOX_GONE],
      [join(paid, 'g.png')]: ['running', null],
    });
    const runs = await runCli(['apps', 'runs', '--json'], { env });
    expect((JSON.parse(runs.out) as AppRun[]).map((r) => [r.state, r.runId, r.error])).toEqual([
      ['queued', null, RUN_SANDBOX_GONE],
    ]);

    const upgraded = openDatabase(file, QUEUE_MIGRATIONS);
    try {
      expect(upgraded.pragma('user_version', { simple: true })).toBe(QUEUE_MIGRATIONS.length);
      const after = rows(upgraded);
      // Only the Sandbox's rows moved, and only their state and task; the rest is as it was.
      expect(after.batches).toEqual(before.batches);
      expect(after.jobs).toEqual([{ ...before.jobs[0], state: 'queued', task_id: null }, before.jobs[1]]);
      expect(after.runs).toEqual([{ ...before.runs[0], state: 'queued' }]);
    } finally {
      upgraded.close();
    }

    // The same run finishes the Sandbox's job, free; the live one was never sent again.
    const livePaid = creates(await control(live.url, 'stats'));
    const again = await runCli(['run', 'upscaler-precision', input, '--out', out], { env });
    expect(again.code, again.err).toBe(0);
    expect(readdirSync(out)).toContain('f_upscaler-precision.png');
    expect(creates(await control(live.url, 'stats'))).toBe(livePaid);
  });

  it("the rule: a Sandbox job stands only while its own Sandbox's process holds the queue; live-service jobs are never touched", async () => {
    const db = openDatabase(join(dir, 'rule.db'), QUEUE_MIGRATIONS);
    try {
      const store = new JobStore(db);
      const snapshot = { namingTemplate: '{name}_{tool}.{ext}', slugs: {} };
      const add = (id: string, backend: string) =>
        store.insertBatch({
          id,
          tool: 'upscaler-precision',
          outDir: dir,
          params: {},
          roots: [],
          snapshot,
          backend,
          jobs: [{ id: `${id}-job`, inputPath: `/in/${id}.png`, relDir: '', params: {} }],
        });
      const running = (id: string, sandboxOf: string | null) => {
        store.move(`${id}-job`, 'queued', 'submitting', { attemptId: 'x', sandboxOf });
        store.move(`${id}-job`, 'submitting', 'running', { taskId: `task-${id}` });
      };
      add('mine', 'sandbox');
      add('other', 'sandbox');
      add('older', 'sandbox');
      add('paid', 'live https://api.example.com key 0badc0de');
      running('mine', 'holder');
      running('other', 'earlier-process');
      running('older', null);
      running('paid', null);
      // This process holds the queue as `holder` (on any backend): only its own Sandbox's jobs stand.
      expect(store.tryLease('holder', 10_000)).toBe(true);
      const states = () =>
        Object.fromEntries(['mine', 'other', 'older', 'paid'].map((id) => [id, store.get(`${id}-job`)!.state]));
      expect(store.requeueGoneSandbox('gone', 10_000).map((j) => j.id)).toEqual(['other-job', 'older-job']);
      expect(states()).toEqual({ mine: 'running', other: 'queued', older: 'queued', paid: 'running' });
      expect(store.get('other-job')).toMatchObject({ error: 'gone', taskId: null, attemptId: null, sandboxOf: null });

      // Its process ends (killed: the lease is left behind, naming a pid that no longer runs).
      const child = spawn(process.execPath, ['-e', '']);
      await new Promise((r) => child.once('exit', r));
      db.prepare('UPDATE queue_lease SET pid = ?').run(child.pid);
      expect(store.requeueGoneSandbox('gone', 10_000).map((j) => j.id)).toEqual(['mine-job']);
      expect(states()).toEqual({ mine: 'queued', other: 'queued', older: 'queued', paid: 'running' });
    } finally {
      db.close();
    }
  });
});
