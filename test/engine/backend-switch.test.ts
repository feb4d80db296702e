import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createCore, type Core } from '../../electron/core/index.ts';
import { keyFingerprint, MemorySecretStore } from '../../electron/core/secrets.ts';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { DeskError, type CommandName, type Req, type Res } from '../../shared/contract/index.ts';
import { batchWaitingFor } from '../../shared/contract/jobs.ts';
import { BIN, cliEnv, runCli } from '../cli.ts';
import { cleanup, control, creates, makeImages, tmp } from './helpers.ts';

/**
 * A user tries the app on the built-in Sandbox, then sets a key and switches to the live service
 * (here a second Sandbox over HTTP). A batch belongs to the backend it was started on: a demo
 * batch must not be paid for on live, and a task id is polled only where it was made.
 */
/** Tasks are asked after this long, not the app's default second: the demo tasks finish sooner. */
const POLL_MS = 200;
const POLL_ENV = { MEDIADESK_POLL_MIN_MS: String(POLL_MS) };
let builtIn: RunningSandbox;
let live: RunningSandbox;
let dir: string;
let core: Core;

beforeAll(async () => {
  builtIn = await startSandbox({ port: 0, taskDurationMs: 1500 });
  live = await startSandbox({ port: 0, taskDurationMs: 100 });
  dir = tmp('backend-switch');
  core = await createCore({
    home: join(dir, 'home'),
    host: 'cli',
    env: POLL_ENV,
    secrets: new MemorySecretStore(),
    startSandbox: async () => builtIn,
  });
});
afterAll(async () => {
  await core.close();
  await builtIn.close();
  await live.close();
  cleanup(dir);
});

async function callOn<K extends CommandName>(c: Core, name: K, req: Req<K>): Promise<Res<K>> {
  const reply = await c.dispatch(name, req);
  if (!reply.ok) throw DeskError.from(reply.error);
  return reply.result as Res<K>;
}
const call = <K extends CommandName>(name: K, req: Req<K>) => callOn(core, name, req);
const OWNER = keyFingerprint('sandbox-owner');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const states = (ids: string[]) => core.engine.store.byIds(ids).map((j) => j.state);
const until = (ok: () => boolean) => vi.waitFor(() => expect(ok()).toBe(true), { timeout: 30_000, interval: 30 });
const toLive = async () => {
  await call('settings.set', { backend: 'live', baseUrl: live.url });
  await call('key.set', { key: 'sandbox-owner' });
};
const toSandbox = () => call('settings.set', { backend: 'sandbox' });
const livePolls = async () =>
  Object.entries((await control(live.url, 'stats')).requests as Record<string, number>)
    .filter(([k]) => k.startsWith('GET /v1/'))
    .reduce((a, [, n]) => a + n, 0);

