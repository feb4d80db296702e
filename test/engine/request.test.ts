import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { getTool } from '../../shared/catalogue/index.ts';
import { ApiClient } from '../../electron/core/api/client.ts';
import { readUploadTargets, uploadBytes } from '../../electron/core/api/uploads.ts';
import { buildParams, PreflightError, withPlaceholders } from '../../electron/core/engine/request.ts';
import { isLocalPath } from '../../shared/catalogue/index.ts';
import { startSandbox } from '../../electron/sandbox/index.ts';

/** How local files in a job's parameters travel: against the real Sandbox's upload flow. */
const sandbox = await startSandbox({ port: 0 });
afterAll(() => sandbox.close());
const api = new ApiClient(() => ({ baseUrl: sandbox.url, apiKey: 'sandbox-owner' }));
const upload = async (bytes: Buffer, type: string) => (await uploadBytes(api, bytes, type)).assetUrl;
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

  it('reference images become base64, and the body validates (video 2.5)', async () => {
    const body = await buildParams(
      getTool('video-25'),
      { prompt: 'a walk, see @Image1', reference_images: [png] },
      null,
      upload,
    );
    expect((body.reference_images as string[])[0]).toMatch(/^iVBORw0KGgo/);
    const created = await fetch(`${sandbox.url}/v1/ai/video/seedance-2-5-pro-720p`, {
      method: 'POST',
      headers: { 'x-magnific-api-key': 'sandbox-owner', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(created.status).toBe(200);
  });

  it('a URL-only input gets its asset URL, readable without a key (change camera)', async () => {
    const body = await buildParams(getTool('change-camera'), { zoom: 3 }, png, upload);
    expect(body.image).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/uploads\/upl_[0-9a-f]+\?expires=\d+&signature=/);
    expect((await fetch(String(body.image))).status).toBe(200);
  });

  it('the request-url answer is read unwrapped or under data; a broken field is named', () => {
    const file = {
      file_id: 'upl_1',
      upload_url: 'https://up.example/x?sig=1',
      headers: { 'Content-Type': 'image/png' },
      expires_in: 120,
      asset_url: 'https://cdn.example/x',
      asset_url_expires_in: 86400,
    };
    const read = { fileId: 'upl_1', uploadUrl: file.upload_url, headers: file.headers, expiresInSec: 120 };
    expect(readUploadTargets({ files: [file] })[0]).toMatchObject(read);
    expect(readUploadTargets({ data: { files: [file] } })[0]).toMatchObject(read);
    expect(() => readUploadTargets({ files: [{ ...file, asset_url: 7 }] })).toThrow(
      'the upload answer is not what the service documents: files.0.asset_url must be a non-empty string',
    );
    expect(() => readUploadTargets({ data: [] })).toThrow('files must be a non-empty list');
  });

  it('image-to-prompt sends a file as plain base64, as the description says, and the Sandbox takes it', async () => {
    const jpegNamedPng = join(dir, 'really-a-jpeg.png');
    writeFileSync(
      jpegNamedPng,
      await sharp({ create: { width: 300, height: 300, channels: 3, background: '#a62' } })
        .jpeg()
        .toBuffer(),
    );
    const body = await buildParams(getTool('image-to-prompt'), {}, jpegNamedPng, upload);
    expect(String(body.image)).toMatch(/^\/9j\//);
    expect(String((await buildParams(getTool('image-to-prompt'), {}, png, upload)).image)).toMatch(/^iVBORw0KGgo/);
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
      upload,
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
