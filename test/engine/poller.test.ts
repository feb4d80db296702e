// Polling when a list does not answer or shows only some tasks: real Sandbox faults over real HTTP.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { DEFAULT_SLUGS } from '../../shared/catalogue/index.ts';
import { DEFAULT_SETTINGS } from '../../shared/settings.ts';
import { openEngine } from '../../electron/core/engine/open.ts';
import { LIST_WINDOW_FAULT } from '../../electron/sandbox/tool-routes.ts';
import { until } from '../wait.ts';
import { control, creates, engineSuite, makeImages, settle } from './helpers.ts';

const sb = engineSuite('poller', 300);
const LIST = '/v1/ai/image-upscaler-precision-v2';
const LIST_RETRY_MS = 300;

function engine(home: string, concurrency = 100, maxMs = 1000) {
  return openEngine({
    home,
    target: async () => ({ baseUrl: sb.url, apiKey: 'sandbox-owner' }),
    slugs: () => ({ ...DEFAULT_SLUGS }),
    settings: () => DEFAULT_SETTINGS,
    concurrency,
    poll: {
      firstMs: 40,
      minMs: 40,
      // A task no list shows waits at most 6 of these before it is asked by id (byIdDue).
      maxMs: { image: maxMs, text: maxMs, audio: maxMs, video: maxMs },
      listRetryMs: LIST_RETRY_MS,
    },
    client: { maxDelayMs: 2000 },
  });
}

async function requests(): Promise<{ lists: number; byId: number }> {
  const r = (await control(sb.url, 'stats')).requests as Record<string, number>;
  const byId = Object.entries(r)
    .filter(([k]) => k.startsWith('GET') && k.includes('{task-id}'))
    .reduce((a, [, n]) => a + n, 0);
  return { lists: r[`GET ${LIST}`] ?? 0, byId };
}

describe('a list that does not answer', () => {
  it('collects its tasks by id, asks the list again only after doubling waits, and goes back to it once it answers', async () => {
    const dir = sb.folder();
    await control(sb.url, 'faults', { listNotFound: [LIST] });
    const inputs = await makeImages(
      join(dir, 'in'),
      Array.from({ length: 12 }, (_, i) => `a${i}.png`),
      8,
    );
    const e = engine(join(dir, 'home'));
    try {
      const started = Date.now();
      const r = await e.startBatch({ tool: 'upscaler-precision', inputs, outDir: join(dir, 'out') });
      e.start();
      // Without by-id polling none of these would ever finish: paid for, never downloaded.
      await settle(e, r.jobIds);
      expect(new Set(e.store.byIds(r.jobIds).map((j) => j.state))).toEqual(new Set(['done']));
      const down = await requests();
      expect(down.byId).toBeGreaterThanOrEqual(12);
      // Asked again after 0.3, 0.6, 1.2 s...: a handful over the batch, not one per tick.
      expect(down.lists).toBeLessThanOrEqual(2 + Math.log2((Date.now() - started) / LIST_RETRY_MS));
      expect(e.listAnswers(LIST)).toBe(false);

      // The list answers again: the next tasks are polled through it, and none by id once it did.
      await control(sb.url, 'faults', { listNotFound: [], taskDurationMs: 600_000 });
      const more = await makeImages(
        join(dir, 'in2'),
        Array.from({ length: 5 }, (_, i) => `b${i}.png`),
        8,
      );
      const r2 = await e.startBatch({ tool: 'upscaler-precision', inputs: more, outDir: join(dir, 'out2') });
      await until(() => e.listAnswers(LIST));
      const recovered = await requests();
      await until(async () => (await requests()).lists >= recovered.lists + 2);
      await control(sb.url, 'tasks/finish', {});
      await settle(e, r2.jobIds);
      expect(new Set(e.store.byIds(r2.jobIds).map((j) => j.state))).toEqual(new Set(['done']));
      expect((await requests()).byId).toBe(recovered.byId);
      expect(creates(await control(sb.url, 'stats'))).toBe(17);
    } finally {
      await e.close();
    }
  }, 60_000);
});

