// The described operations the app's catalogue does not curate, over real HTTP: the synchronous
// creates in their documented shapes, media inputs found from the schema, the lists and shared
// by-ids a task is read from, and what an uncurated create is charged and capped at.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { findOperation, problemsOf } from '../../shared/official/index.ts';
import { CREDIT_PRICES } from '../../shared/service-limits.ts';
import { CUTOUT_URL_TTL_MS, PREVIEW_PIXELS } from '../../electron/sandbox/at-once.ts';
import { AUDIO_ASSET, VIDEO_ASSET } from '../../electron/sandbox/render.ts';
import { uploadTo } from '../sandbox-upload.ts';
import { bytesOf, fakeClock, start, testPng, type Answer } from './helpers.ts';

const clock = fakeClock();
let ctx: Awaited<ReturnType<typeof start>>;

beforeAll(async () => {
  ctx = await start({ now: clock.now, taskDurationMs: 1000 });
});
afterAll(() => ctx.sb.close());
beforeEach(async () => {
  await ctx.api.control('reset', { tasks: true });
});

/** An 800x600 product shot: a blue square on a white ground. */
async function productShot(): Promise<Buffer> {
  const square = await sharp({ create: { width: 300, height: 300, channels: 3, background: '#1040c0' } })
    .png()
    .toBuffer();
  return sharp({ create: { width: 800, height: 600, channels: 3, background: '#ffffff' } })
    .composite([{ input: square, left: 250, top: 150 }])
    .png()
    .toBuffer();
}

