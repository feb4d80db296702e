import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { createDispatcher } from '../../electron/core/dispatch.ts';
import { engineHandlers } from '../../electron/core/engine/handlers.ts';
import type { Engine } from '../../electron/core/engine/engine.ts';
import { BatchEstimator } from '../../electron/core/limits/estimate.ts';
import { PriceBook } from '../../electron/core/limits/prices.ts';
import { cleanup, engineFor, makeImages, tmp } from './helpers.ts';

/**
 * batches.check: what a Start would queue, skip and reject, told before it, against real files on
 * disk, through the contract's dispatcher as every host calls it.
 */
let sb: RunningSandbox;
let dir = '';
beforeAll(async () => {
  sb = await startSandbox({ port: 0, taskDurationMs: 60_000 });
  dir = tmp('check');
});
afterAll(async () => {
  await sb?.close();
  if (dir) cleanup(dir);
});

/** The jobs area's handlers as createCore wires them (apps.estimate is not used here). */
const jobsHandlers = (engine: Engine, onCheckProgress?: Parameters<typeof engineHandlers>[1]['onCheckProgress']) =>
  engineHandlers(engine, {
    estimator: new BatchEstimator({ prices: new PriceBook(engine.store.db), pacer: engine.pacer }),
    appOf: () => Promise.reject(new Error('no workflow apps in this test')),
    onCheckProgress,
  });

/** A folder a designer might drop: two good photos and one of each kind of file Start refuses. */
async function messyShoot(root: string) {
  mkdirSync(root, { recursive: true });
  await makeImages(root, ['good-1.png', 'sub/good-2.png'], 300);
  // A note saved under an image's name.
  writeFileSync(join(root, 'photo.png'), 'shopping list: milk, eggs');
  // A JPEG cut short by an interrupted copy: its header, and so its size, intact.
  const whole = await sharp({
    create: {
      width: 600,
      height: 400,
      channels: 3,
      background: '#000',
      noise: { type: 'gaussian', mean: 128, sigma: 40 },
    },
  })
    .jpeg()
    .toBuffer();
  writeFileSync(join(root, 'cut.jpg'), whole.subarray(0, Math.floor(whole.length / 2)));
  // Over the tool's 10 MB bound (noise does not compress).
  await sharp({
    create: {
      width: 2000,
      height: 2000,
      channels: 3,
      background: '#000',
      noise: { type: 'gaussian', mean: 128, sigma: 60 },
    },
  })
    .png({ compressionLevel: 0 })
    .toFile(join(root, 'huge.png'));
  // Under its 256 px minimum side.
  await makeImages(root, ['tiny.png'], 100);
  // A format it does not take, named as one it does.
  await sharp({ create: { width: 300, height: 300, channels: 3, background: '#369' } })
    .webp()
    .toFile(join(root, 'really-webp.png'));
  writeFileSync(join(root, 'notes.txt'), 'not an image');
}

const reasonsOf = (issues: { path: string; reason: string }[], root: string) =>
  Object.fromEntries(issues.map((i) => [i.path.slice(root.length + 1), i.reason]));

