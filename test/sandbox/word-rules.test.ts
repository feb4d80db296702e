import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getTool, validateRequest } from '../../shared/catalogue/index.ts';
import { findOperation, requestProblems } from '../../shared/official/index.ts';
import { assertParams } from '../../electron/core/engine/params-check.ts';
import { start, testPng } from './helpers.ts';
import { makeClip, tempDir } from '../media/fixtures.ts';
import { uploadTo } from '../sandbox-upload.ts';

/**
 * Limits the WAN 2.7 description states only in words (its modes, a combined count of references),
 * kept once as rules of the reference (manifest.json) and checked alike by the form and engine (the
 * generated tool carries them) and by the Sandbox (it validates against the reference).
 */
let ctx: Awaited<ReturnType<typeof start>>;
let clips: Awaited<ReturnType<typeof tempDir>>;
let image = '';
let video = '';
beforeAll(async () => {
  ctx = await start({ taskDurationMs: 50 });
  clips = await tempDir();
  image = (await uploadTo(ctx.sb.url, await testPng(256, 256), 'image/png')).url;
  const clip = await readFile(await makeClip(clips.dir, 'ok', { w: 640, h: 640, fps: 24, sec: 2.5 }));
  video = (await uploadTo(ctx.sb.url, clip, 'video/mp4')).url;
});
afterAll(async () => {
  await ctx.sb.close();
  await clips.cleanup();
});

/** What each side says of a body: the generated tool's check (form and engine), the reference's, the Sandbox's 400. */
async function verdicts(path: string, toolId: string | null, body: Record<string, unknown>) {
  const op = findOperation('POST', path)!;
  const reference = requestProblems(op, body).map((p) => p.field);
  const app = toolId ? validateRequest(getTool(toolId), body).invalid.map((p) => p.field) : null;
  const answer = await ctx.api.post(path, body);
  return { reference, app, status: answer.status, text: answer.text };
}

describe('word-only rules of WAN 2.7', () => {
  it('are one entry of the reference, carried whole into the generated tools', () => {
    for (const [path, id] of [
      ['/v1/ai/reference-to-video/wan-2-7', 'reference-to-video-wan-2-7'],
      ['/v1/ai/video-edit/wan-2-7', 'video-edit-wan-2-7'],
    ] as const) {
      const rules = findOperation('POST', path)!.rules;
      expect(rules?.length, path).toBeGreaterThan(0);
      expect(getTool(id).rules).toEqual(rules);
    }
    expect(findOperation('POST', '/v1/ai/image-to-video/wan-2-7')!.rules?.map((r) => r.kind)).toEqual([
      'anyOf',
      'exclusive',
    ]);
  });

  it('reference to video: at most 5 image and video references together, and at least one', async () => {
    const path = '/v1/ai/reference-to-video/wan-2-7';
    const id = 'reference-to-video-wan-2-7';
    const refs = (n: number, url: string) => Array.from({ length: n }, () => ({ url }));
    const ok = await verdicts(path, id, {
      prompt: 'Image 1 walks',
      image_urls: refs(3, image),
      video_urls: refs(2, video),
    });
    expect(ok).toMatchObject({ reference: [], app: [], status: 200 });
    const six = await verdicts(path, id, {
      prompt: 'Image 1 walks',
      image_urls: refs(3, image),
      video_urls: refs(3, video),
    });
    expect(six).toMatchObject({ reference: ['image_urls'], app: ['image_urls'], status: 400 });
    expect(six.text).toContain('at most 5');
    const none = await verdicts(path, id, { prompt: 'someone walks' });
    expect(none).toMatchObject({ reference: ['image_urls'], app: ['image_urls'], status: 400 });
    // The engine refuses it before anything is sent, saying why.
    await expect(
      assertParams(getTool(id), { prompt: 'x', image_urls: refs(4, image), video_urls: refs(2, video) }, false),
    ).rejects.toThrow(/at most 5/);
  });

  it('video edit: each editing mode is given by a prompt', async () => {
    const path = '/v1/ai/video-edit/wan-2-7';
    const none = await verdicts(path, 'video-edit-wan-2-7', { video_url: video });
    expect(none).toMatchObject({ reference: ['prompt'], app: ['prompt'], status: 400 });
    const ok = await verdicts(path, 'video-edit-wan-2-7', { video_url: video, prompt: 'make it dusk' });
    expect(ok).toMatchObject({ reference: [], app: [], status: 200 });
  });

  it('image to video: a first frame or a video to continue, never both', async () => {
    const path = '/v1/ai/image-to-video/wan-2-7';
    expect(await verdicts(path, null, { prompt: 'waves' })).toMatchObject({
      reference: ['start_image_url'],
      status: 400,
    });
    const both = await verdicts(path, null, { start_image_url: image, video_url: video });
    expect(both).toMatchObject({ reference: ['video_url'], status: 400 });
    expect(both.text).toContain('cannot be sent beside start_image_url');
    expect(await verdicts(path, null, { video_url: video, end_image_url: image })).toMatchObject({
      reference: [],
      status: 200,
    });
    // The curated tool always sends a first frame and has no video field: its requests keep to the rule.
    expect(getTool('wan-i2v').fields.find((f) => f.name === 'start_image_url')?.required).toBe(true);
    expect(getTool('wan-i2v').fields.some((f) => f.name === 'video_url')).toBe(false);
  });
});

describe('word-only rules of the favourites', () => {
  it('relight: a lightmap or a light reference, never both, in the reference and the curated tool alike', async () => {
    const path = '/v1/ai/image-relight';
    expect(getTool('relight').rules).toEqual(findOperation('POST', path)!.rules);
    const both = await verdicts(path, 'relight', {
      image,
      transfer_light_from_reference_image: image,
      transfer_light_from_lightmap: image,
    });
    expect(both).toMatchObject({
      reference: ['transfer_light_from_lightmap'],
      app: ['transfer_light_from_lightmap'],
      status: 400,
    });
    expect(await verdicts(path, 'relight', { image, transfer_light_from_lightmap: image })).toMatchObject({
      reference: [],
      app: [],
      status: 200,
    });
  });
});