async function form(path: string, fields: Record<string, string>, key = 'sandbox-owner'): Promise<Answer> {
  const res = await fetch(ctx.sb.url + path, {
    method: 'POST',
    headers: { 'x-magnific-api-key': key, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: JSON.parse(text), text };
}

const named = (a: Answer) => a.body.invalid_params.map((p: { field: string }) => p.field);
const schemaOf = (path: string) => findOperation('POST', path)!.responses!['200'].schema!;

describe('the synchronous creates answer their result at once, in their documented shapes', () => {
  it('background removal takes a form and answers URLs of a real PNG with alpha, for five minutes', async () => {
    const shot = await productShot();
    const { url } = await uploadTo(ctx.sb.url, shot, 'image/png');
    const a = await form('/v1/ai/beta/remove-background', { image_url: url });
    expect(a.status).toBe(200);
    expect(problemsOf(schemaOf('/v1/ai/beta/remove-background'), a.body)).toEqual([]);
    expect(a.body.url).toBe(a.body.high_resolution);
    const high = await bytesOf(a.body.high_resolution);
    const { data, info } = await sharp(high.bytes).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height, info.channels]).toEqual([800, 600, 4]);
    const alpha = (x: number, y: number) => data[(y * info.width + x) * 4 + 3];
    expect([alpha(5, 5), alpha(400, 300)]).toEqual([0, 255]);
    const preview = await sharp((await bytesOf(a.body.preview)).bytes).metadata();
    expect(preview.width! * preview.height!).toBeLessThanOrEqual(PREVIEW_PIXELS);
    expect([preview.format, preview.hasAlpha]).toEqual(['png', true]);
    expect((await bytesOf(a.body.original)).bytes.equals(shot)).toBe(true);
    clock.advance(CUTOUT_URL_TTL_MS + 1000);
    expect((await bytesOf(a.body.high_resolution)).status).toBe(410);
  });

  it('background removal refuses a JSON body, a missing image_url and one that is no image, by name', async () => {
    const json = await ctx.api.post('/v1/ai/beta/remove-background', { image_url: 'http://127.0.0.1/x.png' });
    expect([json.status, named(json)]).toEqual([400, ['body']]);
    const missing = await form('/v1/ai/beta/remove-background', {});
    expect([missing.status, named(missing)]).toEqual([400, ['image_url']]);
    const { url } = await uploadTo(ctx.sb.url, Buffer.from('plain text, not a picture'), 'image/png');
    const bad = await form('/v1/ai/beta/remove-background', { image_url: url });
    expect([bad.status, named(bad)]).toEqual([400, ['image_url']]);
  });

  it('the classifier answers both classes with probabilities that sum to 1, the same for the same image', async () => {
    const image = (await testPng(256, 256)).toString('base64');
    const a = await ctx.api.post('/v1/ai/classifier/image', { image });
    expect(a.status).toBe(200);
    expect(problemsOf(schemaOf('/v1/ai/classifier/image'), a.body)).toEqual([]);
    expect(a.body.data.map((c: { class_name: string }) => c.class_name).sort()).toEqual(['ai', 'not_ai']);
    const sum = a.body.data.reduce((s: number, c: { probability: number }) => s + c.probability, 0);
    expect(sum).toBeCloseTo(1, 5);
    expect((await ctx.api.post('/v1/ai/classifier/image', { image })).body).toEqual(a.body);
    const bad = await ctx.api.post('/v1/ai/classifier/image', { image: 'bm90IGFuIGltYWdlIGF0IGFsbA==' });
    expect([bad.status, named(bad)]).toEqual([400, ['image']]);
  });

  it('the classic text-to-image answers base64 PNGs of the size asked, with its meta', async () => {
    const body = { prompt: 'a lighthouse at dusk', num_images: 2, seed: 7, image: { size: 'widescreen_16_9' } };
    const a = await ctx.api.post('/v1/ai/text-to-image', body);
    expect(a.status).toBe(200);
    expect(problemsOf(schemaOf('/v1/ai/text-to-image'), a.body)).toEqual([]);
    expect(a.body.data).toHaveLength(2);
    const metas = await Promise.all(
      a.body.data.map((d: { base64: string }) => sharp(Buffer.from(d.base64, 'base64')).metadata()),
    );
    expect(metas.map((m) => [m.format, m.width, m.height])).toEqual([
      ['png', 1024, 576],
      ['png', 1024, 576],
    ]);
    expect(a.body.meta).toMatchObject({ prompt: body.prompt, seed: 7, image: { size: 'widescreen_16_9' } });
    expect(a.body.data[0].base64).not.toBe(a.body.data[1].base64);
  });

  it('are charged and counted like tasks: the default price, in the stats and the credit usage', async () => {
    const image = (await testPng(64, 64)).toString('base64');
    expect((await ctx.api.post('/v1/ai/classifier/image', { image }, 'sandbox-business')).status).toBe(200);
    const stats = (await ctx.api.control('stats')).body;
    expect(stats.charges['/v1/ai/classifier/image']).toEqual({ uses: 1, credits: CREDIT_PRICES['*'] });
    const day = new Date(clock.now()).toISOString().slice(0, 10);
    const usage = await ctx.api.post(
      '/v1/analytics/team-credit-usage',
      { start_date: day, end_date: day },
      'sandbox-business',
    );
    const tools = usage.body.data.flatMap((d: { consumptions: unknown[] }) => d.consumptions);
    expect(tools).toEqual([expect.objectContaining({ tool: 'AI Image Models', user_credits: CREDIT_PRICES['*'] })]);
  });
});