describe('a list that shows only the newest tasks', () => {
  it('asks each task it leaves out about once by id, after the usual duration learned from the first', async () => {
    const dir = sb.folder();
    const n = LIST_WINDOW_FAULT + 150;
    // The tasks finish together once all are made, so the list never shows the oldest 150 however long
    // making them takes; no task reaches the ceiling (6 x 5 s) meanwhile.
    await control(sb.url, 'faults', { listWindow: LIST_WINDOW_FAULT, taskDurationMs: 600_000 });
    const inputs = await makeImages(
      join(dir, 'in'),
      Array.from({ length: n }, (_, i) => `w${i}.png`),
      8,
    );
    const e = engine(join(dir, 'home'), n, 5000);
    try {
      const r = await e.startBatch({ tool: 'upscaler-precision', inputs, outDir: join(dir, 'out') });
      e.start();
      await until(() => e.status().counts.running === n);
      await control(sb.url, 'tasks/finish', {});
      await settle(e, r.jobIds);
      expect(new Set(e.store.byIds(r.jobIds).map((j) => j.state))).toEqual(new Set(['done']));
      const { byId } = await requests();
      // The 150 the list never shows, each asked at least once; a poll of each every tick (40 ms) would be thousands.
      expect(byId).toBeGreaterThanOrEqual(n - LIST_WINDOW_FAULT);
      expect(byId).toBeLessThan(2 * (n - LIST_WINDOW_FAULT));
    } finally {
      await e.close();
    }
  }, 60_000);

  it('while the list shows some of its tasks, probes the duration with one task left out, not three', async () => {
    const dir = sb.folder();
    const n = LIST_WINDOW_FAULT + 10;
    // Tasks that outlast the test, and a ceiling (6 x maxMs) beyond it: nothing is learned, no task is due by age.
    await control(sb.url, 'faults', { listWindow: LIST_WINDOW_FAULT, taskDurationMs: 120_000 });
    const inputs = await makeImages(
      join(dir, 'in'),
      Array.from({ length: n }, (_, i) => `p${i}.png`),
      8,
    );
    const e = openEngine({
      home: join(dir, 'home'),
      target: async () => ({ baseUrl: sb.url, apiKey: 'sandbox-owner' }),
      slugs: () => ({ ...DEFAULT_SLUGS }),
      settings: () => DEFAULT_SETTINGS,
      concurrency: n,
      poll: { firstMs: 40, minMs: 40, maxMs: { image: 20_000, text: 20_000, audio: 20_000, video: 20_000 } },
    });
    let before: { lists: number; byId: number } | null = null;
    try {
      await e.startBatch({ tool: 'upscaler-precision', inputs, outDir: join(dir, 'out') });
      e.start();
      // Once every task is created, the list leaves the oldest 10 out.
      await until(() => e.status().counts.running === n);
      before = await requests();
      await until(async () => (await requests()).lists >= before!.lists + 8);
    } finally {
      await e.close();
    }
    // Each list read asks the one probe at most (three probes: about three asks a list).
    const after = await requests();
    expect(after.byId - before!.byId).toBeGreaterThan(0);
    expect(after.byId - before!.byId).toBeLessThanOrEqual(after.lists - before!.lists + 1);
  }, 60_000);
});

describe('a lone task of a tool used before', () => {
  it('is first asked when its tool’s tasks usually end, in the next run on the data folder too', async () => {
    const dir = sb.folder();
    const home = join(dir, 'home');
    await control(sb.url, 'faults', { taskDurationMs: 400 });
    /** Reads (lists and by id) one task cost, each run a new engine, as a CLI `run` is. */
    async function lone(name: string): Promise<number> {
      const [input] = await makeImages(join(dir, name), [`${name}.png`], 8);
      const e = engine(home, 1);
      try {
        const before = await requests();
        const r = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: join(dir, `out-${name}`) });
        e.start();
        await settle(e, r.jobIds);
        expect(e.store.get(r.jobIds[0])!.state).toBe('done');
        const after = await requests();
        return after.lists + after.byId - before.lists - before.byId;
      } finally {
        await e.close();
      }
    }
    // Nothing known: asked every 40 ms until done at 400.
    expect(await lone('first')).toBeGreaterThanOrEqual(5);
    // Asked once, at about 400 ms (the task now ends at 200: that ask finds it done whatever the lag).
    await control(sb.url, 'faults', { taskDurationMs: 200 });
    expect(await lone('next')).toBe(1);
  }, 30_000);
});
