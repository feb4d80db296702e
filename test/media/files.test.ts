// Reference validation on real files made by ffmpeg and sharp: probing (MP4 and MOV, moov at the
// start and at the end, local and over HTTP range requests) and each rule on both sides of its bound.
import { copyFile, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkReferences, type CheckReport } from '../../electron/core/media/check.ts';
import { ProbeError, probeSource } from '../../electron/media/probe.ts';
import { limited, makeClip, makeImage, padTo, tempDir, type ClipSpec } from './fixtures.ts';
import { serveFolder, type FileServer } from './server.ts';

const MB = 1024 * 1024;
const SQ = { w: 640, h: 640, fps: 30, sec: 2 };

const CLIPS: Record<string, ClipSpec> = {
  ok_mp4_start: { ...SQ, faststart: true },
  ok_mp4_end: { ...SQ },
  ok_mov_start: { ...SQ, ext: 'mov', faststart: true },
  ok_mov_end: { ...SQ, ext: 'mov' },
  up_15: { w: 320, h: 240, fps: 15, sec: 2, faststart: true },
  up_14: { w: 320, h: 240, fps: 14, sec: 2, faststart: true },
  avi: { w: 320, h: 240, fps: 30, sec: 1, ext: 'avi' },
  noisy_end: { ...SQ, noise: true },
  frag_4: { ...SQ, sec: 4, fragmented: true },
  frag_16: { ...SQ, sec: 16, fragmented: true },
  prores_mov: { ...SQ, ext: 'mov', codec: 'prores' },
  mjpeg_mov: { ...SQ, ext: 'mov', codec: 'mjpeg', faststart: true },
};

let dir = '';
let cleanup = async () => {};
const f: Record<string, string> = {};

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
  await limited(
    3,
    Object.entries(CLIPS).map(([name, spec]) => async () => {
      f[name] = await makeClip(dir, name, spec);
    }),
  );
  // Byte limits: a valid clip (moov first) or image grown with zeros past 50 MB, and images to 10 MB and one past it.
  f['bytes_50mb_plus1.mp4'] = join(dir, 'bytes_50mb_plus1.mp4');
  await copyFile(f.ok_mp4_start, f['bytes_50mb_plus1.mp4']);
  await padTo(f['bytes_50mb_plus1.mp4'], 50 * MB + 1);
  f.img_256 = await makeImage(dir, 'img_256', 256, 256, 'png');
  f.img_255w = await makeImage(dir, 'img_255w', 255, 256, 'png');
  f.img_255h = await makeImage(dir, 'img_255h', 256, 255, 'png');
  f.img_jpg = await makeImage(dir, 'img_jpg', 300, 400, 'jpeg');
  f.img_webp = await makeImage(dir, 'img_webp', 300, 300, 'webp');
  for (const [name, size] of [
    ['img_10mb', 10 * MB],
    ['img_10mb_plus1', 10 * MB + 1],
  ] as const) {
    f[name] = join(dir, `${name}.png`);
    await copyFile(f.img_256, f[name]);
    await padTo(f[name], size);
  }
  const whole = await import('node:fs/promises').then((fs) => fs.readFile(f.ok_mp4_end));
  f.truncated = join(dir, 'truncated.mp4');
  await writeFile(f.truncated, whole.subarray(0, Math.floor(whole.length / 2)));
  // The index first: the moov is whole and only the samples run past the end.
  for (const from of ['ok_mp4_start', 'ok_mov_start']) {
    const bytes = await readFile(f[from]);
    f[`cut_${from}`] = join(dir, `cut_${basename(f[from])}`);
    await writeFile(f[`cut_${from}`], bytes.subarray(0, Math.floor(bytes.length * 0.6)));
  }
  f.text = join(dir, 'notes.mp4');
  await writeFile(f.text, 'this is not a video, whatever its name says\n'.repeat(10));
  // Every clip is made by ffmpeg: on a loaded 2-core machine that has taken over a minute.
}, 180_000);

afterAll(async () => {
  await cleanup();
});

const refRules = (r: CheckReport) => r.references.map((x) => x.errors.map((e) => e.rule));
const topRules = (r: CheckReport) => r.errors.map((e) => e.rule);

