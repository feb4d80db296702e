import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_SLUGS,
  defaultsOf,
  resolvePaths,
  TOOLS,
  type Field,
  type ToolEntry,
} from '../../shared/catalogue/index.ts';
import { bodyOf } from '../../electron/core/api/tools.ts';
import { UPSCALE_MAX_SIDE } from '../../electron/sandbox/render.ts';
import { LIST_WINDOW_FAULT } from '../../electron/sandbox/tool-routes.ts';
import { bytesOf, fakeClock, start, testPng, until } from './helpers.ts';
import { makeClip, makeVoice, tempDir } from '../media/fixtures.ts';
import { uploadTo } from '../sandbox-upload.ts';

const clock = fakeClock();
let ctx: Awaited<ReturnType<typeof start>>;
let png: Buffer;
let refPng: Buffer;
let imageUrl: string;
let refImageUrl: string;
let videoId: string;
let videoUrl: string;
let audioUrl: string;
let clips: Awaited<ReturnType<typeof tempDir>>;
const DURATION = 1000;

/** Uploads a file through the control API, as the app's engine uploads a local reference: its `upl_vid_` id. */
async function upload(bytes: Buffer, type = 'video/mp4'): Promise<string> {
  return (await uploadTo(ctx.sb.url, bytes, type)).id;
}

beforeAll(async () => {
  ctx = await start({ now: clock.now, taskDurationMs: DURATION });
  png = await testPng();
  refPng = await testPng(256, 256);
  imageUrl = (await uploadTo(ctx.sb.url, png, 'image/png')).url;
  // 256x256: above the least any tool takes (WAN's 240x240 start frame).
  refImageUrl = (await uploadTo(ctx.sb.url, refPng, 'image/png')).url;
  // A clip within every reference-video limit (2-15 s, 24-60 fps, 409,600+ pixels): the Sandbox measures what it is given.
  clips = await tempDir();
  const clip = await readFile(await makeClip(clips.dir, 'ok', { w: 640, h: 640, fps: 24, sec: 2.5 }));
  videoId = await upload(clip);
  videoUrl = (await uploadTo(ctx.sb.url, clip, 'video/mp4')).url;
  audioUrl = (await uploadTo(ctx.sb.url, await readFile(await makeVoice(clips.dir)), 'audio/wav')).url;
});
afterAll(async () => {
  await ctx.sb.close();
  await clips.cleanup();
});

/** A minimal valid body for any tool, built from its catalogue fields. */
function minimalBody(tool: ToolEntry): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const media = (f: Extract<Field, { kind: 'media' | 'mediaList' }>) => {
    if (f.media === 'video') return f.encodings.includes('upload') ? videoId : videoUrl;
    if (f.media === 'audio') return audioUrl;
    // 256x256: the least the spec lets through anywhere (5.0 edit references).
    if (f.encodings.includes('base64')) return refPng.toString('base64');
    if (f.encodings.includes('url')) return refImageUrl;
    return `data:image/png;base64,${png.toString('base64')}`;
  };
  for (const f of tool.fields) {
    if (!f.required || f.in === 'path') continue;
    if ('default' in f && f.default !== undefined) body[f.name] = f.default;
    else if (f.kind === 'text') body[f.name] = 'a lighthouse at dusk, cinematic';
    else if (f.kind === 'media') body[f.name] = media(f);
    else if (f.kind === 'mediaList') body[f.name] = [media(f)];
  }
  // A request that must carry one of several fields (2.5: prompt or shots) gets its prompt.
  for (const r of tool.rules ?? [])
    if (r.kind === 'anyOf' && r.fields.includes('prompt')) body.prompt = 'a lighthouse at dusk';
  return body;
}

const pathsOf = (t: ToolEntry) => resolvePaths(t, DEFAULT_SLUGS, {});