describe('switching backends with work in the queue', () => {
  it('a Sandbox batch is neither sent to nor polled on the live service, nor followed by the same folder started there; back on the Sandbox it finishes', async () => {
    const shoot = join(dir, 'shoot');
    await makeImages(shoot, ['a.png', 'b.png']);
    const out = join(dir, 'out');
    const start = () => call('batches.start', { tool: 'upscaler-precision', inputs: [shoot], outDir: out, params: {} });

    // Queued on the Sandbox while the queue is paused.
    await call('jobs.pause', {});
    const demo = await start();
    expect(demo.batch!.backend).toBe('sandbox');
    const demoJobs = demo.jobIds;

    // A key and the live service: the same folder is a new batch there, and only it is paid for.
    await toLive();
    await call('jobs.resume', {});
    const paid = await start();
    expect([paid.queued, paid.resumed]).toEqual([2, []]);
    expect(paid.batch!.backend).toBe(`live ${live.url} key ${OWNER}`);
    await until(() => states(paid.jobIds).every((s) => s === 'done'));
    expect(creates(await control(live.url, 'stats'))).toBe(2);
    expect(states(demoJobs)).toEqual(['queued', 'queued']);
    expect(creates(await control(builtIn.url, 'stats'))).toBe(0);

    // Back on the Sandbox the demo batch is sent there; switched to live while its tasks run, they
    // are not polled on live (their ids mean nothing there) and do not fail.
    await toSandbox();
    await until(() => states(demoJobs).every((s) => s === 'running'));
    expect(creates(await control(builtIn.url, 'stats'))).toBe(2);
    const pollsBefore = await livePolls();
    await toLive();
    // Nothing on live marks when a wrong poll would go out: it falls due within twice the first poll interval.
    await sleep(2 * POLL_MS);
    await core.engine.settled();
    expect(states(demoJobs)).toEqual(['running', 'running']);
    expect(await livePolls()).toBe(pollsBefore);
    await toSandbox();
    await until(() => states(demoJobs).every((s) => s === 'done'));
    expect(creates(await control(live.url, 'stats'))).toBe(2);
  });

  it('a batch queued before batches recorded their backend is adopted by the backend in use when the queue is next held, and is not paid for on live after a switch', async () => {
    const home = join(dir, 'home-legacy');
    // Both cores share the file's Sandbox: the first (whose Start learned the tool's price from it) must not close it.
    const shared = { url: builtIn.url, close: async () => {} };
    const open = () =>
      createCore({
        home,
        host: 'cli',
        env: POLL_ENV,
        secrets: new MemorySecretStore(),
        startSandbox: async () => shared,
      });
    const shoot = join(dir, 'legacy');
    await makeImages(shoot, ['l.png']);
    const before = await open();
    let id = '';
    let jobIds: string[] = [];
    try {
      await before.dispatch('jobs.pause', {});
      const r = await before.dispatch('batches.start', {
        tool: 'upscaler-precision',
        inputs: [shoot],
        outDir: join(dir, 'out-legacy'),
        params: {},
      });
      if (!r.ok) throw DeskError.from(r.error);
      ({ jobIds } = r.result as Res<'batches.start'>);
      id = (r.result as Res<'batches.start'>).batch!.id;
      // As queue migration 4 left the rows of an earlier version: no backend.
      before.engine.store.db.prepare('UPDATE batches SET backend = NULL WHERE id = ?').run(id);
    } finally {
      await before.close();
    }
    const after = await open();
    try {
      await until(() => after.engine.store.batch(id)!.backend === 'sandbox');
      const livePaid = creates(await control(live.url, 'stats'));
      await after.dispatch('settings.set', { backend: 'live', baseUrl: live.url });
      await after.dispatch('key.set', { key: 'sandbox-owner' });
      await after.dispatch('jobs.resume', {});
      await after.engine.settled();
      expect(after.engine.store.byIds(jobIds).map((j) => j.state)).toEqual(['queued']);
      expect(creates(await control(live.url, 'stats'))).toBe(livePaid);
      await after.dispatch('settings.set', { backend: 'sandbox' });
      await until(() => after.engine.store.byIds(jobIds)[0].state === 'done');
    } finally {
      await after.close();
    }
  });

  it("another API key on the same server is another account: work queued with one key waits for it, and says so; work from before keys were recorded is the key in use's", async () => {
    const home = join(dir, 'home-keys');
    const secrets = new MemorySecretStore();
    const open = () => createCore({ home, host: 'cli', env: POLL_ENV, secrets, startSandbox: async () => builtIn });
    const shoot = join(dir, 'keys');
    await makeImages(shoot, ['k.png']);
    const old = join(dir, 'keys-old');
    await makeImages(old, ['o.png']);
    const start = (c: Core, folder: string) =>
      callOn(c, 'batches.start', {
        tool: 'upscaler-precision',
        inputs: [folder],
        outDir: join(dir, 'out-keys'),
        params: {},
      });
    const first = await open();
    let mine: Res<'batches.start'>, legacy: Res<'batches.start'>;
    try {
      await first.dispatch('settings.set', { backend: 'live', baseUrl: live.url });
      await first.dispatch('key.set', { key: 'sandbox-owner' });
      await first.dispatch('jobs.pause', {});
      mine = await start(first, shoot);
      legacy = await start(first, old);
      // As an earlier version recorded it: the server without the key.
      first.engine.store.db
        .prepare('UPDATE batches SET backend = ? WHERE id = ?')
        .run(`live ${live.url}`, legacy.batch!.id);
    } finally {
      await first.close();
    }
    const c = await open();
    try {
      const here = `live ${live.url} key ${OWNER}`;
      await until(() => c.engine.store.batch(legacy.batch!.id)!.backend === here);
      expect(c.engine.store.batch(mine.batch!.id)!.backend).toBe(here);
      const livePaid = creates(await control(live.url, 'stats'));
      await c.dispatch('key.set', { key: 'sandbox-admin' });
      await c.dispatch('jobs.resume', {});
      await c.engine.settled();
      expect(c.engine.store.byIds([...mine.jobIds, ...legacy.jobIds]).map((j) => j.state)).toEqual([
        'queued',
        'queued',
      ]);
      expect(creates(await control(live.url, 'stats'))).toBe(livePaid);
      const admin = keyFingerprint('sandbox-admin');
      expect((await callOn(c, 'app.info', {})).backend.identity).toBe(`live ${live.url} key ${admin}`);
      const listed = (await callOn(c, 'batches.list', {})).find((b) => b.id === mine.batch!.id)!;
      expect(batchWaitingFor(listed, `live ${live.url} key ${admin}`)).toBe(
        `waiting for the API key ${OWNER}, with which it was queued on the live service at ${live.url}: set that key again to continue, or cancel it (the key in use is ${admin})`,
      );
      await c.dispatch('key.set', { key: 'sandbox-owner' });
      await until(() => c.engine.store.byIds([...mine.jobIds, ...legacy.jobIds]).every((j) => j.state === 'done'));
      expect(creates(await control(live.url, 'stats'))).toBe(livePaid + 2);
    } finally {
      await c.close();
    }
  });

  it('a script on the live service, while the app runs the queue on the Sandbox, says why its jobs and app runs wait; once the app quits they run', async () => {
    const home = join(dir, 'home2');
    const holder = await createCore({
      home,
      host: 'web',
      env: POLL_ENV,
      secrets: new MemorySecretStore(),
      startSandbox: async () => builtIn,
    });
    const shoot = join(dir, 'shoot2');
    await makeImages(shoot, ['c.png']);
    const args = [BIN, 'run', 'upscaler-precision', shoot, '--out', join(dir, 'out2')];
    const env = { ...process.env, ...cliEnv(home, live.url) };
    const before = await control(live.url, 'stats');
    const livePaid = creates(before);
    const upscales = (stats: typeof before) => creates({ creates: { t: stats.creates['upscaler-precision'] ?? {} } });
    let closed = false;
    try {
      const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
      // The progress line, on stderr.
      let out = '';
      const said = new Promise<void>((res) =>
        child.stderr!.on('data', (d) => {
          out += d;
          if (out.includes('another MediaDesk process runs the queue on the built-in Sandbox')) res();
        }),
      );
      await said;
      expect(out).toContain(
        `these jobs are for the live service at ${live.url} (API key ${OWNER}) and wait until it switches or quits`,
      );
      const exited = new Promise<number | null>((res) => child.once('exit', res));
      child.kill('SIGINT');
      expect(await exited).toBe(130);
      expect(creates(await control(live.url, 'stats'))).toBe(livePaid);

      // A workflow-app run from the same script says the same.
      const app = spawn(
        process.execPath,
        [BIN, 'apps', 'run', 'jM4nX8sc', '--input', 'brief=a jingle', '--out', join(dir, 'out3'), '--yes'],
        { env, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let err = '';
      await new Promise<void>((res) =>
        app.stderr!.on('data', (d) => {
          err += d;
          if (err.includes('and waits until it switches or quits')) res();
        }),
      );
      expect(err).toContain(
        `queued: another MediaDesk process runs the queue on the built-in Sandbox; this run is for the live service at ${live.url} (API key ${OWNER})`,
      );
      const appExited = new Promise<number | null>((res) => app.once('exit', res));
      app.kill('SIGINT');
      expect(await appExited).toBe(130);
      await holder.close();
      closed = true;
      const again = await runCli(args.slice(1), { env: cliEnv(home, live.url) });
      expect([again.code, again.out]).toEqual([0, expect.stringContaining('1 resumed from an earlier run')]);
      // The job is sent once; the app run queued with --yes goes with the queue this process now runs, once.
      const after = await control(live.url, 'stats');
      expect(upscales(after)).toBe(upscales(before) + 1);
      expect(creates(after)).toBeLessThanOrEqual(livePaid + 2);
    } finally {
      if (!closed) await holder.close();
    }
  });
});
