import { readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { createCore, type Core } from '../../electron/core/index.ts';
import { openDatabase } from '../../electron/core/db/open.ts';
import { QUEUE_MIGRATIONS } from '../../electron/core/queue/migrations.ts';
import { AppRunStore } from '../../electron/core/apps/store.ts';
import { SETTLED_STATES } from '../../shared/contract/jobs.ts';
import { keyFingerprint, MemorySecretStore } from '../../electron/core/secrets.ts';
import { startSandbox } from '../../electron/sandbox/index.ts';
import { DeskError, type CommandName, type Req, type Res } from '../../shared/contract/index.ts';
import { runWaitingFor } from '../../shared/contract/team.ts';
import { runCli } from '../cli.ts';
import { until } from '../wait.ts';
import { control, sandboxAndHomes } from './helpers.ts';

// Whole cores (createCore, as the CLI and the app build them) over real Sandboxes and a real mediadesk.db.

const at = sandboxAndHomes('core', 100);
const home = () => at.home();
const envFor = (url: string): NodeJS.ProcessEnv => ({ MEDIADESK_API_URL: url, MEDIADESK_API_KEY: 'sandbox-owner' });
/** A core as the CLI builds one; `env` chooses the backend (none: the built-in Sandbox, started in-process). */
const openCore = (h: string, env: NodeJS.ProcessEnv, runQueue = true) =>
  createCore({
    home: h,
    host: 'cli',
    env,
    runQueue,
    secrets: new MemorySecretStore(),
    startSandbox: () => startSandbox({ port: 0, taskDurationMs: 100 }),
  });

async function call<K extends CommandName>(core: Core, name: K, req: Req<K>): Promise<Res<K>> {
  const reply = await core.dispatch(name, req);
  if (!reply.ok) throw DeskError.from(reply.error);
  return reply.result as Res<K>;
}

const runPosts = async (url: string): Promise<number> =>
  (await control(url, 'stats')).requests['POST /v1/ai/flows/:appId/run'] ?? 0;

/** Waits until the run settles. */
function settledIn(core: Core, id: string) {
  return until(() => {
    const r = core.apps.one(id);
    return SETTLED_STATES.includes(r.state) && r;
  });
}

function storedRun(h: string, id: string) {
  const store = new AppRunStore(openDatabase(join(h, 'mediadesk.db'), QUEUE_MIGRATIONS));
  try {
    return store.get(id)!;
  } finally {
    store.db.close();
  }
}

describe('a whole core and its app runs', () => {
  it('close() during a run POST waits for the answer and stores the run id; the next core follows that run and posts nothing', async () => {
    const h = home();
    const env = envFor(at.url);
    const before = await runPosts(at.url);
    // The server records (and charges) the run at once; its 202 is held long enough to close meanwhile.
    await control(at.url, 'faults', { appRunAnswerDelayMs: 1500 });
    const a = await openCore(h, env);
    let closed = false;
    let id = '';
    try {
      id = (
        await call(a, 'apps.run', {
          appId: 'jM4nX8sc',
          confirmedCost: 8,
          inputs: { brief: 'closing time' },
          outDir: join(h, 'out'),
        })
      ).id;
      await until(async () => (await runPosts(at.url)) > before, { interval: 10 });
      expect(a.apps.store.get(id)!.state).toBe('submitting');
      await a.close();
      closed = true;
    } finally {
      if (!closed) await a.close();
      await control(at.url, 'faults', { appRunAnswerDelayMs: 0 });
    }
    const left = storedRun(h, id);
    expect(left.state).toBe('running');
    expect(left.runId).toEqual(expect.any(String));

    const b = await openCore(h, env);
    try {
      const done = await settledIn(b, id);
      expect([done.state, done.runId, done.outputs.length]).toEqual(['done', left.runId, 1]);
    } finally {
      await b.close();
    }
    expect(await runPosts(at.url)).toBe(before + 1);
  });

  it('a run queued on the built-in Sandbox is neither resumed nor sent after a switch to the live service, and is again once switched back', async () => {
    const h = home();
    const out = join(h, 'out');
    const jingle = (brief: string) => ({
      appId: 'jM4nX8sc',
      confirmedCost: 8,
      inputs: { brief },
      outDir: out,
      resume: true,
    });
    const live = envFor(at.url);
    const LIVE = `live ${at.url} key ${keyFingerprint('sandbox-owner')}`;
    const before = await runPosts(at.url);

    // Queued on the Sandbox (this process does not run the queue): stopped before it was sent.
    const onSandbox = await openCore(h, {}, false);
    let first: string, second: string;
    try {
      expect(await onSandbox.backend.identity()).toBe('sandbox');
      first = (await call(onSandbox, 'apps.run', jingle('one'))).id;
      second = (await call(onSandbox, 'apps.run', jingle('two'))).id;
    } finally {
      await onSandbox.close();
    }
    expect(storedRun(h, first).backend).toBe('sandbox');

    // The same command on the live service queues a run of its own and sends only that one.
    const onLive = await openCore(h, live);
    try {
      expect(await onLive.backend.identity()).toBe(LIVE);
      const again = await call(onLive, 'apps.run', jingle('one'));
      expect(again.resumed).toBe(false);
      expect(again.id).not.toBe(first);
      expect((await settledIn(onLive, again.id)).state).toBe('done');
      expect(storedRun(h, again.id).backend).toBe(LIVE);
      expect(await runPosts(at.url)).toBe(before + 1);
      expect([onLive.apps.one(first).state, onLive.apps.one(second).state]).toEqual(['queued', 'queued']);
      // And it says why it does not move, in the Queue and in `apps runs` alike.
      const info = await call(onLive, 'app.info', {});
      expect(info.backend.identity).toBe(LIVE);
      const waiting = (await call(onLive, 'apps.runs', { limit: 10 })).runs.find((r) => r.id === first)!;
      expect(runWaitingFor(waiting, info.backend.identity)).toBe(
        'waiting for the built-in Sandbox, where it was queued: switch back to it to continue, or cancel it',
      );
      expect(runWaitingFor(onLive.apps.one(again.id), info.backend.identity)).toBeNull();
      const listed = await runCli(['apps', 'runs'], { env: { MEDIADESK_HOME: h, ...live } });
      expect(listed.out.split('\n').find((l) => l.startsWith(first.slice(0, 8)))).toContain(
        'waiting for the built-in Sandbox',
      );
      // Canceled and retried here, a run is sent anew to the backend in use now.
      await call(onLive, 'apps.cancel', { id: second });
      expect(onLive.apps.one(second).retry).toBe('submit');
      await call(onLive, 'apps.retry', { id: second, confirmedCost: 8 });
      expect(storedRun(h, second).backend).toBe(LIVE);
      expect((await settledIn(onLive, second)).state).toBe('done');
      expect(await runPosts(at.url)).toBe(before + 2);
    } finally {
      await onLive.close();
    }

    // Back on the Sandbox, the same command follows the run it queued there, and sends it there.
    const back = await openCore(h, {});
    try {
      const resumed = await call(back, 'apps.run', jingle('one'));
      expect([resumed.id, resumed.resumed]).toEqual([first, true]);
      const done = await settledIn(back, first);
      expect([done.state, done.outputs.length]).toEqual(['done', 1]);
    } finally {
      await back.close();
    }
    expect(await runPosts(at.url)).toBe(before + 2);
  });

  it('a run queued before runs recorded their backend is adopted by the backend in use when the queue is next held, and is sent there once', async () => {
    const h = home();
    const onSandbox = await openCore(h, {}, false);
    let id: string;
    try {
      id = (
        await call(onSandbox, 'apps.run', {
          appId: 'jM4nX8sc',
          confirmedCost: 8,
          inputs: { brief: 'legacy' },
          outDir: join(h, 'out'),
        })
      ).id;
    } finally {
      await onSandbox.close();
    }
    // As queue migration 3 left the rows of an earlier version: no backend.
    const db = openDatabase(join(h, 'mediadesk.db'), QUEUE_MIGRATIONS);
    db.prepare('UPDATE app_runs SET backend = NULL WHERE id = ?').run(id);
    db.close();
    // The next core runs on the live service (here the shared Sandbox over HTTP, with a key): it adopts the run and sends it there, once.
    const livePosts = await runPosts(at.url);
    const back = await openCore(h, envFor(at.url));
    try {
      expect((await settledIn(back, id)).state).toBe('done');
    } finally {
      await back.close();
    }
    expect(storedRun(h, id).backend).toBe(`live ${at.url} key ${keyFingerprint('sandbox-owner')}`);
    expect(await runPosts(at.url)).toBe(livePosts + 1);
  });

  it('a run with no folder named writes where a batch would: the output folder (~/MediaDesk by default), in Workflow apps/<app name>', async () => {
    const h = home();
    const out = join(h, 'My results');
    const core = await openCore(h, { MEDIADESK_OUTPUT_DIR: out });
    try {
      const run = await call(core, 'apps.run', {
        appId: 'jM4nX8sc',
        confirmedCost: 8,
        inputs: { brief: 'where does it go' },
      });
      const folder = join(out, 'Workflow apps', run.appName);
      expect(run.outDir).toBe(folder);
      const done = await settledIn(core, run.id);
      expect([done.state, done.outputs.every((f) => f.startsWith(folder + sep))]).toEqual(['done', true]);
    } finally {
      await core.close();
    }
  });
});

describe('the log', () => {
  it('says a failed app run with its reason, as it says a failed job', async () => {
    const h = home();
    await control(at.url, 'faults', { failureRate: 1, appRunFailureMessage: 'the model could not read the brief' });
    const core = await openCore(h, envFor(at.url));
    try {
      const run = await call(core, 'apps.run', {
        appId: 'jM4nX8sc',
        confirmedCost: 8,
        inputs: { brief: 'A jingle for a coffee brand' },
      });
      expect((await settledIn(core, run.id)).state).toBe('failed');
      const logged = () => readFileSync(join(h, 'logs', 'cli.log'), 'utf8');
      await vi.waitFor(
        () =>
          expect(logged()).toMatch(
            new RegExp(`\\[warn\\] +app run ${run.id} \\(Jingle maker\\) failed: .*the model could not read the brief`),
          ),
        { timeout: 10_000 },
      );
    } finally {
      await control(at.url, 'faults', { failureRate: 0, appRunFailureMessage: null });
      await core.close();
    }
  });
});