describe('media inputs of a create the catalogue does not name are found from its schema', () => {
  it('decodes nested and listed inputs, and refuses an unreadable one naming its field', async () => {
    const image = await uploadTo(ctx.sb.url, await testPng(), 'image/png');
    const text = await uploadTo(ctx.sb.url, Buffer.from('not a picture at all'), 'image/png');
    const path = '/v1/ai/video/kling-advanced-custom-elements';
    const body = (refer: string, frontal = image.url) => ({
      element_name: 'fox',
      element_description: 'a red fox',
      reference_type: 'image_refer',
      element_image_list: { frontal_image: frontal, refer_images: [{ image_url: image.url }, { image_url: refer }] },
    });
    expect((await ctx.api.post(path, body(image.url))).status).toBe(200);
    const bad = await ctx.api.post(path, body(text.url, 'bm90IGFuIGltYWdl'));
    expect([bad.status, named(bad)]).toEqual([
      400,
      ['element_image_list.frontal_image', 'element_image_list.refer_images.1.image_url'],
    ]);
    // A picture where a video belongs is refused as what it is not.
    const asVideo = await ctx.api.post('/v1/ai/video-edit/wan-2-7', { video_url: image.url, prompt: 'snow' });
    expect(asVideo.status).toBe(400);
    expect(asVideo.body.invalid_params).toEqual([
      expect.objectContaining({ field: 'video_url', reason: expect.stringContaining('not a readable video') }),
    ]);
  });

  it('reads a video URL for its kind by its first bytes: a clip past the 25 MB image limit is taken', async () => {
    const sample = readFileSync(VIDEO_ASSET);
    const long = Buffer.concat([sample, Buffer.alloc(26 * 1024 * 1024 - sample.length)]);
    const video = await uploadTo(ctx.sb.url, long, 'video/mp4');
    const made = await ctx.api.post('/v1/ai/video-edit/wan-2-7', { video_url: video.url, prompt: 'snow' });
    expect(made.status).toBe(200);
    expect((await ctx.api.get(`/__sandbox/tasks/${made.body.data.task_id}`, null)).body.sent.video_url).toBe(video.url);
  });

  it('draws an image result from the input image, and answers an improved prompt as text', async () => {
    const input = await testPng(320, 200);
    const mask = await testPng(320, 200);
    const made = await ctx.api.post('/v1/ai/ideogram-image-edit', {
      prompt: 'add a moon',
      image: input.toString('base64'),
      mask: mask.toString('base64'),
    });
    expect(made.status).toBe(200);
    const improved = await ctx.api.post('/v1/ai/improve-prompt', { prompt: 'a cat on a roof', type: 'video' });
    await ctx.api.control('tasks/finish', {});
    const edit = await ctx.api.get(`/v1/ai/ideogram-image-edit/${made.body.data.task_id}`);
    const result = await sharp((await bytesOf(edit.body.data.generated[0])).bytes).metadata();
    expect([result.format, result.width, result.height]).toEqual(['png', 320, 200]);
    const text = await ctx.api.get(`/v1/ai/improve-prompt/${improved.body.data.task_id}`);
    expect(text.body.data.generated).toEqual([expect.stringMatching(/^a cat on a roof, .*camera motion/)]);
  });
});

describe('results of the kind and format asked', () => {
  it('an image create that offers WebP makes a WebP file when asked', async () => {
    const made = await ctx.api.post('/v1/ai/text-to-image/gpt-image-2', { prompt: 'a kite', output_format: 'webp' });
    expect(made.status).toBe(200);
    await ctx.api.control('tasks/finish', {});
    const done = await ctx.api.get(`/v1/ai/text-to-image/gpt-image-2/${made.body.data.task_id}`);
    const url: string = done.body.data.generated[0];
    expect(url).toMatch(/\.webp$/);
    expect((await sharp((await bytesOf(url)).bytes).metadata()).format).toBe('webp');
  });
});

