import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SLUGS, getTool, resolvePaths } from '../../shared/catalogue/index.ts';
import { start, testPng, until } from './helpers.ts';

/**
 * The load benchmark's read phase stalled: downloads of distinct results queue for 2 render slots,
 * and requests whose clients had given up still held their place (and were rendered for nobody),
 * while a woken waiter could be overtaken and sent to the back. Renders now leave the queue when
 * every request for them is gone, and freed slots go to the oldest waiter.
 */
let ctx: Awaited<ReturnType<typeof start>>;
beforeAll(async () => {
  ctx = await start({ taskDurationMs: 0 });
});
afterAll(() => ctx.sb.close());

const upscaler = resolvePaths(getTool('upscaler-precision'), DEFAULT_SLUGS);

async function results(n: number, side: number): Promise<string[]> {
  const image = (await testPng(side, side)).toString('base64');
  const urls: string[] = [];
  for (let i = 0; i < n; i++) {
    const c = await ctx.api.post(upscaler.create, { image, scale_factor: 4 });
    expect(c.status).toBe(200);
    const d = await ctx.api.get(upscaler.byId(c.body.data.task_id));
    urls.push(d.body.data.generated[0]);
  }
  return urls;
}

const renders = async () =>
  (await ctx.api.control('stats')).body.renders as { done: number; abandoned: number; running: number; queued: number };

describe('render queue under load', () => {
  it('drops the queued render of a request that went away, and renders the rest', async () => {
    const urls = await results(12, 512);
    const before = await renders();
    const acs = urls.map(() => new AbortController());
    const gets = urls.map((u, i) =>
      fetch(u, { signal: acs[i].signal })
        .then((r) => r.arrayBuffer())
        .catch(() => null),
    );
    // Two render, ten wait (each render is a 2048x2048 lanczos upscale).
    await until(async () => (await renders()).queued >= 10, 30_000);
    for (const ac of acs) ac.abort();
    await Promise.all(gets);
    const after = await until(async () => {
      const r = await renders();
      return r.running === 0 && r.queued === 0 ? r : undefined;
    }, 60_000);
    expect(after.abandoned - before.abandoned).toBeGreaterThanOrEqual(10);
    expect(after.done - before.done).toBeLessThanOrEqual(2);
    // The same results are still served, and correct, when asked again.
    const again = await fetch(urls[5]);
    expect(again.status).toBe(200);
    const meta = await sharp(Buffer.from(await again.arrayBuffer())).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 2048, 2048]);
  });

  it('completes many concurrent downloads of distinct results, each correct, within a bound of retries', async () => {
    const urls = await results(60, 64);
    const bodies = await Promise.all(
      urls.map(async (u) => {
        for (let attempt = 1; attempt <= 3; attempt++) {
          const r = await fetch(u);
          if (r.status === 200) return Buffer.from(await r.arrayBuffer());
          await r.arrayBuffer();
        }
        throw new Error(`${u} did not download in 3 attempts`);
      }),
    );
    for (const b of bodies) {
      const meta = await sharp(b).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['png', 256, 256]);
    }
    const r = await renders();
    expect([r.running, r.queued]).toEqual([0, 0]);
  });
});