describe('probeSource on local files', () => {
  it.each(['ok_mp4_start', 'ok_mp4_end', 'ok_mov_start', 'ok_mov_end'])('measures %s', async (name) => {
    const p = await probeSource(f[name]);
    expect(p).toMatchObject({
      kind: 'video',
      container: name.includes('mov') ? 'mov' : 'mp4',
      width: 640,
      height: 640,
    });
    expect(p.durationSec).toBeCloseTo(2, 3);
    expect(p.fps).toBeCloseTo(30, 3);
    expect(p.bytes).toBe((await stat(f[name])).size);
  });

  it('measures a fragmented MP4 by its fragments (ffmpeg states no duration), and finds one cut short', async () => {
    const p = await probeSource(f.frag_4);
    expect(p).toMatchObject({ kind: 'video', container: 'mp4', width: 640, height: 640 });
    expect(p.durationSec).toBeCloseTo(4, 3);
    // Without a stated duration (ffmpeg's empty moov has none), every fragment counts, not the first ones read.
    expect((await probeSource(f.frag_16)).durationSec).toBeCloseTo(16, 3);
    const whole = await readFile(f.frag_16);
    const cut = join(dir, 'frag_cut.mp4');
    await writeFile(cut, whole.subarray(0, whole.length - 1000));
    await expect(probeSource(cut)).rejects.toMatchObject({
      code: 'truncated',
      message: expect.stringMatching(
        /frag_cut\.mp4: truncated MP4: its mdat box ends \d+ bytes past the end of the file/,
      ),
    });
  });

  it('measures a MOV whose video is ProRes or Motion JPEG: a video track, whatever its codec', async () => {
    for (const name of ['prores_mov', 'mjpeg_mov']) {
      const p = await probeSource(f[name]);
      expect(p).toMatchObject({ kind: 'video', container: 'mov', width: 640, height: 640 });
      expect(p.durationSec).toBeCloseTo(2, 3);
      expect(p.fps).toBeCloseTo(30, 3);
    }
  });

  it('accepts file:// URLs', async () => {
    expect(await probeSource(pathToFileURL(f.ok_mov_end).href)).toMatchObject({ container: 'mov', width: 640 });
    expect(await probeSource(pathToFileURL(f.img_jpg).href)).toMatchObject({ kind: 'image', format: 'jpeg' });
  });

  it('reports the byte size of a large file without reading it', async () => {
    const p = await probeSource(f['bytes_50mb_plus1.mp4']);
    expect(p.bytes).toBe(50 * MB + 1);
    expect(p.durationSec).toBeCloseTo(2, 3);
  });

  it('says what is wrong with files it cannot measure', async () => {
    await expect(probeSource(f.truncated)).rejects.toMatchObject({
      code: 'truncated',
      message: expect.stringMatching(/truncated\.mp4: truncated or damaged/),
    });
    await expect(probeSource(f.cut_ok_mp4_start)).rejects.toMatchObject({
      code: 'truncated',
      message: expect.stringMatching(
        /cut_ok_mp4_start\.mp4: truncated MP4: its media data ends \d+ bytes past the end of the file/,
      ),
    });
    await expect(probeSource(f.cut_ok_mov_start)).rejects.toMatchObject({
      code: 'truncated',
      message: expect.stringMatching(/cut_ok_mov_start\.mov: truncated MOV: its media data ends/),
    });
    await expect(probeSource(f.text)).rejects.toMatchObject({ code: 'unsupported' });
    await expect(probeSource(join(dir, 'missing.mp4'))).rejects.toMatchObject({
      code: 'unreachable',
      message: expect.stringContaining('no such file'),
    });
    const avi = await probeSource(f.avi);
    expect(avi).toMatchObject({ kind: 'video', container: 'avi', durationSec: null });
  });

  it('measures images with sharp', async () => {
    expect(await probeSource(f.img_jpg)).toMatchObject({ kind: 'image', format: 'jpeg', width: 300, height: 400 });
    expect(await probeSource(f.img_10mb_plus1)).toMatchObject({
      kind: 'image',
      format: 'png',
      width: 256,
      height: 256,
      bytes: 10 * MB + 1,
    });
  });
});