describe('batches.check', () => {
  it('names each file a Start would refuse, with its reason, counts the rest as ready, and queues nothing; Start then agrees', async () => {
    const home = tmp('check-home');
    const engine = engineFor(home, sb.url);
    const dispatch = createDispatcher(jobsHandlers(engine));
    try {
      const root = join(dir, 'shoot');
      await messyShoot(root);
      const out = join(dir, 'out');
      const reply = await dispatch('batches.check', { tool: 'image50-edit', inputs: [root], outDir: out });
      expect(reply.ok).toBe(true);
      const check = (
        reply as {
          result: { ready: number; resumed: number; skipped: []; rejected: { path: string; reason: string }[] };
        }
      ).result;
      expect(check.ready).toBe(2);
      expect(check.resumed).toBe(0);
      expect(check.skipped).toEqual([]);
      const reasons = reasonsOf(check.rejected, root);
      expect(Object.keys(reasons).sort()).toEqual([
        'cut.jpg',
        'huge.png',
        'notes.txt',
        'photo.png',
        'really-webp.png',
        'tiny.png',
      ]);
      expect(reasons['photo.png']).toBe('is not a readable image');
      expect(reasons['cut.jpg']).toMatch(
        /^is truncated or damaged: the image data ends early \(.+\); was it still being copied\?$/,
      );
      expect(reasons['huge.png']).toMatch(/^is 1\d\.\d MB; this tool takes at most 10 MB$/);
      expect(reasons['tiny.png']).toBe('is 100x100; this tool needs at least 256x256');
      expect(reasons['really-webp.png']).toBe('is WEBP; this tool takes JPEG, PNG');
      expect(reasons['notes.txt']).toBe('this tool does not take .txt files');
      // A check is not a Start: no batch, no job.
      expect(engine.listBatches(50, 0)).toEqual([]);

      const started = await engine.startBatch({
        tool: 'image50-edit',
        inputs: [root],
        params: { prompt: 'warmer light' },
        outDir: out,
      });
      expect(started.queued).toBe(check.ready);
      expect(started.rejected).toEqual(check.rejected);
      expect(
        engine.store
          .byIds(started.jobIds)
          .map((j) => j.inputPath)
          .sort(),
      ).toEqual([join(root, 'good-1.png'), join(root, 'sub', 'good-2.png')]);

      // Checked again after that Start: the two are queued already, so nothing new would be paid.
      const again = await engine.checkBatch({ tool: 'image50-edit', inputs: [root], outDir: out });
      expect([again.ready, again.resumed]).toEqual([0, 2]);

      // Start checks again: a file that went bad after its check is refused then, not paid for.
      const sub = join(root, 'sub');
      expect((await engine.checkBatch({ tool: 'image50-edit', inputs: [sub], outDir: join(dir, 'out2') })).ready).toBe(
        1,
      );
      writeFileSync(join(sub, 'good-2.png'), readFileSync(join(sub, 'good-2.png')).subarray(0, 60));
      const late = await engine.startBatch({
        tool: 'image50-edit',
        inputs: [sub],
        params: { prompt: 'warmer light' },
        outDir: join(dir, 'out2'),
      });
      expect(late.queued).toBe(0);
      expect(late.rejected).toEqual([
        { path: join(sub, 'good-2.png'), reason: expect.stringMatching(/^is truncated or damaged/) },
      ]);
    } finally {
      await engine.close();
      cleanup(home);
    }
  });

  it('names what is wrong with each of many cut JPEGs checked beside files that are no image at all', async () => {
    const home = tmp('check-cut-home');
    const engine = engineFor(home, sb.url);
    try {
      const root = join(dir, 'many-cut');
      mkdirSync(root, { recursive: true });
      const whole = await sharp({
        create: {
          width: 400,
          height: 300,
          channels: 3,
          background: '#000',
          noise: { type: 'gaussian', mean: 128, sigma: 40 },
        },
      })
        .jpeg()
        .toBuffer();
      for (let i = 0; i < 12; i++) {
        writeFileSync(join(root, `cut-${i}.jpg`), whole.subarray(0, Math.floor(whole.length / 2)));
        writeFileSync(join(root, `note-${i}.png`), `note ${i}`);
      }
      const check = await engine.checkBatch({ tool: 'image50-edit', inputs: [root], outDir: join(dir, 'many-out') });
      const reasons = reasonsOf(check.rejected, root);
      for (let i = 0; i < 12; i++) {
        expect([i, reasons[`cut-${i}.jpg`]]).toEqual([
          i,
          'is truncated or damaged: the image data ends early (VipsJpeg: premature end of JPEG image); was it still being copied?',
        ]);
        expect(reasons[`note-${i}.png`]).toBe('is not a readable image');
      }
    } finally {
      await engine.close();
      cleanup(home);
    }
  });

  it('a newer check under the same id stops the older one, which answers conflict; progress is told along the way', async () => {
    const home = tmp('check-supersede');
    const progress: { checkId: string; checked: number; total: number }[] = [];
    const engine = engineFor(home, sb.url);
    const dispatch = createDispatcher(jobsHandlers(engine, (p) => progress.push(p)));
    try {
      const many = join(dir, 'many');
      await makeImages(
        many,
        Array.from({ length: 60 }, (_, i) => `p${i}.png`),
        300,
      );
      const first = dispatch('batches.check', { tool: 'upscaler-precision', inputs: [many], checkId: 'studio-1' });
      const second = dispatch('batches.check', {
        tool: 'upscaler-precision',
        inputs: [join(many, 'p1.png')],
        checkId: 'studio-1',
      });
      const [a, b] = await Promise.all([first, second]);
      expect(a).toMatchObject({ ok: false, error: { code: 'conflict' } });
      expect(b).toMatchObject({ ok: true, result: { ready: 1, rejected: [], skipped: [] } });
      // The last word of the check that finished is its whole count.
      expect(progress.at(-1)).toEqual({ checkId: 'studio-1', checked: 1, total: 1 });
      // Another id is another asker: it is left alone.
      const [c, d] = await Promise.all([
        dispatch('batches.check', { tool: 'upscaler-precision', inputs: [many], checkId: 'a' }),
        dispatch('batches.check', { tool: 'upscaler-precision', inputs: [many], checkId: 'b' }),
      ]);
      expect([c, d]).toMatchObject([
        { ok: true, result: { ready: 60 } },
        { ok: true, result: { ready: 60 } },
      ]);
    } finally {
      await engine.close();
      cleanup(home);
    }
  });

  it('refuses a tool without input files, plainly', async () => {
    const home = tmp('check-prompt');
    const engine = engineFor(home, sb.url);
    try {
      const reply = await createDispatcher(jobsHandlers(engine))('batches.check', { tool: 'hires', inputs: [dir] });
      expect(reply).toMatchObject({
        ok: false,
        error: { code: 'invalid', message: expect.stringContaining('takes no input files') },
      });
    } finally {
      await engine.close();
      cleanup(home);
    }
  });

  it('with the parameters a Start would send, refuses those Start refuses, the same way, each naming its field', async () => {
    const home = tmp('check-params');
    const engine = engineFor(home, sb.url);
    const dispatch = createDispatcher(jobsHandlers(engine));
    try {
      const root = join(dir, 'params');
      await makeImages(root, ['a.png'], 300);
      const params = { scale_factor: 17, flavor: 'photo' };
      const check = await dispatch('batches.check', { tool: 'upscaler-precision', inputs: [root], params });
      const start = await dispatch('batches.start', {
        tool: 'upscaler-precision',
        inputs: [root],
        params,
        outDir: join(dir, 'params-out'),
      });
      expect(check).toMatchObject({ ok: false, error: { code: 'invalid', invalid: [{ field: 'scale_factor' }] } });
      expect((check as { error: unknown }).error).toEqual((start as { error: unknown }).error);
      expect(
        await dispatch('batches.check', { tool: 'upscaler-precision', inputs: [root], params: { scale_factor: 4 } }),
      ).toMatchObject({ ok: true, result: { ready: 1 } });
    } finally {
      await engine.close();
      cleanup(home);
    }
  });
});
