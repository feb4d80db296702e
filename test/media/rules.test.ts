// The shared rules on probe objects: exact boundaries that are impractical to encode (byte limits,
// the upper pixel bound's neighbours), the body rules, and the message format. Real files for every
// rule are in files.test.ts.
import { describe, expect, it } from 'vitest';
import {
  checkBody,
  checkImage,
  checkVideo,
  displayName,
  frameFields,
  validateReferences,
  type Probe,
} from '../../shared/validation/references.ts';

const MB = 1024 * 1024;
const vid = (over: Partial<Probe> = {}): Probe => ({
  source: '/tmp/clip.mp4',
  kind: 'video',
  container: 'mp4',
  durationSec: 5,
  fps: 30,
  width: 640,
  height: 640,
  bytes: 1000,
  ...over,
});
const img = (over: Partial<Probe> = {}): Probe => ({
  source: '/tmp/pic.png',
  kind: 'image',
  container: 'png',
  format: 'png',
  durationSec: null,
  fps: null,
  width: 512,
  height: 512,
  bytes: 1000,
  ...over,
});
const rules = (r: { errors: { rule: string }[] }) => r.errors.map((e) => e.rule);

describe('video item rules', () => {
  it('takes MP4 and MOV, naming file, value and rule otherwise', () => {
    const item = { containers: ['mp4', 'mov'] };
    expect(checkVideo(vid({ container: 'mov' }), item)).toEqual([]);
    const errs = checkVideo(vid({ container: 'webm', durationSec: null, fps: null, width: null, height: null }), item);
    expect(errs.map((e) => [e.rule, e.message, e.source])).toEqual([
      ['video.container', 'clip.mp4: container webm is not MP4 or MOV', '/tmp/clip.mp4'],
    ]);
  });

  it('names URLs by their last path segment', () => {
    expect(displayName('https://cdn.example.com/a/b/My%20Clip.mov?sig=abc')).toBe('My Clip.mov');
    expect(displayName('C:\\clips\\x.mp4')).toBe('x.mp4');
  });
});

describe('validateReferences (2.x, 2.5)', () => {
  it('2.x takes no reference media in the newer description: a video or an image given is counted out', () => {
    expect(rules(validateReferences({ family: '2x', references: [vid()] }))).toEqual(['video.count']);
    expect(validateReferences({ family: '2x', references: [] }).ok).toBe(true);
  });

  it('checks @Image mentions against the images given, in order (2.5)', () => {
    expect(
      validateReferences({ family: '25', references: [img(), img()], body: { prompt: 'mix @Image1 and @Image2' } }).ok,
    ).toBe(true);
    const r = validateReferences({ family: '25', references: [img(), img()], body: { prompt: 'use @Image3' } });
    expect(rules(r)).toEqual(['image.mention']);
    expect(r.errors[0]).toMatchObject({
      field: 'prompt',
      message: 'prompt: @Image3 cites reference image 3, but only 2 are given',
    });
  });

  it('flags a citation of a kind the family takes none of, on the prompt that holds it', () => {
    const r = validateReferences({
      family: '25',
      references: [img()],
      body: { prompt: 'like @Image1, moving as @Video1' },
    });
    expect(r.errors.map((e) => [e.rule, e.field, e.message])).toEqual([
      ['video.mention', 'prompt', 'prompt: @Video1 cites a reference video, but video 2.5 takes none'],
    ]);
    const shots = [
      { prompt: 'a pier', duration: 4 },
      { prompt: 'hum of @Audio1 over @Image3', duration: 4 },
    ];
    const s = validateReferences({ family: '25', references: [img(), img()], body: { shots } });
    expect(s.errors.map((e) => [e.rule, e.field, e.message])).toEqual([
      ['audio.mention', 'shots.1.prompt', 'shots.1.prompt: @Audio1 cites a reference audio, but none is given'],
      ['image.mention', 'shots.1.prompt', 'shots.1.prompt: @Image3 cites reference image 3, but only 2 are given'],
    ]);
    const two = validateReferences({ family: '2x', references: [], body: { prompt: 'with the sound of @Audio1' } });
    expect(two.errors.map((e) => e.message)).toEqual([
      'prompt: @Audio1 cites a reference audio, but video 2.x takes none',
    ]);
  });

  it('needs image for image_end (2.x and 1.x)', () => {
    expect(rules(checkBody('2x', { image_end: 'https://x/b.png' }))).toEqual(['image_end.requires_image']);
    expect(rules(checkBody('1x', { image_end: 'https://x/b.png' }))).toEqual(['image_end.requires_image']);
    expect(checkBody('1x', { image: 'https://x/a.png', image_end: 'https://x/b.png' }).errors).toEqual([]);
  });

  it('takes no reference videos in other families', () => {
    expect(rules(validateReferences({ family: '25', references: [vid()] }))).toEqual(['video.count']);
    expect(validateReferences({ family: '25', references: [img()], body: { prompt: 'like @Image1' } }).ok).toBe(true);
    expect(rules(validateReferences({ family: 'lite', references: [vid()] }))).toEqual(['video.count']);
  });
});