describe('video upscaler on real files', () => {
  // [file, rule it must break or null when it must pass]: its one `video` is an MP4 or MOV, whatever the codec.
  const cases: Array<[string, string | null]> = [
    ['ok_mp4_start', null],
    ['ok_mp4_end', null],
    ['ok_mov_start', null],
    ['ok_mov_end', null],
    ['frag_4', null],
    ['prores_mov', null],
    ['mjpeg_mov', null],
    ['avi', 'video.container'],
    ['img_jpg', 'video.container'],
  ];
  it.each(cases)('%s -> %s', async (name, rule) => {
    const r = await checkReferences({ family: 'upscaler', sources: [f[name]] });
    expect(refRules(r)).toEqual([rule ? [rule] : []]);
    expect(r.ok).toBe(rule === null);
    if (rule) {
      // Named by the file, in words: the rule's id is in `rule`, not in the message.
      expect(r.references[0].errors[0].message.startsWith(`${basename(f[name])}: `)).toBe(true);
      expect(r.references[0].errors[0].message).not.toContain('(rule ');
    }
  });

  it('takes exactly one video', async () => {
    expect(topRules(await checkReferences({ family: 'upscaler', sources: [f.ok_mp4_start, f.ok_mov_end] }))).toEqual([
      'video.count',
    ]);
    expect(topRules(await checkReferences({ family: 'upscaler', sources: [] }))).toEqual(['video.count']);
  });

  it('needs at least 15 fps when target_fps is set', async () => {
    expect((await checkReferences({ family: 'upscaler', sources: [f.up_15], body: { target_fps: 60 } })).ok).toBe(true);
    expect(
      refRules(await checkReferences({ family: 'upscaler', sources: [f.up_14], body: { target_fps: 60 } })),
    ).toEqual([['upscaler.fps']]);
    expect((await checkReferences({ family: 'upscaler', sources: [f.up_14] })).ok).toBe(true);
  });

  it('keeps the order of sources and reports an unprobeable one', async () => {
    const r = await checkReferences({ family: 'upscaler', sources: [f.avi, f.truncated, f.ok_mp4_start] });
    expect(r.references.map((x) => basename(x.source))).toEqual(['avi.avi', 'truncated.mp4', 'ok_mp4_start.mp4']);
    expect(refRules(r)).toEqual([['video.container'], ['probe'], []]);
    expect(r.references[1].probe).toBeNull();
    expect(r.references[2].probe).toEqual({
      container: 'mp4',
      durationSec: 2,
      fps: 30,
      width: 640,
      height: 640,
      bytes: (await stat(f.ok_mp4_start)).size,
    });
  });
});

describe('video 2.5 and 2.x references on real files', () => {
  it('takes reference images (JPG, PNG, WebP, at most 4) in 2.5, and no clip', async () => {
    expect((await checkReferences({ family: '25', sources: [f.img_jpg, f.img_webp, f.img_255w] })).ok).toBe(true);
    expect(topRules(await checkReferences({ family: '25', sources: Array(5).fill(f.img_jpg) }))).toEqual([
      'image.count',
    ]);
    const clip = await checkReferences({ family: '25', sources: [f.img_jpg, f.ok_mp4_start] });
    expect(topRules(clip)).toEqual(['video.count']);
    expect(clip.errors[0].message).toContain('takes no reference videos (1 given)');
  });

  it('checks @Image and @Audio citations against the images given and the audio in the body', async () => {
    const two = [f.img_jpg, f.img_webp];
    const check = (body: Record<string, unknown>) => checkReferences({ family: '25', sources: two, body });
    expect((await check({ prompt: 'cut @Image1 into @Image2' })).ok).toBe(true);
    expect(topRules(await check({ prompt: 'and @Image3' }))).toEqual(['image.mention']);
    expect(topRules(await check({ prompt: 'to @Audio1' }))).toEqual(['audio.mention']);
    expect((await check({ prompt: 'to @Audio1', reference_audios: ['https://x.test/a.mp3'] })).ok).toBe(true);
    expect(topRules(await check({ prompt: 'like @Video1' }))).toEqual(['video.mention']);
  });

  it('takes no reference media in 2.x; its start and end frames are probed', async () => {
    const r = await checkReferences({ family: '2x', sources: [f.ok_mp4_start] });
    expect(topRules(r)).toEqual(['video.count']);
    expect(r.errors[0].message).toContain('takes no reference media (1 given)');
    const frames = await checkReferences({
      family: '2x',
      sources: [],
      body: { image: f.img_jpg, image_end: f.img_webp },
    });
    expect(frames.frames.map((x) => [x.field, x.errors.map((e) => e.rule)])).toEqual([
      ['image', []],
      ['image_end', ['image.format']],
    ]);
    expect(topRules(await checkReferences({ family: '2x', sources: [], body: { image_end: f.img_jpg } }))).toEqual([
      'image_end.requires_image',
    ]);
  });
});