describe('every task tool of the catalogue', () => {
  it.each(TOOLS.map((t) => [t.id, t] as const))('%s: create, by-id, list, complete', async (_id, tool) => {
    const p = pathsOf(tool);
    const created = await ctx.api.post(p.create, minimalBody(tool));
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const { task_id, status, generated } = created.body.data;
    expect(task_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(status).toBe('CREATED');
    expect(generated).toEqual([]);
    const list = await ctx.api.get(p.list);
    expect(list.status).toBe(200);
    expect(list.body.data[0]).toMatchObject({ task_id, status: 'CREATED', generated: [] });
    clock.advance(DURATION);
    const done = await ctx.api.get(p.byId(task_id));
    expect(done.body.data.status).toBe('COMPLETED');
    expect(done.body.data.generated.length).toBeGreaterThan(0);
    if (tool.result === 'text') {
      expect(done.body.data.generated[0]).toMatch(/image/);
      return;
    }
    const res = await fetch(done.body.data.generated[0], { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(
      { image: /^image\//, video: /^video\//, audio: /^audio\// }[tool.result],
    );
  });
});

describe('validation (400 naming the field)', () => {
  const tool = (id: string) => TOOLS.find((t) => t.id === id)!;
  const expectInvalid = async (
    id: string,
    body: Record<string, unknown>,
    field: string,
    params: Record<string, unknown> = {},
  ) => {
    const r = await ctx.api.post(resolvePaths(tool(id), DEFAULT_SLUGS, params).create, body);
    expect(r.status, JSON.stringify(body).slice(0, 200)).toBe(400);
    expect(r.headers.get('content-type')).toContain('application/problem+json');
    expect(
      r.body.invalid_params.map((p: any) => p.field),
      JSON.stringify(r.body),
    ).toContain(field);
    for (const p of r.body.invalid_params) expect(p.name).toBe(p.field);
  };
  it('enforces the spec bounds', async () => {
    await expectInvalid('change-camera', { image: imageUrl, horizontal_angle: 361 }, 'horizontal_angle');
    await expectInvalid('change-camera', { image: imageUrl, vertical_angle: -31 }, 'vertical_angle');
    await expectInvalid('change-camera', { image: imageUrl, zoom: 11 }, 'zoom');
    await expectInvalid('change-camera', { image: imageUrl, seed: 0 }, 'seed');
    await expectInvalid('upscaler-precision', { image: imageUrl, scale_factor: 17 }, 'scale_factor');
    await expectInvalid('skin-faithful', { image: imageUrl, sharpen: 101 }, 'sharpen');
    await expectInvalid('context-t2i', { prompt: 'x', guidance: 11 }, 'guidance');
    await expectInvalid('context-t2i', { prompt: 'x', steps: 0 }, 'steps');
    await expectInvalid('video-2x', { prompt: 'x', duration: 16 }, 'duration', { resolution: '720p' });
    await expectInvalid('video-25', { prompt: 'x', duration: 31 }, 'duration', { resolution: '1080p' });
    await expectInvalid('quality-image', { prompt: 'x', num_images: 11 }, 'num_images');
    await expectInvalid('music', { prompt: 'x'.repeat(2501) }, 'prompt');
    await expectInvalid('music', { prompt: 'x' }, 'music_length_seconds');
    await expectInvalid('editor', { prompt: 'x', reference_images: Array(6).fill(imageUrl) }, 'reference_images');
    await expectInvalid('hires', { prompt: 'x', resolutoin: '2k' }, 'resolutoin');
  });
  it("says in words what is wrong with an empty prompt and with the generator's styling bounds", async () => {
    const reasons = async (id: string, body: Record<string, unknown>) => statusAndReasons(await postTo(id, body));
    expect(await reasons('music-variants', { prompt: 'short' })).toEqual([
      400,
      ['prompt: must be at least 10 characters'],
    ]);
    expect(await reasons('hires', { prompt: 'x', styling: { colors: [] } })).toEqual([
      400,
      ['styling.colors: must have at least 1 item'],
    ]);
    expect(
      await reasons('hires', {
        prompt: 'x',
        styling: { colors: [{ color: '#FFFFFF', weight: 0.01 }], styles: [{ name: 'Watercolor', strength: 201 }] },
      }),
    ).toEqual([
      400,
      ['styling.styles.0.strength: must be at most 200', 'styling.colors.0.weight: must be at least 0.05'],
    ]);
    // The official description: a character's id is a string, its strength required, colours upper case.
    expect(await reasons('hires', { prompt: 'x', styling: { characters: [{ id: 6 }] } })).toEqual([
      400,
      ['styling.characters.0.strength: is required', 'styling.characters.0.id: must be of type string'],
    ]);
    expect(await reasons('hires', { prompt: 'x', styling: { colors: [{ color: '#ffffff', weight: 0.5 }] } })).toEqual([
      400,
      ['styling.colors.0.color: must match ^#[0-9A-F]{6}$'],
    ]);
  });
  it('refuses a resolution in the body of a video family, whose create path already chooses it', async () => {
    expect(
      statusAndReasons(await postTo('video-2x', { prompt: 'x', resolution: '1080p' }, { resolution: '720p' })),
    ).toEqual([400, ['resolution: is not a parameter of this endpoint']]);
    expect(
      statusAndReasons(await postTo('video-25', { prompt: 'x', resolution: '720p' }, { resolution: '720p' }))[0],
    ).toBe(400);
  });
  it('rejects the video input combinations at creation', async () => {
    const b64 = png.toString('base64');
    await expectInvalid('video-2x', { prompt: 'x', image_end: b64 }, 'image_end', { resolution: '720p' });
    await expectInvalid('i2v-endframe', { prompt: 'x', image_end: b64 }, 'image');
    await expectInvalid('i2v-endframe-fast', { prompt: 'x', image_end: b64 }, 'image');
  });
  it('refuses a citation of media the family takes none of, or beyond the list, naming the prompt', async () => {
    const b64 = png.toString('base64');
    const reasons = async (id: string, body: Record<string, unknown>) => {
      const r = await ctx.api.post(resolvePaths(tool(id), DEFAULT_SLUGS, { resolution: '720p' }).create, body);
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      return r.body.invalid_params.map((p: { field: string; reason: string }) => `${p.field}: ${p.reason}`);
    };
    expect(await reasons('video-25', { prompt: 'like @Image1, moving as @Video1', reference_images: [b64] })).toEqual([
      'prompt: @Video1 cites a reference video, but video 2.5 takes none',
    ]);
    expect(
      await reasons('video-25', {
        prompt: 'a pier',
        shots: [{ prompt: '@Image3 at dusk', duration: 4 }],
        duration: 4,
        reference_images: [b64, b64],
      }),
    ).toEqual(['shots.0.prompt: @Image3 cites reference image 3, but only 2 are given']);
  });
  it('holds video 2.x to its schema in the newer description: 5 or 10 s, 2,000 characters, no sound or reference fields', async () => {
    const at = { resolution: '720p' };
    const post = (body: Record<string, unknown>) => postTo('video-2x', body, at);
    expect((await post({ prompt: 'x'.repeat(2000), duration: 10 })).status).toBe(200);
    expect(statusAndReasons(await post({ prompt: 'x', duration: 4 }))).toEqual([
      400,
      ['duration: must be one of 5, 10'],
    ]);
    expect(statusAndReasons(await post({ prompt: 'x'.repeat(2001) }))).toEqual([
      400,
      ['prompt: must be at most 2000 characters'],
    ]);
    for (const field of ['sound_effects', 'no_music', 'reference_images', 'reference_videos'])
      expect(
        statusAndReasons(await post({ prompt: 'x', [field]: field.startsWith('ref') ? [imageUrl] : true })),
      ).toEqual([400, [`${field}: is not a parameter of this endpoint`]]);
    // What the app sends by default is what the schema takes.
    const defaults = bodyOf(tool('video-2x'), { ...defaultsOf(tool('video-2x')), prompt: 'a pier at dawn' });
    expect((await post(defaults)).status, JSON.stringify(defaults)).toBe(200);
  });
  it('counts prompt characters as code points: 40,000 emoji over prompt and shots fit the 2.5 limit, 40,001 do not', async () => {
    const clapper = '\u{1F3AC}';
    const create = (shot: number) =>
      ctx.api.post(resolvePaths(tool('video-25'), DEFAULT_SLUGS, { resolution: '720p' }).create, {
        prompt: clapper.repeat(20_000),
        shots: [{ prompt: clapper.repeat(shot), duration: 4 }],
        duration: 4,
      });
    expect((await create(20_000)).status).toBe(200);
    const over = await create(20_001);
    expect([over.status, over.body.invalid_params]).toEqual([
      400,
      [{ name: 'prompt', field: 'prompt', reason: 'prompts together must be at most 40000 characters (found 40001)' }],
    ]);
  });
  it('refuses a video request that describes nothing, and takes each way of describing it', async () => {
    const b64 = png.toString('base64');
    await expectInvalid('video-25', { duration: 8 }, 'prompt', { resolution: '720p' });
    await expectInvalid('video-25', { reference_images: [b64] }, 'prompt', { resolution: '720p' });
    await expectInvalid('i2v-endframe', { prompt: 'a pier', duration: 6 }, 'image');
    const ok = async (id: string, body: Record<string, unknown>, params: Record<string, unknown> = {}) =>
      expect((await ctx.api.post(resolvePaths(tool(id), DEFAULT_SLUGS, params).create, body)).status).toBe(200);
    await ok('video-25', { shots: [{ prompt: 'a lighthouse', duration: 4 }], duration: 4 }, { resolution: '720p' });
    await ok('video-25', { prompt: 'a lighthouse' }, { resolution: '720p' });
    await ok('i2v-endframe', { prompt: 'a lighthouse', image: b64 });
    await ok('i2v-endframe-fast', { prompt: 'a lighthouse', image: b64, image_end: b64 });
  });
  it('rejects inputs it cannot use: non-loopback URLs, unknown uploads, non-images', async () => {
    await expectInvalid('change-camera', { image: 'https://example.com/a.png' }, 'image');
    await expectInvalid(
      'video-upscaler',
      { video: 'upl_vid_doesnotexist', enhancement_model: 'starlight_fast_2' },
      'video',
    );
    await expectInvalid(
      'upscaler-precision',
      { image: Buffer.from('this is not an image at all').toString('base64') },
      'image',
    );
  });
  const postTo = (id: string, body: Record<string, unknown>, params: Record<string, unknown> = {}) =>
    ctx.api.post(resolvePaths(tool(id), DEFAULT_SLUGS, params).create, body);
  const statusAndReasons = (r: { status: number; body: { invalid_params: { field: string; reason: string }[] } }) => [
    r.status,
    r.body.invalid_params?.map((p) => `${p.field}: ${p.reason}`),
  ];
  const served = async (bytes: Buffer, type: string) => (await await uploadTo(ctx.sb.url, bytes, type)).url as string;
  it("holds frames and reference images to their field's formats and the stated size limits, by URL or inline", async () => {
    const post = postTo;
    const reasons = statusAndReasons;
    const gif = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#884422' } })
      .gif()
      .toBuffer();
    const webp = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#224488' } })
      .webp()
      .toBuffer();
    const gifUrl = await served(gif, 'image/gif');
    const pageUrl = await served(Buffer.from('<!doctype html><title>Sign in</title>'), 'text/html');
    expect(reasons(await post('video-2x', { prompt: 'x', image: gifUrl }, { resolution: '720p' }))).toEqual([
      400,
      ['image: format gif is not JPG or PNG'],
    ]);
    expect(
      reasons(
        await post('i2v-endframe-fast', {
          prompt: 'x',
          image: png.toString('base64'),
          image_end: webp.toString('base64'),
        }),
      ),
    ).toEqual([400, ['image_end: format webp is not JPG or PNG']]);
    expect(reasons(await post('lite-i2v', { prompt: 'x', image: pageUrl }))).toEqual([
      400,
      ['image: is not a readable image (JPEG, PNG or WebP)'],
    ]);
    // Reference images of 2.5 take WebP; the 5.0 edit's are held to 256x256 (api-spec).
    expect(
      (
        await post(
          'video-25',
          { prompt: 'x', reference_images: [await served(webp, 'image/webp')] },
          { resolution: '720p' },
        )
      ).status,
    ).toBe(200);
    expect(
      reasons(
        await post('image50-edit', {
          prompt: 'x',
          reference_images: [refPng.toString('base64'), png.toString('base64')],
        }),
      ),
    ).toEqual([400, ['reference_images.1: 64x48 is below the 256x256 minimum']]);
  });
  it('holds every image field to the formats of its catalogue entry: skin enhancer JPEG or PNG, change camera and image-to-prompt also WebP', async () => {
    const gif = await sharp({ create: { width: 320, height: 240, channels: 3, background: '#884422' } })
      .gif()
      .toBuffer();
    const webp = await sharp({ create: { width: 320, height: 240, channels: 3, background: '#224488' } })
      .webp()
      .toBuffer();
    const [gifUrl, webpUrl] = [await served(gif, 'image/gif'), await served(webp, 'image/webp')];
    expect(statusAndReasons(await postTo('skin-creative', { image: webp.toString('base64') }))).toEqual([
      400,
      ['image: format webp is not JPG or PNG'],
    ]);
    expect(statusAndReasons(await postTo('skin-faithful', { image: gifUrl }))).toEqual([
      400,
      ['image: format gif is not JPG or PNG'],
    ]);
    expect(statusAndReasons(await postTo('change-camera', { image: gifUrl }))).toEqual([
      400,
      ['image: format gif is not JPG or PNG or WebP'],
    ]);
    expect(statusAndReasons(await postTo('image-to-prompt', { image: gif.toString('base64') }))).toEqual([
      400,
      ['image: format gif is not JPG or PNG or WebP'],
    ]);
    const withMime = (b: Buffer, mime: string) => ({ image: b.toString('base64'), mime_type: mime });
    expect(
      statusAndReasons(
        await postTo('music-variants', {
          prompt: 'a calm piano piece',
          reference_images: [withMime(png, 'image/png'), withMime(gif, 'image/png')],
        }),
      ),
    ).toEqual([400, ['reference_images.1: format gif is not PNG or JPG or WebP']]);
    // What the spec lets through still goes through.
    expect((await postTo('change-camera', { image: webpUrl })).status).toBe(200);
    expect((await postTo('image-to-prompt', { image: webp.toString('base64') })).status).toBe(200);
    expect((await postTo('skin-flexible', { image: png.toString('base64') })).status).toBe(200);
  });
  it('names its pixel limit instead of calling a large image unreadable', async () => {
    // A PNG that declares 20000 x 15000 (a stitched panorama) with one row of data: the header is what is read.
    const chunk = (type: string, data: Buffer) => {
      const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
      const len = Buffer.alloc(4);
      len.writeUInt32BE(data.length);
      const crc = Buffer.alloc(4);
      crc.writeUInt32BE(crc32(body));
      return Buffer.concat([len, body, crc]);
    };
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(20000, 0);
    ihdr.writeUInt32BE(15000, 4);
    ihdr.set([8, 0, 0, 0, 0], 8);
    const panorama = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk('IHDR', ihdr),
      chunk('IDAT', deflateSync(Buffer.alloc(20001))),
      chunk('IEND', Buffer.alloc(0)),
    ]);
    const r = await ctx.api.post(resolvePaths(tool('upscaler-precision'), DEFAULT_SLUGS, {}).create, {
      image: panorama.toString('base64'),
    });
    expect(r.status).toBe(400);
    expect(r.body.invalid_params).toEqual([
      {
        field: 'image',
        name: 'image',
        reason: 'is 20000x15000 (300 megapixels); the Sandbox takes images up to 268 megapixels',
      },
    ]);
  });
  it('rejects list paging below 1 or not an integer, as the service does, and otherwise ignores it (it is undeclared)', async () => {
    const list = pathsOf(tool('music')).list;
    for (const qs of ['page=0', 'per_page=0', 'per_page=-3', 'page=1.5', 'per_page=ten']) {
      const r = await ctx.api.get(`${list}?${qs}`);
      expect(r.status, qs).toBe(400);
      expect(r.body.invalid_params.map((p: { field: string }) => p.field)).toEqual([qs.split('=')[0]]);
    }
    for (const qs of ['per_page=1001', 'page=7', 'per_page=1&page=1'])
      expect((await ctx.api.get(`${list}?${qs}`)).status, qs).toBe(200);
  });
});

async function runTool(id: string, body: Record<string, unknown>, params: Record<string, unknown> = {}, key?: string) {
  const p = resolvePaths(
    TOOLS.find((t) => t.id === id)!,
    DEFAULT_SLUGS,
    params,
  );
  const c = await ctx.api.post(p.create, body, key);
  expect(c.status, JSON.stringify(c.body)).toBe(200);
  clock.advance(DURATION);
  const done = await ctx.api.get(p.byId(c.body.data.task_id), key);
  expect(done.body.data.status).toBe('COMPLETED');
  return done.body.data as { task_id: string; generated: string[] };
}
const imageAt = async (url: string) => {
  const r = await bytesOf(url);
  expect(r.status).toBe(200);
  return {
    bytes: r.bytes,
    meta: await sharp(r.bytes).metadata(),
    raw: await sharp(r.bytes).removeAlpha().raw().toBuffer(),
  };
};

describe('real results', () => {
  it('the upscaler really resizes, and caps the long side', async () => {
    const out = await imageAt(
      (await runTool('upscaler-precision', { image: png.toString('base64'), scale_factor: 3 })).generated[0],
    );
    expect([out.meta.width, out.meta.height]).toEqual([192, 144]);
    const big = await sharp({ create: { width: 1200, height: 600, channels: 3, background: '#888' } })
      .png()
      .toBuffer();
    const capped = await imageAt(
      (await runTool('upscaler-precision', { image: big.toString('base64'), scale_factor: '16' })).generated[0],
    );
    expect([capped.meta.width, capped.meta.height]).toEqual([UPSCALE_MAX_SIDE, UPSCALE_MAX_SIDE / 2]);
  });
  it('the camera tool transforms the image (turning round mirrors it)', async () => {
    const back = await imageAt(
      (await runTool('change-camera', { image: imageUrl, horizontal_angle: 180 })).generated[0],
    );
    expect([back.meta.width, back.meta.height]).toEqual([64, 48]);
    const leftPixel = [back.raw[0 + 24 * 64 * 3], back.raw[1 + 24 * 64 * 3], back.raw[2 + 24 * 64 * 3]];
    expect(leftPixel[2]).toBeGreaterThan(leftPixel[0]); // the blue half is now on the left
    const jpeg = await runTool('change-camera', { image: imageUrl, zoom: 10, output_format: 'jpeg' });
    expect((await imageAt(jpeg.generated[0])).meta.format).toBe('jpeg');
  });
  it('skin tools filter the image (output differs from input, same size)', async () => {
    const input = await sharp(png).removeAlpha().raw().toBuffer();
    for (const id of ['skin-creative', 'skin-faithful', 'skin-flexible']) {
      const out = await imageAt(
        (
          await runTool(id, {
            image: png.toString('base64'),
            sharpen: 50,
            ...(id === 'skin-flexible' ? { optimized_for: 'no_make_up' } : {}),
          })
        ).generated[0],
      );
      expect([out.meta.width, out.meta.height]).toEqual([64, 48]);
      expect(out.raw.equals(input)).toBe(false);
    }
  });
  it('edit tools answer at the size and format asked, the reference recoloured and enlarged to cover it', async () => {
    const edit = await imageAt(
      (
        await runTool('quality-edit', {
          prompt: 'warmer light',
          reference_images: [imageUrl],
          resolution: '1k',
          aspect_ratio: 'traditional_3_4',
          output_format: 'webp',
        })
      ).generated[0],
    );
    expect([edit.meta.format, edit.meta.width, edit.meta.height]).toEqual(['webp', 768, 1024]);
  });
  it('generators render at the requested size and aspect, deterministically from prompt and seed', async () => {
    const a = await runTool('hires', {
      prompt: 'a red fox in snow',
      resolution: '1k',
      aspect_ratio: 'social_story_9_16',
    });
    const img = await imageAt(a.generated[0]);
    expect([img.meta.width, img.meta.height]).toEqual([576, 1024]);
    const flex = await imageAt(
      (await runTool('flex-image', { prompt: 'p', width: 300, height: 700, seed: 5 })).generated[0],
    );
    expect([flex.meta.width, flex.meta.height]).toEqual([300, 700]);
    const s1 = await imageAt((await runTool('context-t2i', { prompt: 'blue ocean', seed: 42 })).generated[0]);
    const s2 = await imageAt((await runTool('context-t2i', { prompt: 'blue ocean', seed: 42 })).generated[0]);
    const s3 = await imageAt((await runTool('context-t2i', { prompt: 'blue ocean', seed: 43 })).generated[0]);
    expect(s1.raw.equals(s2.raw)).toBe(true);
    expect(s1.raw.equals(s3.raw)).toBe(false);
    const four = await runTool('quality-image', { prompt: 'p', num_images: 3 });
    expect(four.generated).toHaveLength(3);
  });
  it('image-to-prompt derives the prompt from the image (base64 and URL alike; a data URI is refused)', async () => {
    const red = await sharp({ create: { width: 90, height: 40, channels: 3, background: '#e01010' } })
      .png()
      .toBuffer();
    const dataUri = await ctx.api.post(
      resolvePaths(
        TOOLS.find((t) => t.id === 'image-to-prompt')!,
        DEFAULT_SLUGS,
      ).create,
      {
        image: `data:image/png;base64,${red.toString('base64')}`,
      },
    );
    expect([dataUri.status, dataUri.body.invalid_params?.[0]?.reason]).toEqual([
      400,
      'must be base64 or a URL, as the description says (not a data: URI)',
    ]);
    const r = await runTool('image-to-prompt', { image: red.toString('base64') });
    expect(r.generated[0]).toMatch(/red/);
    expect(r.generated[0]).toMatch(/landscape/);
    expect(r.generated[0]).toMatch(/90x40/);
    const u = await runTool('image-to-prompt', { image: imageUrl });
    expect(u.generated[0]).toMatch(/64x48/);
  });
  it('image-to-prompt judges tone and colour alike for 16-bit, CMYK and grey-with-alpha images as for 8-bit RGB', async () => {
    const solid = (r: number, g: number, b: number) =>
      sharp({ create: { width: 64, height: 48, channels: 3, background: { r, g, b } } });
    const describe = async (bytes: Buffer, _type: string) =>
      (await runTool('image-to-prompt', { image: bytes.toString('base64') })).generated[0];
    const dark = 'A very dark landscape image (64x48) dominated by black tones, low contrast, ';
    // A 16-bit PNG's channels run to 65535: read as 8-bit it was "high-key".
    const png16 = await solid(40, 40, 40).toColourspace('rgb16').png().toBuffer();
    expect((await sharp(png16).metadata()).depth).toBe('ushort');
    expect(await describe(png16, 'png')).toBe(await describe(await solid(40, 40, 40).png().toBuffer(), 'png'));
    expect(await describe(png16, 'png')).toBe(`${dark}photographic composition, detailed, sharp focus`);
    // A CMYK JPEG's first channels are ink: a pale print read as C, M, Y was "very dark".
    const cmyk = await solid(235, 235, 235).toColourspace('cmyk').jpeg({ quality: 95 }).toBuffer();
    expect((await sharp(cmyk).metadata()).space).toBe('cmyk');
    expect(await describe(cmyk, 'jpeg')).toMatch(
      /^A high-key landscape image \(64x48\) dominated by white tones, low contrast, photographic/,
    );
    const blue = await solid(30, 60, 200).toColourspace('cmyk').jpeg({ quality: 95 }).toBuffer();
    expect(await describe(blue, 'jpeg')).toMatch(/ dominated by blue tones, /);
    // Grey with alpha has two channels: the alpha (opaque, 255) was averaged in as if a colour.
    const greyAlpha = await sharp({
      create: { width: 64, height: 48, channels: 4, background: { r: 30, g: 30, b: 30, alpha: 1 } },
    })
      .toColourspace('b-w')
      .png()
      .toBuffer();
    expect((await sharp(greyAlpha).metadata()).channels).toBe(2);
    expect(await describe(greyAlpha, 'png')).toBe(
      `${dark}with transparency, photographic composition, detailed, sharp focus`,
    );
  });
  it('a phone photo (stored landscape, EXIF-rotated to portrait) stays portrait in every result', async () => {
    const phone = await sharp({ create: { width: 80, height: 40, channels: 3, background: '#3070c0' } })
      .jpeg()
      .withMetadata({ orientation: 6 })
      .toBuffer();
    const up = await imageAt(
      (await runTool('upscaler-precision', { image: phone.toString('base64'), scale_factor: 2 })).generated[0],
    );
    expect([up.meta.width, up.meta.height]).toEqual([80, 160]);
    const uploaded = await uploadTo(ctx.sb.url, phone, 'image/jpeg');
    const cam = await imageAt((await runTool('change-camera', { image: uploaded.url, zoom: 5 })).generated[0]);
    expect([cam.meta.width, cam.meta.height]).toEqual([40, 80]);
    const described = await runTool('image-to-prompt', { image: phone.toString('base64') });
    expect(described.generated[0]).toMatch(/ portrait image \(40x80\) /);
  });
  it('video tools return an MP4 and music tools an MP3', async () => {
    const v = await bytesOf((await runTool('video-2x', { prompt: 'waves' }, { resolution: '480p' })).generated[0]);
    expect(v.headers.get('content-type')).toBe('video/mp4');
    expect(v.bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
    const m = await bytesOf((await runTool('music', { prompt: 'calm piano', music_length_seconds: 20 })).generated[0]);
    expect(m.headers.get('content-type')).toBe('audio/mpeg');
    expect(
      m.bytes.subarray(0, 3).toString('latin1') === 'ID3' || (m.bytes[0] === 0xff && (m.bytes[1] & 0xe0) === 0xe0),
    ).toBe(true);
  });
});

describe('task lifecycle on a configurable clock', () => {
  it('moves CREATED -> IN_PROGRESS -> COMPLETED as the clock advances, never backwards', async () => {
    const p = pathsOf(TOOLS.find((t) => t.id === 'music')!);
    const id = (await ctx.api.post(p.create, { prompt: 'x', music_length_seconds: 30 })).body.data.task_id;
    const status = async () => (await ctx.api.get(p.byId(id))).body.data.status;
    expect(await status()).toBe('CREATED');
    clock.advance(DURATION / 2);
    expect(await status()).toBe('IN_PROGRESS');
    clock.advance(DURATION / 2);
    expect(await status()).toBe('COMPLETED');
    clock.advance(-DURATION);
    expect(await status()).toBe('COMPLETED');
  });
  it('fails tasks at the configured failure rate, and the task duration is a fault knob', async () => {
    await ctx.api.control('faults', { failureRate: 1, taskDurationMs: 50 });
    const p = pathsOf(TOOLS.find((t) => t.id === 'music')!);
    const id = (await ctx.api.post(p.create, { prompt: 'x', music_length_seconds: 30 })).body.data.task_id;
    clock.advance(50);
    const r = await ctx.api.get(p.byId(id));
    expect(r.body.data).toMatchObject({ status: 'FAILED', generated: [] });
    await ctx.api.control('reset', {});
    expect((await ctx.api.control('faults')).body).toMatchObject({ failureRate: 0, taskDurationMs: DURATION });
  });
  it('keeps each caller to its own tasks, lists all of them newest first (only the newest under a window fault), whatever paging is asked', async () => {
    const p = pathsOf(TOOLS.find((t) => t.id === 'music-instrumental')!);
    const ids: string[] = [];
    const seen = async (): Promise<Record<string, number>> => (await ctx.api.control('stats')).body.listParams;
    const before = await seen();
    for (let i = 0; i < LIST_WINDOW_FAULT + 5; i++)
      ids.push((await ctx.api.post(p.create, { prompt: `x${i}` }, 'sandbox-admin')).body.data.task_id);
    const listed = async () => (await ctx.api.get(p.list, 'sandbox-admin')).body.data.map((t: any) => t.task_id);
    // As the description says: the status of all the caller's tasks of that model.
    expect(await listed()).toEqual([...ids].reverse());
    await ctx.api.control('faults', { listWindow: LIST_WINDOW_FAULT });
    const newest = ids.slice(5).reverse();
    expect(await listed()).toEqual(newest);
    // Undeclared paging changes nothing: the oldest five are never listed, only answered by id.
    for (const qs of ['per_page=2', 'per_page=1000', 'page=2', 'per_page=2&page=3']) {
      expect(
        (await ctx.api.get(`${p.list}?${qs}`, 'sandbox-admin')).body.data.map((t: any) => t.task_id),
        qs,
      ).toEqual(newest);
    }
    expect((await ctx.api.get(p.byId(ids[0]), 'sandbox-admin')).body.data.task_id).toBe(ids[0]);
    // A list that does not answer at all, while its tasks still do by id.
    await ctx.api.control('faults', { listNotFound: [p.list] });
    expect((await ctx.api.get(p.list, 'sandbox-admin')).status).toBe(404);
    expect((await ctx.api.get(p.byId(ids[0]), 'sandbox-admin')).body.data.task_id).toBe(ids[0]);
    await ctx.api.control('faults', { listWindow: null, listNotFound: [] });
    // The stats count the query parameters lists were sent (the engine's polling tests read them).
    const after = await seen();
    expect([(after.per_page ?? 0) - (before.per_page ?? 0), (after.page ?? 0) - (before.page ?? 0)]).toEqual([3, 2]);
    expect((await ctx.api.get(p.list, 'sandbox-member')).body.data).toEqual([]);
    expect((await ctx.api.get(p.byId(ids[0]), 'sandbox-member')).status).toBe(404);
    // The plain music family and the instrumental model do not share a list.
    expect((await ctx.api.get(pathsOf(TOOLS.find((t) => t.id === 'music')!).list, 'sandbox-admin')).body.data).toEqual(
      [],
    );
  });
});

describe('webhooks', () => {
  it('notifies each status change with the documented signing headers', async () => {
    const secret = (await ctx.api.control('webhook-secret')).body.secret as string;
    const got: { headers: Record<string, string | string[] | undefined>; body: string }[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        got.push({ headers: req.headers, body });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const p = pathsOf(TOOLS.find((t) => t.id === 'change-camera')!);
    const id = (await ctx.api.post(p.create, { image: imageUrl, webhook_url: `http://127.0.0.1:${port}/hook` })).body
      .data.task_id;
    clock.advance(DURATION);
    await until(async () => got.length >= 2);
    server.close();
    const bodies = got.map((g) => JSON.parse(g.body));
    expect(bodies.map((b) => b.data.status)).toEqual(['IN_PROGRESS', 'COMPLETED']);
    expect(bodies[1].data.task_id).toBe(id);
    expect(bodies[1].data.generated[0]).toMatch(/^http:\/\/127\.0\.0\.1/);
    for (const g of got) {
      const wid = g.headers['webhook-id'] as string;
      const ts = g.headers['webhook-timestamp'] as string;
      expect(Math.abs(Date.now() / 1000 - Number(ts))).toBeLessThan(300);
      const expected = createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64'))
        .update(`${wid}.${ts}.${g.body}`)
        .digest('base64');
      expect((g.headers['webhook-signature'] as string).split(' ')).toContain(`v1,${expected}`);
    }
    expect(new Set(got.map((g) => g.headers['webhook-id'])).size).toBe(2);
  });
});