describe('prompt limits per family', () => {
  const p = (n: number) => 'x'.repeat(n);
  it('2.x: 2,000 characters (the newer description), no warning below', () => {
    expect(checkBody('2x', { prompt: p(2000) })).toEqual({ errors: [], warnings: [] });
    const over = checkBody('2x', { prompt: p(2001) });
    expect(rules(over)).toEqual(['prompt.length']);
    expect(over.errors[0].message).toMatch(/at most 2000 characters \(found 2001\)/);
  });
  it('2.5: per-shot prompts count toward the 40,000', () => {
    const shots = [
      { prompt: p(20000), duration: 5 },
      { prompt: p(10000), duration: 5 },
    ];
    expect(checkBody('25', { prompt: p(10000), shots }).errors).toEqual([]);
    expect(rules(checkBody('25', { prompt: p(10001), shots }))).toEqual(['prompt.length']);
    expect(checkBody('25', { shots: [{ prompt: p(5001), duration: 5 }] }).warnings.map((w) => w.rule)).toEqual([
      'prompt.long',
    ]);
  });
  it('counts characters as code points: an emoji or a rare ideograph is one, not two UTF-16 units', () => {
    // U+1F3AC (clapper board) and U+20BB7 (a CJK ideograph outside the BMP): two code units each.
    for (const astral of ['\u{1F3AC}', '\u{20BB7}']) {
      expect(checkBody('lite', { prompt: astral.repeat(20000) }).errors, astral).toEqual([]);
      const over = checkBody('lite', { prompt: astral.repeat(20001) });
      expect(over.errors.map((e) => e.message)).toEqual([
        'prompt: prompts together must be at most 20000 characters (found 20001)',
      ]);
    }
    expect(checkBody('2x', { prompt: 'x'.repeat(4999) + '\u{1F3AC}' }).warnings).toEqual([]);
    expect(
      checkBody('25', { prompt: 'x'.repeat(39_999), shots: [{ prompt: '\u{1F3AC}', duration: 4 }] }).errors,
    ).toEqual([]);
  });
  it('end frame (Veo 3.1) and lite: 20,000', () => {
    expect(checkBody('1x', { prompt: p(20000) }).errors).toEqual([]);
    expect(rules(checkBody('1x', { prompt: p(20001) }))).toEqual(['prompt.length']);
    expect(checkBody('lite', { prompt: p(20000) }).errors).toEqual([]);
    expect(rules(checkBody('lite', { prompt: p(20001) }))).toEqual(['prompt.length']);
  });
});

describe('a request that describes nothing', () => {
  it('is not a reference problem: the builder probes with a partial body (2.5 images, no prompt yet)', () => {
    expect(validateReferences({ family: '25', references: [img()], body: {} })).toEqual({
      ok: true,
      errors: [],
      warnings: [],
    });
    expect(checkBody('1x', {}).errors).toEqual([]);
  });
});

describe('5.0 image edit references', () => {
  it('1 to 5 images', () => {
    expect(rules(validateReferences({ family: 'image50-edit', references: [] }))).toEqual(['image.count']);
    expect(validateReferences({ family: 'image50-edit', references: Array.from({ length: 5 }, () => img()) }).ok).toBe(
      true,
    );
    expect(
      rules(validateReferences({ family: 'image50-edit', references: Array.from({ length: 6 }, () => img()) })),
    ).toEqual(['image.count']);
  });
  it('JPG or PNG, at least 256x256, at most 10 MB', () => {
    const one = (over: Partial<Probe>) =>
      rules(validateReferences({ family: 'image50-edit', references: [img(over)] }));
    expect(one({ width: 256, height: 256, bytes: 10 * MB })).toEqual([]);
    expect(one({ format: 'jpeg', container: 'jpeg' })).toEqual([]);
    expect(one({ width: 255, height: 256 })).toEqual(['image.minSize']);
    expect(one({ width: 256, height: 255 })).toEqual(['image.minSize']);
    expect(one({ bytes: 10 * MB + 1 })).toEqual(['image.bytes']);
    expect(one({ format: 'webp', container: 'webp' })).toEqual(['image.format']);
    expect(rules(validateReferences({ family: 'image50-edit', references: [vid()] }))).toEqual(['image.format']);
  });
});

describe('start and end frames', () => {
  it('are the single image fields of every tool of the family', () => {
    expect(frameFields('2x')).toEqual(['image', 'image_end']);
    expect(frameFields('1x')).toEqual(['image', 'image_end']);
    expect(frameFields('lite')).toEqual(['image']);
    expect(frameFields('25')).toEqual([]);
  });
  it("are held to their field's formats (JPG or PNG), not to the reference images' (which take WebP)", () => {
    const frame = (over: Partial<Probe>) => checkImage(img(over), '2x', { field: 'image' }).map((e) => e.message);
    expect(frame({})).toEqual([]);
    expect(frame({ source: '/tmp/start.webp', format: 'webp', container: 'webp' })).toEqual([
      'start.webp: format webp is not JPG or PNG',
    ]);
    expect(checkImage(img({ format: 'webp', container: 'webp' }), '25', { field: 'reference_images' })).toEqual([]);
    expect(checkImage(vid(), '1x', { field: 'image_end' }).map((e) => e.rule)).toEqual(['image.format']);
    // The spec states no size limits for frames: a small frame is the service's to judge.
    expect(frame({ width: 64, height: 48, bytes: 30 * MB })).toEqual([]);
  });
});

describe('video upscaler', () => {
  it('needs at least 15 fps only when target_fps is set', () => {
    const slow = vid({ fps: 14 });
    expect(validateReferences({ family: 'upscaler', references: [slow] }).ok).toBe(true);
    expect(rules(validateReferences({ family: 'upscaler', references: [slow], body: { target_fps: 60 } }))).toEqual([
      'upscaler.fps',
    ]);
    expect(
      validateReferences({ family: 'upscaler', references: [vid({ fps: 15 })], body: { target_fps: 60 } }).ok,
    ).toBe(true);
  });
  it('takes exactly one MP4/MOV video', () => {
    expect(rules(validateReferences({ family: 'upscaler', references: [] }))).toEqual(['video.count']);
    expect(rules(validateReferences({ family: 'upscaler', references: [vid(), vid()] }))).toEqual(['video.count']);
    expect(rules(validateReferences({ family: 'upscaler', references: [img()] }))).toEqual(['video.container']);
  });
});
