import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createCore, type Core } from '../../electron/core/index.ts';
import { MemorySecretStore } from '../../electron/core/secrets.ts';
import { startSandbox } from '../../electron/sandbox/index.ts';
import type { Notice } from '../../shared/contract/index.ts';
import { makeImages, givenFolder, sandboxAndFolder } from './helpers.ts';

/** The notices a web host's core emits, over the Sandbox with real files: what a tab or the desktop app shows. */
const ctx = sandboxAndFolder('notices', 100);
let core: Core;
const told: Notice[] = [];
/** Batches a jobs.changed event told finished; heard after the notices' own listener, so they were decided on. */
const toldFinished = new Set<string>();

beforeAll(async () => {
  core = await createCore({
    home: join(ctx.dir, 'home'),
    host: 'web',
    secrets: new MemorySecretStore(),
    startSandbox: () => startSandbox({ port: 0 }),
    // Results stay in the test's folder, never in ~/MediaDesk.
    env: {
      MEDIADESK_API_URL: ctx.url,
      MEDIADESK_API_KEY: 'sandbox-owner',
      MEDIADESK_OUTPUT_DIR: join(ctx.dir, 'results'),
    },
  }).then(givenFolder(ctx.dir));
  core.events.onAny((name, payload) => {
    if (name === 'notices.show') told.push(...(payload as { notices: Notice[] }).notices);
    if (name === 'jobs.changed')
      for (const b of (payload as { batches: { id: string; finished: boolean }[] }).batches)
        if (b.finished) toldFinished.add(b.id);
  });
});
afterAll(() => core?.close());

const until = (what: () => boolean) => vi.waitFor(() => expect(what()).toBe(true), { timeout: 30_000, interval: 50 });

describe('notices from the core', () => {
  it("a hot folder's files are told once when they are all done, not batch by batch", async () => {
    const watched = join(ctx.dir, 'Incoming');
    mkdirSync(watched);
    const added = await core.dispatch('hotFolders.add', {
      folder: watched,
      tool: 'upscaler-precision',
      params: {},
      outDir: join(ctx.dir, 'results', 'hot-results'),
    });
    expect(added.ok).toBe(true);
    await makeImages(watched, ['a.png', 'b.png']);
    await until(() => told.length > 0);
    // Every batch's end was heard: a notice per batch would have been told by now.
    await until(() => core.engine.listBatches(10, 0).every((b) => toldFinished.has(b.id)));
    expect(told.map((n) => [n.title, n.screen])).toEqual([['Hot folder Incoming: 2 images done', 'hot-folders']]);
  });

  it('a batch started by hand is told when it ends; with the setting off, nothing is', async () => {
    told.length = 0;
    // As a browser's drop arrives: a page names only inputs the person gave (PathPolicy).
    const inputs = join(ctx.dir, 'home', 'inbox', 'drop-notices', 'shoot');
    await makeImages(inputs, ['c.png'], 40);
    const start = async () => {
      const r = await core.dispatch('batches.start', { tool: 'upscaler-precision', inputs: [inputs], params: {} });
      if (!r.ok) throw new Error(r.error.message);
      return (r.result as { batch: { id: string } }).batch.id;
    };
    const id = await start();
    await until(() => told.length > 0);
    expect(told).toMatchObject([{ title: 'Precision upscaler: 1 image done', screen: 'queue', batchId: id }]);

    core.settings.set({ notifications: false });
    told.length = 0;
    await makeImages(join(ctx.dir, 'home', 'inbox', 'drop-notices', 'shoot2'), ['d.png'], 48);
    const r = await core.dispatch('batches.start', {
      tool: 'upscaler-precision',
      inputs: [join(ctx.dir, 'home', 'inbox', 'drop-notices', 'shoot2')],
      params: {},
    });
    if (!r.ok) throw new Error(r.error.message);
    const second = (r.result as { batch: { id: string } }).batch.id;
    await until(() => toldFinished.has(second));
    expect(told).toEqual([]);
  });
});