describe('5.0 image edit on real files', () => {
  const cases: Array<[string, string | null]> = [
    ['img_256', null],
    ['img_255w', 'image.minSize'],
    ['img_255h', 'image.minSize'],
    ['img_jpg', null],
    ['img_webp', 'image.format'],
    ['img_10mb', null],
    ['img_10mb_plus1', 'image.bytes'],
    ['ok_mp4_start', 'image.format'],
  ];
  it.each(cases)('%s -> %s', async (name, rule) => {
    const r = await checkReferences({ family: 'image50-edit', sources: [f[name]] });
    expect(refRules(r)).toEqual([rule ? [rule] : []]);
  });
  it('takes 1 to 5 images', async () => {
    expect((await checkReferences({ family: 'image50-edit', sources: Array(5).fill(f.img_256) })).ok).toBe(true);
    expect(topRules(await checkReferences({ family: 'image50-edit', sources: Array(6).fill(f.img_256) }))).toEqual([
      'image.count',
    ]);
  });
});

describe('probing URLs with range requests', () => {
  let srv: FileServer;
  let plain: FileServer;
  beforeAll(async () => {
    srv = await serveFolder(dir);
    plain = await serveFolder(dir, { ranges: false });
  });
  afterAll(async () => {
    await srv?.close();
    await plain?.close();
  });

  it('reads the head and the tail when the moov box is at the end', async () => {
    const size = (await stat(f.noisy_end)).size;
    expect(size).toBeGreaterThan(4 * MB);
    srv.reset();
    const p = await probeSource(`${srv.url}/noisy_end.mp4`);
    expect(p).toMatchObject({ container: 'mp4', width: 640, height: 640, bytes: size });
    expect(p.durationSec).toBeCloseTo(2, 3);
    const served = srv.served.get('noisy_end.mp4') ?? 0;
    expect(served).toBeLessThan(size / 20);
    expect(srv.requests.every((r) => r.startsWith('bytes='))).toBe(true);
    expect(srv.requests).toHaveLength(2);
  });

  it('reads only the head of a 50 MB file whose moov comes first', async () => {
    srv.reset();
    const r = await checkReferences({ family: 'upscaler', sources: [`${srv.url}/bytes_50mb_plus1.mp4`] });
    expect(refRules(r)).toEqual([[]]);
    expect(srv.served.get('bytes_50mb_plus1.mp4')).toBeLessThanOrEqual(64 * 1024);
    // A copy cut short is found from the index too, over the network as on disk.
    await expect(probeSource(`${srv.url}/cut_ok_mp4_start.mp4`)).rejects.toMatchObject({
      code: 'truncated',
      message: expect.stringContaining('media data ends'),
    });
  });

  it('measures MOV and images over HTTP', async () => {
    const mov = await probeSource(`${srv.url}/ok_mov_end.mov`);
    expect(mov).toMatchObject({ container: 'mov', width: 640, height: 640 });
    srv.reset();
    const img = await probeSource(`${srv.url}/img_10mb_plus1.png`);
    expect(img).toMatchObject({ kind: 'image', format: 'png', width: 256, height: 256, bytes: 10 * MB + 1 });
    expect(srv.served.get('img_10mb_plus1.png')).toBeLessThanOrEqual(64 * 1024);
  });

  it('refuses servers without Range support instead of downloading', async () => {
    const err = await probeSource(`${plain.url}/bytes_50mb_plus1.mp4`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProbeError);
    expect(err).toMatchObject({
      code: 'no-range',
      message: expect.stringContaining('does not support Range requests'),
    });
  });

  it('reports unreachable and non-HTTPS URLs', async () => {
    await expect(probeSource(`${srv.url}/missing.mp4`)).rejects.toMatchObject({
      code: 'unreachable',
      message: expect.stringContaining('HTTP 404'),
    });
    await expect(probeSource('http://example.com/a.mp4')).rejects.toMatchObject({
      code: 'unreachable',
      message: expect.stringContaining('only HTTPS'),
    });
    const r = await checkReferences({ family: 'upscaler', sources: [`${srv.url}/missing.mp4`] });
    expect(refRules(r)).toEqual([['probe']]);
  });
});
