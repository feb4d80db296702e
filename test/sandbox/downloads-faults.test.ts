import { request } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_SLUGS, getTool, resolvePaths } from '../../shared/catalogue/index.ts';
import { bytesOf, start, testPng } from './helpers.ts';
import { uploadTo } from '../sandbox-upload.ts';

let ctx: Awaited<ReturnType<typeof start>>;
beforeAll(async () => {
  ctx = await start({ taskDurationMs: 0 });
});
afterAll(() => ctx.sb.close());
beforeEach(async () => {
  await ctx.api.control('reset', {});
});

async function blob(bytes: number): Promise<string> {
  const r = await ctx.api.control('blobs', { bytes });
  expect(r.status).toBe(200);
  return r.body.url;
}

async function completedImageUrl(): Promise<string> {
  const p = resolvePaths(getTool('upscaler-precision'), DEFAULT_SLUGS);
  const c = await ctx.api.post(p.create, { image: (await testPng()).toString('base64') });
  const d = await ctx.api.get(p.byId(c.body.data.task_id));
  return d.body.data.generated[0];
}

describe('downloads', () => {
  it('serves ranges (206 + Content-Range), HEAD, and 416 outside the body', async () => {
    const url = await blob(1000);
    const full = await bytesOf(url);
    expect(full.status).toBe(200);
    expect(full.bytes.length).toBe(1000);
    expect(full.headers.get('accept-ranges')).toBe('bytes');
    const part = await bytesOf(url, { range: 'bytes=100-199' });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe('bytes 100-199/1000');
    expect(part.bytes.equals(full.bytes.subarray(100, 200))).toBe(true);
    const tail = await bytesOf(url, { range: 'bytes=900-' });
    expect(tail.bytes.equals(full.bytes.subarray(900))).toBe(true);
    const head = await fetch(url, { method: 'HEAD' });
    expect(head.headers.get('content-length')).toBe('1000');
    expect((await bytesOf(url, { range: 'bytes=5000-' })).status).toBe(416);
    expect((await bytesOf(url)).bytes.equals(full.bytes)).toBe(true); // deterministic
  });
  it('streams a large blob without holding it (64 MiB, checked by range at the end)', async () => {
    const size = 64 * 1024 * 1024;
    const url = await blob(size);
    const res = await fetch(url);
    let n = 0;
    for await (const chunk of res.body!) n += (chunk as Uint8Array).length;
    expect(n).toBe(size);
    const end = await bytesOf(url, { range: `bytes=${size - 10}-` });
    expect(end.bytes.length).toBe(10);
  });
  it('serves rendered results with ranges too', async () => {
    const url = await completedImageUrl();
    const full = await bytesOf(url);
    const part = await bytesOf(url, { range: 'bytes=0-7' });
    expect(part.status).toBe(206);
    expect(part.bytes.equals(full.bytes.subarray(0, 8))).toBe(true);
    expect(part.bytes.subarray(1, 4).toString('latin1')).toBe('PNG');
  });
  it('gives 410 for expired result URLs', async () => {
    const url = await completedImageUrl();
    const burl = await blob(10);
    await ctx.api.control('faults', { expireResultUrls: true });
    const r = await fetch(url);
    expect(r.status).toBe(410);
    expect((await r.json()).message).toMatch(/expired/);
    expect((await fetch(burl)).status).toBe(410);
  });
  it('truncates downloads on demand: full Content-Length announced, connection cut short', async () => {
    const url = await blob(200_000);
    await ctx.api.control('faults', { truncateDownloads: true });
    const received = await new Promise<{ length: string | undefined; got: number; aborted: boolean }>((resolve) => {
      const req = request(url, (res) => {
        let got = 0;
        let aborted = false;
        res.on('data', (c) => (got += c.length));
        res.on('aborted', () => (aborted = true));
        res.on('error', () => (aborted = true));
        res.on('close', () => resolve({ length: res.headers['content-length'], got, aborted }));
      });
      req.on('error', () => resolve({ length: undefined, got: -1, aborted: true }));
      req.end();
    });
    expect(received.length).toBe('200000');
    expect(received.got).toBeGreaterThan(0);
    expect(received.got).toBeLessThan(200_000);
    expect(received.aborted).toBe(true);
  });
  it('slows downloads on demand', async () => {
    const url = await blob(20_000);
    await ctx.api.control('faults', { slowDownloadBytesPerSec: 40_000 });
    const t0 = Date.now();
    const r = await bytesOf(url);
    expect(r.bytes.length).toBe(20_000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(400);
  });
  it('serves uploads at loopback URLs, with ranges', async () => {
    const body = await uploadTo(ctx.sb.url, Buffer.from('0123456789'), 'video/mp4');
    expect(body.id).toMatch(/^upl_vid_/);
    expect(body.url.startsWith(ctx.sb.url)).toBe(true);
    const part = await bytesOf(body.url, { range: 'bytes=2-4' });
    expect(part.bytes.toString()).toBe('234');
    expect((await uploadTo(ctx.sb.url, await testPng(), 'image/png')).id).toMatch(/^upl_(?!vid_)/);
  });
});

describe('faults on demand', () => {
  it('merges partial fault patches and answers the full set; rejects bad values', async () => {
    const r = await ctx.api.control('faults', { rate500: 0.5 });
    expect(r.body).toMatchObject({ rate500: 0.5, rate429: 0, truncateDownloads: false, taskDurationMs: 0 });
    const r2 = await ctx.api.control('faults', { rate503: 0.25 });
    expect(r2.body).toMatchObject({ rate500: 0.5, rate503: 0.25 });
    expect((await ctx.api.control('faults', { rate500: 2 })).status).toBe(400);
    expect((await ctx.api.control('faults', { nonsense: 1 })).status).toBe(400);
  });
  it('injects 429 with Retry-After, 500 and 503 with message bodies', async () => {
    await ctx.api.control('faults', { rate429: 1, retryAfterSec: 7 });
    const a = await ctx.api.get('/v1/ai/loras');
    expect(a.status).toBe(429);
    expect(a.headers.get('retry-after')).toBe('7');
    expect(a.body.message).toBe('Too many requests');
    await ctx.api.control('faults', { rate429: 0, rate500: 1 });
    expect((await ctx.api.get('/v1/ai/loras')).status).toBe(500);
    await ctx.api.control('faults', { rate500: 0, rate503: 1 });
    const c = await ctx.api.get('/v1/ai/loras');
    expect(c.status).toBe(503);
    expect(c.body.message).toMatch(/Service Unavailable/);
    // The control API is never faulted.
    expect((await ctx.api.control('stats')).status).toBe(200);
  });
  it('applies a partial rate to about that share of requests', async () => {
    await ctx.api.control('faults', { rate503: 0.3 });
    let n = 0;
    for (let i = 0; i < 200; i++) if ((await ctx.api.get('/v1/analytics/team-groups')).status === 503) n++;
    expect(n).toBeGreaterThan(30);
    expect(n).toBeLessThan(90);
  });
  it('resets connections on demand', async () => {
    await ctx.api.control('faults', { resetRate: 1 });
    await expect(
      fetch(`${ctx.sb.url}/v1/ai/loras`, { headers: { 'x-magnific-api-key': 'sandbox-owner' } }),
    ).rejects.toThrow();
    await ctx.api.control('reset', {});
    expect((await ctx.api.get('/v1/ai/loras')).status).toBe(200);
  });
  it('faults result downloads too', async () => {
    const url = await blob(10);
    await ctx.api.control('faults', { rate503: 1 });
    expect((await fetch(url)).status).toBe(503);
  });
});

describe('stats', () => {
  it('counts requests per route pattern and creates per tool per key; reset zeroes them and keeps tasks', async () => {
    const p = resolvePaths(getTool('music'), DEFAULT_SLUGS);
    const c = await ctx.api.post(p.create, { prompt: 'x', music_length_seconds: 30 }, 'sandbox-admin');
    await ctx.api.post(p.create, { prompt: 'y', music_length_seconds: 30 }, 'sandbox-admin');
    await ctx.api.post(p.create, { prompt: 'z', music_length_seconds: 30 }, 'sandbox-owner');
    await ctx.api.get(p.byId(c.body.data.task_id), 'sandbox-admin');
    await ctx.api.get('/v1/ai/apps/pS7kQ2xa');
    const s = (await ctx.api.control('stats')).body;
    expect(s.creates.music).toEqual({ 'sandbox-admin': 2, 'sandbox-owner': 1 });
    expect(s.requests['POST /v1/ai/music-generation']).toBe(3);
    expect(s.requests['GET /v1/ai/music-generation/{task-id}']).toBe(1);
    expect(s.requests['GET /v1/ai/apps/:appId']).toBe(1);
    const tasks = s.tasks;
    expect(tasks).toBeGreaterThanOrEqual(3);
    await ctx.api.control('reset', {});
    const s2 = (await ctx.api.control('stats')).body;
    expect(s2.creates).toEqual({});
    expect(s2.tasks).toBe(tasks);
    expect((await ctx.api.get(p.byId(c.body.data.task_id), 'sandbox-admin')).status).toBe(200);
  });

  it('a reset with tasks: true forgets the tasks as well, so lists start empty; a bad value is named', async () => {
    const p = resolvePaths(getTool('music'), DEFAULT_SLUGS);
    const c = await ctx.api.post(p.create, { prompt: 'x', music_length_seconds: 30 }, 'sandbox-admin');
    expect((await ctx.api.control('reset', { tasks: 'yes' })).body.invalid_params[0].field).toBe('tasks');
    await ctx.api.control('reset', { tasks: true });
    expect((await ctx.api.control('stats')).body.tasks).toBe(0);
    expect((await ctx.api.get(p.byId(c.body.data.task_id), 'sandbox-admin')).status).toBe(404);
    expect((await ctx.api.get(p.list, 'sandbox-admin')).body.data).toEqual([]);
  });
});
