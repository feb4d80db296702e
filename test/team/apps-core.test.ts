import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type Core } from '../../electron/core/index.ts';
import { openDatabase } from '../../electron/core/db/open.ts';
import { QUEUE_MIGRATIONS } from '../../electron/core/queue/migrations.ts';
import { AppRunStore } from '../../electron/core/apps/store.ts';
import { SETTLED_STATES } from '../../electron/core/queue/states.ts';
import { MemorySecretStore } from '../../electron/core/secrets.ts';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { DeskError, type CommandName, type Req, type Res } from '../../shared/contract/index.ts';
import { cleanup, control, tmp } from './helpers.ts';

// Whole cores (createCore, as the CLI and the app build them) over real Sandboxes and a real mediadesk.db.

let sandbox: RunningSandbox;
const homes: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, taskDurationMs: 100 });
});
afterAll(async () => {
  await sandbox.close();
  for (const h of homes) cleanup(h);
});

const home = () => {
  const h = tmp('core');
  homes.push(h);
  return h;
};
const envFor = (url: string): NodeJS.ProcessEnv => ({ MEDIADESK_API_URL: url, MEDIADESK_API_KEY: 'sandbox-owner' });
const openCore = (h: string, env: NodeJS.ProcessEnv) => createCore({ home: h, host: 'cli', env, secrets: new MemorySecretStore(), startSandbox: () => startSandbox({ port: 0, taskDurationMs: 100 }) });

async function call<K extends CommandName>(core: Core, name: K, req: Req<K>): Promise<Res<K>> {
  const reply = await core.dispatch(name, req);
  if (!reply.ok) throw DeskError.from(reply.error);
  return reply.result as Res<K>;
}

const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));
const runPosts = async (url: string): Promise<number> => (await control(url, 'stats')).requests['POST /v1/ai/apps/:appId/run'] ?? 0;

/** Waits until the run settles; the test's timeout bounds it. */
async function settledIn(core: Core, id: string) {
  for (;;) {
    const r = core.apps.one(id);
    if (SETTLED_STATES.includes(r.state)) return r;
    await sleep(50);
  }
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
    const env = envFor(sandbox.url);
    const before = await runPosts(sandbox.url);
    // The server records (and charges) the run at once; its 202 is held long enough to close meanwhile.
    await control(sandbox.url, 'faults', { appRunAnswerDelayMs: 1500 });
    const a = await openCore(h, env);
    let closed = false;
    let id = '';
    try {
      id = (await call(a, 'apps.run', { appId: 'jM4nX8sc', confirmedCost: 8, inputs: { brief: 'closing time' }, outDir: join(h, 'out') })).id;
      while ((await runPosts(sandbox.url)) === before) await sleep(10);
      expect(a.apps.store.get(id)!.state).toBe('submitting');
      await a.close();
      closed = true;
    } finally {
      if (!closed) await a.close();
      await control(sandbox.url, 'faults', { appRunAnswerDelayMs: 0 });
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
    expect(await runPosts(sandbox.url)).toBe(before + 1);
  });
});