describe('the icon render of a finished text-to-icon task', () => {
  it('answers the task with its icon as PNG or SVG, and refuses another format or an unfinished task', async () => {
    const hooks = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((r) => hooks.listen(0, '127.0.0.1', r));
    const webhook_url = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hook`;
    const made = await ctx.api.post('/v1/ai/text-to-icon', { prompt: 'a paper plane', webhook_url });
    expect(made.status).toBe(200);
    const render = (format: string, key?: string) =>
      ctx.api.call('POST', `/v1/ai/text-to-icon/${made.body.data.task_id}/render/${format}`, { key });
    const early = await render('svg');
    expect([early.status, named(early)]).toEqual([400, ['task-id']]);
    await ctx.api.control('tasks/finish', {});
    const svg = await render('svg');
    expect(svg.body.data).toMatchObject({ task_id: made.body.data.task_id, status: 'COMPLETED' });
    const file = await bytesOf(svg.body.data.generated[0]);
    expect([file.status, file.headers.get('content-type')]).toEqual([200, 'image/svg+xml']);
    expect((await sharp(file.bytes).metadata()).format).toBe('svg');
    const png = await render('png');
    expect((await sharp((await bytesOf(png.body.data.generated[0])).bytes).metadata()).format).toBe('png');
    expect(named(await render('gif'))).toEqual(['format']);
    expect((await render('png', 'sandbox-admin')).status).toBe(404);
    hooks.close();
  });
});

describe('a task is read wherever the description reads it', () => {
  const ids = async (path: string) =>
    (await ctx.api.get(path)).body.data.map((t: { task_id: string }) => t.task_id) as string[];

  it("in its family's list and its per-resolution list, and by id under the family", async () => {
    const made = await ctx.api.post('/v1/ai/video/seedance-2-pro-720p', { prompt: 'waves at night' });
    expect(made.status).toBe(200);
    const id = made.body.data.task_id;
    expect(await ids('/v1/ai/video/seedance-2-pro')).toEqual([id]);
    expect(await ids('/v1/ai/video/seedance-2-pro-720p')).toEqual([id]);
    expect(await ids('/v1/ai/video/seedance-2-pro-1080p')).toEqual([]);
    expect(await ids('/v1/ai/video/seedance-2-fast')).toEqual([]);
    expect((await ctx.api.get(`/v1/ai/video/seedance-2-pro/${id}`)).body.data.task_id).toBe(id);
  });

  it('by a by-id two creates share (kling-elements), each in its own list only', async () => {
    const image = (await testPng(512, 512)).toString('base64');
    const pro = await ctx.api.post('/v1/ai/image-to-video/kling-elements-pro', { images: [image] });
    const std = await ctx.api.post('/v1/ai/image-to-video/kling-elements-std', { images: [image] });
    expect([pro.status, std.status]).toEqual([200, 200]);
    for (const t of [pro, std])
      expect((await ctx.api.get(`/v1/ai/image-to-video/kling-elements/${t.body.data.task_id}`)).status).toBe(200);
    expect(await ids('/v1/ai/image-to-video/kling-elements-pro')).toEqual([pro.body.data.task_id]);
    expect(await ids('/v1/ai/image-to-video/kling-elements-std')).toEqual([std.body.data.task_id]);
    // A broader family (kling-v2) is another model's list: it does not show them.
    expect(await ids('/v1/ai/image-to-video/kling-v2')).toEqual([]);
  });
});

describe('prices and caps cover the creates the catalogue does not name', () => {
  it('charges the default price, and a cap set for its path applies', async () => {
    const limitsOn = { burstPerSec: 1000, burstWindowSec: 1, averagePerSec: 1000, averageWindowSec: 1 };
    const body = { prompt: 'a cat', type: 'image' };
    // A synchronous create's bad input takes nothing from its cap either.
    const caps = { business: {}, enterprise: { '*': 100, '/v1/ai/improve-prompt': 1, '/v1/ai/classifier/image': 1 } };
    await ctx.api.control('limits', { limits: { ...limitsOn, caps } });
    expect((await ctx.api.post('/v1/ai/classifier/image', { image: 'bm90IGFuIGltYWdl' })).status).toBe(400);
    const image = (await testPng(32, 32)).toString('base64');
    expect((await ctx.api.post('/v1/ai/classifier/image', { image })).status).toBe(200);
    expect((await ctx.api.post('/v1/ai/classifier/image', { image })).status).toBe(429);
    expect((await ctx.api.post('/v1/ai/improve-prompt', body)).status).toBe(200);
    expect((await ctx.api.post('/v1/ai/improve-prompt', body)).status).toBe(429);
    const stats = (await ctx.api.control('stats')).body;
    expect(stats.charges['/v1/ai/improve-prompt']).toEqual({ uses: 1, credits: CREDIT_PRICES['*'] });
  });

  it('reports each in the credit usage under what it generates (voiceover: audio, lip-sync: video)', async () => {
    const video = await uploadTo(ctx.sb.url, readFileSync(VIDEO_ASSET), 'video/mp4');
    const audio = await uploadTo(ctx.sb.url, readFileSync(AUDIO_ASSET), 'audio/mpeg');
    const key = 'sandbox-business';
    const voice = await ctx.api.post('/v1/ai/voiceover/elevenlabs-turbo-v2-5', { text: 'hello', voice_id: 'v1' }, key);
    const lips = await ctx.api.post('/v1/ai/lip-sync/latent-sync', { video_url: video.url, audio_url: audio.url }, key);
    expect([voice.status, lips.status]).toEqual([200, 200]);
    const day = new Date(clock.now()).toISOString().slice(0, 10);
    const usage = await ctx.api.post('/v1/analytics/team-credit-usage', { start_date: day, end_date: day }, key);
    const tools = usage.body.data.flatMap((d: { consumptions: { tool: string }[] }) =>
      d.consumptions.map((c) => c.tool),
    );
    expect(tools.sort()).toEqual(['AI Audio Models', 'AI Video Models']);
  });
});
