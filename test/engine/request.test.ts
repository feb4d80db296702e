import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { getTool } from '../../shared/catalogue/index.ts';
import { ApiClient } from '../../electron/core/api/client.ts';
import { ToolClient } from '../../electron/core/api/tools.ts';
import { buildParams, PreflightError, withPlaceholders } from '../../electron/core/engine/request.ts';
import { isLocalPath } from '../../shared/catalogue/index.ts';
import { startSandbox } from '../../electron/sandbox/index.ts';
import { makeClip } from '../media/fixtures.ts';

/** How local files in a job's parameters travel: against the real Sandbox's upload route. */
const sandbox = await startSandbox({ port: 0 });
afterAll(() => sandbox.close());
const tools = new ToolClient(new ApiClient(() => ({ baseUrl: sandbox.url, apiKey: 'sandbox-owner' })));
const dir = mkdtempSync(join(tmpdir(), 'md-req-'));
const png = join(dir, 'ref.png');
writeFileSync(
  png,
  await sharp({ create: { width: 300, height: 300, channels: 3, background: '#2a6' } })
    .png()
    .toBuffer(),
);
// Within the reference-video limits the Sandbox measures (2-15 s, 24-60 fps, at least 409,600 pixels).
const mp4 = await makeClip(dir, 'reference', { w: 640, h: 640, fps: 24, sec: 2.5 });

describe('local files in job parameters', () => {
  it('tells a local path from a base64 string that happens to start with a slash', () => {
    expect(isLocalPath('/home/me/a.png')).toBe(true);
    expect(isLocalPath('C:\\Users\\me\\a.png')).toBe(true);
    expect(isLocalPath('/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEx8lHh0aHyEjLjI')).toBe(false);
    expect(isLocalPath('https://example.com/a.png')).toBe(false);
    expect(isLocalPath('upl_vid_abc123')).toBe(false);
  });

  it('on the Sandbox: reference videos become upl_vid_ ids, reference images base64, and the body validates', async () => {
    const body = await buildParams(
      getTool('video-2x'),
      { prompt: 'a walk, see @Video1 and @Image1', reference_videos: [mp4], reference_images: [png] },
      null,
      tools,
      true,
    );
    expect(body.reference_videos).toEqual([expect.stringMatching(/^upl_vid_/)]);
    expect((body.reference_images as string[])[0]).toMatch(/^iVBORw0KGgo/);
    const created = await fetch(`${sandbox.url}/v1/ai/video/seedance-2-pro-720p`, {
      method: 'POST',
      headers: { 'x-magnific-api-key': 'sandbox-owner', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(created.status).toBe(200);
  });

  it("a URL-only input gets the Sandbox upload's loopback URL (change camera)", async () => {
    const body = await buildParams(getTool('change-camera'), { zoom: 3 }, png, tools, true);
    expect(body.image).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect((await fetch(String(body.image))).status).toBe(200);
  });

  it('on the live service a local video reference is refused before anything is sent, naming the field', async () => {
    const err = await buildParams(
      getTool('video-2x'),
      { prompt: 'x', reference_videos: [mp4] },
      null,
      tools,
      false,
    ).catch((e) => e);
    expect(err).toBeInstanceOf(PreflightError);
    expect(err.invalid).toEqual([{ field: 'reference_videos', reason: 'must be an HTTPS URL or an upl_vid_ id' }]);
    expect(err.message).toMatch(/local file cannot be sent to the live service/);
  });

  it('a data URI declares the image’s real type, not its name’s (a JPEG saved as .png)', async () => {
    const jpegNamedPng = join(dir, 'really-a-jpeg.png');
    writeFileSync(
      jpegNamedPng,
      await sharp({ create: { width: 300, height: 300, channels: 3, background: '#a62' } })
        .jpeg()
        .toBuffer(),
    );
    const body = await buildParams(getTool('image-to-prompt'), {}, jpegNamedPng, tools, false);
    expect(String(body.image)).toMatch(/^data:image\/jpeg;base64,\/9j\//);
    expect(String((await buildParams(getTool('image-to-prompt'), {}, png, tools, false)).image)).toMatch(
      /^data:image\/png;base64,iVBORw0KGgo/,
    );
  });

  it('an unreadable local file is a clear error on its field', async () => {
    const err = await buildParams(
      getTool('video-2x'),
      { prompt: 'x', reference_images: [join(dir, 'missing.png')] },
      null,
      tools,
      true,
    ).catch((e) => e);
    expect(err).toBeInstanceOf(PreflightError);
    expect(err.invalid[0]).toMatchObject({
      field: 'reference_images',
      reason: expect.stringMatching(/could not be read/),
    });
  });

  it('validation before reading any file sees stand-ins of the right encoding', () => {
    const p = withPlaceholders(getTool('video-2x'), {
      prompt: 'x',
      reference_videos: [mp4, 'upl_vid_keep'],
      image: png,
    });
    expect(p.reference_videos).toEqual(['https://example.com/input.png', 'upl_vid_keep']);
    expect(p.image).toMatch(/^iVBOR/);
  });
});
