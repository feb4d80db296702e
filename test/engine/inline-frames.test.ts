import { join } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { DeskError } from '../../shared/contract/define.ts';
import { control, creates, engineSuite, settle } from './helpers.ts';

/**
 * Frames and reference images given inline (base64, a data: URI) by a caller other than the
 * builder: a raw batches.start over the contract, a script. The engine decodes and probes them
 * before anything is sent, as it does frames given as a URL or a path.
 */
const suite = engineSuite('inline-frames', 100);

const picture = (background: string) => sharp({ create: { width: 640, height: 480, channels: 3, background } });
const base64 = async (img: ReturnType<typeof sharp>) => (await img.toBuffer()).toString('base64');

async function refusal(params: Record<string, unknown>, tool: string) {
  const dir = suite.folder();
  const e = suite.engine(join(dir, 'home'));
  const err = await e.startBatch({ tool, params, outDir: join(dir, 'out') }).then(
    () => null,
    (x: unknown) => x,
  );
  expect(err).toBeInstanceOf(DeskError);
  expect(creates(await control(suite.url, 'stats'))).toBe(0);
  return (err as DeskError).invalid;
}

describe('inline frames and reference images are probed by their content before anything is sent', () => {
  it('a GIF start frame as base64, a WebP end frame as a data: URI: each refused on its field, named as inline data', async () => {
    const gif = await base64(picture('#226644').gif());
    expect(await refusal({ prompt: 'a lamp at dusk', image: gif }, 'i2v-endframe-fast')).toEqual([
      { field: 'image', reason: 'image (inline data): format gif is not JPG or PNG' },
    ]);
    const png = await base64(picture('#664422').png());
    const webp = `data:image/png;base64,${await base64(picture('#446622').webp())}`;
    expect(await refusal({ prompt: 'dusk to dawn', image: png, image_end: webp }, 'video-2x')).toEqual([
      { field: 'image_end', reason: 'image_end (inline data): format webp is not JPG or PNG' },
    ]);
  });

  it('inline data that is no image (a web page, base64-encoded) is refused as unreadable', async () => {
    const page = Buffer.from('<!doctype html><title>Sign in to view this file</title>').toString('base64');
    const invalid = await refusal({ prompt: 'noon', image: page }, 'lite-i2v');
    expect(invalid).toEqual([
      {
        field: 'image',
        reason: expect.stringMatching(/^image \(inline data\): not a video or image this app can read .*$/),
      },
    ]);
  });

  it('a GIF among inline reference images is named by its place in the list', async () => {
    const png = await base64(picture('#664422').png());
    const gif = `data:image/gif;base64,${await base64(picture('#226644').gif())}`;
    expect(
      await refusal({ prompt: 'a walk like @Image1 and @Image2', reference_images: [png, gif] }, 'video-25'),
    ).toEqual([
      {
        field: 'reference_images',
        reason: 'reference_images 2 (inline data): format gif is not JPG or PNG or WebP',
      },
    ]);
  });

  it('inline PNG frames pass and the task is sent', async () => {
    const dir = suite.folder();
    const e = suite.engine(join(dir, 'home'));
    const [start, end] = await Promise.all([base64(picture('#664422').png()), base64(picture('#224466').jpeg())]);
    const r = await e.startBatch({
      tool: 'i2v-endframe',
      params: { prompt: 'a lamp at dusk', image: start, image_end: `data:image/jpeg;base64,${end}` },
      outDir: join(dir, 'out'),
    });
    expect(r.queued).toBe(1);
    e.start();
    await settle(e, r.jobIds);
    expect(e.job(r.jobIds[0]).state).toBe('done');
    expect(creates(await control(suite.url, 'stats'))).toBe(1);
  });
});
