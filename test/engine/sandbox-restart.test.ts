import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createCore, type Core } from '../../electron/core/index.ts';
import { MemorySecretStore } from '../../electron/core/secrets.ts';
import { startSandbox } from '../../electron/sandbox/index.ts';
import { DeskError, type CommandName, type Req, type Res } from '../../shared/contract/index.ts';
import { until } from '../wait.ts';
import { cleanup, control, creates, makeImages, tmp } from './helpers.ts';

/**
 * The built-in Sandbox (the default backend, so the app works with no key) lives inside the app or
 * command that started it. Quit the app mid-batch, or stop `mediadesk run` with Ctrl-C, and its
 * tasks and result URLs are gone. The work is free, so the next process sends it again by itself:
 * nothing is left "needs attention" as if a paid task had been lost.
 */
const dir = tmp('sandbox-restart');
afterAll(() => cleanup(dir));

/** A core as the app builds one, whose built-in Sandbox takes `taskDurationMs` per task. */
const open = (home: string, taskDurationMs: number) =>
  createCore({
    home,
    host: 'cli',
    env: {},
    secrets: new MemorySecretStore(),
    startSandbox: () => startSandbox({ port: 0, taskDurationMs }),
  });

async function call<K extends CommandName>(c: Core, name: K, req: Req<K>): Promise<Res<K>> {
  const reply = await c.dispatch(name, req);
  if (!reply.ok) throw DeskError.from(reply.error);
  return reply.result as Res<K>;
}

describe('the built-in Sandbox stops with its process', () => {
  it('tasks it was running, results it was serving, a create it was sending and an app run are queued again in the next process and finish there', async () => {
    const home = join(dir, 'home');
    const folders = { running: join(dir, 'running'), serving: join(dir, 'serving'), sending: join(dir, 'sending') };
    await makeImages(folders.running, ['a.png', 'b.png']);
    await makeImages(folders.serving, ['c.png']);
    await makeImages(folders.sending, ['d.png']);
    const start = (c: Core, folder: string) =>
      call(c, 'batches.start', { tool: 'upscaler-precision', inputs: [folder], outDir: join(dir, 'out'), params: {} });
    const states = (c: Core, ids: string[]) => c.engine.store.byIds(ids).map((j) => j.state);

    const first = await open(home, 60_000);
    const ids: Record<keyof typeof folders, string[]> = { running: [], serving: [], sending: [] };
    let runId: string;
    let oldUrl: string;
    try {
      ids.running = (await start(first, folders.running)).jobIds;
      runId = (
        await call(first, 'apps.run', {
          appId: 'jM4nX8sc',
          confirmedCost: 8,
          inputs: { brief: 'a jingle' },
          outDir: join(dir, 'apps'),
        })
      ).id;
      await until(
        () => states(first, ids.running).every((s) => s === 'running') && first.apps.one(runId).state === 'running',
      );
      oldUrl = (await first.backend.builtInSandboxUrl())!;
      // Then tasks that finish at once, whose results arrive at a trickle: downloading when the app quits.
      await control(oldUrl, 'faults', { taskDurationMs: 50, slowDownloadBytesPerSec: 16 });
      ids.serving = (await start(first, folders.serving)).jobIds;
      await until(() => states(first, ids.serving)[0] === 'downloading');
      await call(first, 'jobs.pause', {});
      ids.sending = (await start(first, folders.sending)).jobIds;
      // A kill between the commit of `submitting` and the server's answer leaves this row.
      first.engine.store.db
        .prepare("UPDATE jobs SET state = 'submitting', attempt_id = 'a1', attempts = 1 WHERE id = ?")
        .run(ids.sending[0]);
      await call(first, 'jobs.resume', {});
    } finally {
      await first.close();
    }

    const next = await open(home, 100);
    try {
      const all = [...ids.running, ...ids.serving, ...ids.sending];
      await until(
        () =>
          next.engine.store.byIds(all).every((j) => ['done', 'failed', 'needs_attention'].includes(j.state)) &&
          ['done', 'failed', 'needs_attention'].includes(next.apps.one(runId).state),
      );
      expect(next.engine.store.byIds(all).map((j) => [j.state, j.error])).toEqual(all.map(() => ['done', null]));
      expect(next.apps.one(runId)).toMatchObject({ state: 'done', error: null, outputs: [expect.any(String)] });
      const newUrl = (await next.backend.builtInSandboxUrl())!;
      expect(newUrl).not.toBe(oldUrl);
      // Each sent again to this process's Sandbox, which made each result.
      expect(creates(await control(newUrl, 'stats'))).toBe(all.length + 1);
    } finally {
      await next.close();
    }
  });
});
