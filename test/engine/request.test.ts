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

describe('local files in job parameters', () => {
  it('tells a local path from a base64 string that happens to start with a slash', () => {
    expect(isLocalPath('/home/me/a.png')).toBe(true);
    expect(isLocalPath('C:\\Users\\me\\a.png')).toBe(true);
    expect(isLocalPath('/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEx8lHh0aHyEjLjI')).toBe(false);
    expect(isLocalPath('https://example.com/a.png')).toBe(false);
    expect(isLocalPath('upl_vid_abc123')).toBe(false);
  });

  it('on the Sandbox: reference images become base64, and the body validates (video 2.5)', async () => {
    const body = await buildParams(
      getTool('video-25'),
      { prompt: 'a walk, see @Image1', reference_images: [png] },
      null,
      tools,
      true,
    );
    expect((body.reference_images as string[])[0]).toMatch(/^iVBORw0KGgo/);
    const created = await fetch(`${sandbox.url}/v1/ai/video/seedance-2-5-pro-720p`, {
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

  it('on the live service a local file in a URL-only field is refused before anything is sent, naming the field', async () => {
    const err = await buildParams(getTool('context-t2i'), { prompt: 'x', input_image: png }, null, tools, false).catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(PreflightError);
    expect(err.invalid).toEqual([{ field: 'input_image', reason: 'must be an HTTPS URL' }]);
    expect(err.message).toMatch(/local file cannot be sent to the live service/);
  });

  it('image-to-prompt sends a file as plain base64, as the description says, and the Sandbox takes it', async () => {
    const jpegNamedPng = join(dir, 'really-a-jpeg.png');
    writeFileSync(
      jpegNamedPng,
      await sharp({ create: { width: 300, height: 300, channels: 3, background: '#a62' } })
        .jpeg()
        .toBuffer(),
    );
    const body = await buildParams(getTool('image-to-prompt'), {}, jpegNamedPng, tools, false);
    expect(String(body.image)).toMatch(/^\/9j\//);
    expect(String((await buildParams(getTool('image-to-prompt'), {}, png, tools, false)).image)).toMatch(
      /^iVBORw0KGgo/,
    );
    const created = await fetch(`${sandbox.url}/v1/ai/image-to-prompt`, {
      method: 'POST',
      headers: { 'x-magnific-api-key': 'sandbox-owner', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(created.status, await created.clone().text()).toBe(200);
  });

  it('an unreadable local file is a clear error on its field', async () => {
    const err = await buildParams(
      getTool('video-25'),
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
    const p = withPlaceholders(getTool('video-25'), {
      prompt: 'x',
      reference_images: [png, 'https://example.com/keep.png'],
    });
    expect(p.reference_images).toEqual([expect.stringMatching(/^iVBOR/), 'https://example.com/keep.png']);
    expect(withPlaceholders(getTool('context-t2i'), { prompt: 'x', input_image: png }).input_image).toBe(
      'https://example.com/input.png',
    );
  });
});
