import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SLUGS,
  FAMILIES,
  familyOfTool,
  TOOLS,
  toolsOfFamily,
  defaultsOf,
  getTool,
  optionLabel,
  parseParam,
  resolvePaths,
  validateRequest,
} from '../../shared/catalogue/index.ts';

const png =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

describe('tool catalogue', () => {
  it('has unique ids and only paths under /v1 with no unresolved placeholder', () => {
    expect(new Set(TOOLS.map((t) => t.id)).size).toBe(TOOLS.length);
    for (const t of TOOLS) {
      const p = resolvePaths(t, DEFAULT_SLUGS);
      expect(p.create).toMatch(/^\/v1\/[a-z0-9/._-]+$/);
      expect(p.byId('abc')).toBe(`${p.list}/abc`);
    }
  });

  it('labels every aspect ratio as a person reads it, from the API value alone', () => {
    expect(optionLabel('classic_4_3')).toBe('Classic 4:3');
    expect(optionLabel('widescreen_16_9')).toBe('Widescreen 16:9');
    expect(optionLabel('smartphone_vertical_9_20')).toBe('Smartphone vertical 9:20');
    expect(optionLabel('16:9')).toBe('16:9');
    expect(optionLabel('enhance_skin')).toBe('enhance skin');
    for (const t of TOOLS) {
      for (const f of t.fields) {
        if (f.kind !== 'enum' || f.name !== 'aspect_ratio') continue;
        for (const o of f.options) expect(optionLabel(o), `${t.id} ${o}`).toMatch(/^([A-Z][a-z]*( [a-z]+)* )?\d+:\d+$/);
      }
    }
  });

  it('covers every task family of the spec', () => {
    const families = new Set(TOOLS.map((t) => t.endpoint));
    for (const f of [
      'skin-enhancer',
      'hires',
      'change-camera',
      'upscaler-precision',
      'image-to-prompt',
      'context-t2i',
      'editor',
      'music',
      'music-instrumental',
      'music-variants',
      'video-2x',
      'video-25',
      'i2v-endframe',
      'i2v-endframe-fast',
      'lite-t2v',
      'lite-i2v',
      'video-upscaler',
      'quality-image',
      'quality-edit',
      'image50',
      'image50-edit',
      'flex-image',
    ]) {
      expect(families, f).toContain(f);
    }
  });

  it('puts every video tool in a model family (its tab of the Video builder), and every family has tools', () => {
    for (const t of TOOLS.filter((x) => x.group === 'video')) expect(t.family, t.id).toBeDefined();
    for (const f of FAMILIES) expect(toolsOfFamily(f).length, f).toBeGreaterThan(0);
    expect(toolsOfFamily('1x').map((t) => t.id)).toEqual(['i2v-endframe', 'i2v-endframe-fast']);
    expect(familyOfTool('lite-i2v')).toBe('lite');
    expect(familyOfTool('hires')).toBeUndefined();
  });

  it('puts the video resolution in the create path, not the body', () => {
    const t = getTool('video-2x');
    expect(resolvePaths(t, DEFAULT_SLUGS, { resolution: '1080p' }).create).toBe('/v1/ai/video/seedance-2-pro-1080p');
    expect(resolvePaths(t, DEFAULT_SLUGS, {}).list).toBe('/v1/ai/video/seedance-2-pro');
  });

  it('names the field and the bound when a value is out of range', () => {
    const r = validateRequest(getTool('change-camera'), {
      image: 'https://example.com/a.png',
      zoom: 11,
      vertical_angle: -31,
    });
    expect(r.ok).toBe(false);
    expect(r.invalid).toEqual(
      expect.arrayContaining([
        { field: 'zoom', reason: 'must be at most 10' },
        { field: 'vertical_angle', reason: 'must be at least -30' },
      ]),
    );
  });

  it('refuses a local-file encoding where the spec wants a URL', () => {
    const r = validateRequest(getTool('change-camera'), { image: png });
    expect(r.invalid).toEqual([{ field: 'image', reason: 'must be an HTTPS URL' }]);
    expect(validateRequest(getTool('image-to-prompt'), { image: png }).ok).toBe(true);
  });

  it('rejects unknown fields and missing required ones', () => {
    const r = validateRequest(getTool('upscaler-precision'), { scale: 4 });
    expect(r.invalid).toEqual(
      expect.arrayContaining([
        { field: 'image', reason: 'is required' },
        { field: 'scale', reason: 'is not a field of this tool' },
      ]),
    );
  });

  it('says what is wrong with a value of the wrong type, and "is required" only when it is missing', () => {
    const t = getTool('skin-creative');
    for (const sharpen of [2.5, 'x', null]) {
      expect(validateRequest(t, { image: 'https://example.com/a.png', sharpen }).invalid, String(sharpen)).toEqual([
        { field: 'sharpen', reason: 'must be a whole number' },
      ]);
    }
    expect(validateRequest(t, { sharpen: 5 }).invalid).toEqual([{ field: 'image', reason: 'is required' }]);
    expect(validateRequest(t, { image: 42 }).invalid).toEqual([
      { field: 'image', reason: expect.not.stringMatching(/required/) },
    ]);
  });

  it('accepts the string form of the scale factor and coerces it', () => {
    const r = validateRequest(getTool('upscaler-precision'), { image: png, scale_factor: '4' });
    expect(r.ok).toBe(true);
    expect(r.body.scale_factor).toBe(4);
    expect(validateRequest(getTool('upscaler-precision'), { image: png, scale_factor: '17' }).invalid[0].field).toBe(
      'scale_factor',
    );
  });

  it('applies the video combination rules of the spec', () => {
    const t = getTool('video-2x');
    expect(validateRequest(t, { prompt: 'x', image_end: png }).invalid).toContainEqual({
      field: 'image_end',
      reason: 'image_end requires image (the start frame)',
    });
    // The newer description's 2.x takes no reference media: a citation of one is refused on the prompt.
    expect(validateRequest(t, { prompt: 'see @Video1', image: png }).invalid).toEqual([
      { field: 'prompt', reason: '@Video1 cites a reference video, but video 2.x takes none' },
    ]);
    expect(validateRequest(t, { prompt: 'x', duration: 4 }).invalid).toEqual([
      { field: 'duration', reason: expect.stringMatching(/5.*10/) },
    ]);
  });

  it('names each citation of a kind the family takes none of, or beyond the list, on its prompt', () => {
    const t25 = getTool('video-25');
    expect(
      validateRequest(t25, { prompt: 'like @Image1, moving as @Video1', reference_images: [png] }).invalid,
    ).toEqual([{ field: 'prompt', reason: '@Video1 cites a reference video, but video 2.5 takes none' }]);
    expect(validateRequest(t25, { prompt: '@Image1 and @Image3', reference_images: [png, png] }).invalid).toEqual([
      { field: 'prompt', reason: '@Image3 cites reference image 3, but only 2 are given' },
    ]);
    expect(validateRequest(t25, { shots: [{ prompt: 'hum @Audio2', duration: 4 }], duration: 4 }).invalid).toEqual([
      { field: 'shots.0.prompt', reason: '@Audio2 cites a reference audio, but none is given' },
    ]);
    expect(validateRequest(t25, { prompt: 'with @Image0', reference_images: [png] }).invalid).toEqual([
      { field: 'prompt', reason: '@Image0 cites no reference image: they are numbered from @Image1' },
    ]);
    expect(validateRequest(getTool('video-2x'), { prompt: 'with @Audio1' }).invalid).toEqual([
      { field: 'prompt', reason: '@Audio1 cites a reference audio, but video 2.x takes none' },
    ]);
    expect(
      validateRequest(t25, {
        prompt: 'like @Image1 and @Image2, to @Audio1',
        reference_images: [png, png],
        reference_audios: [png],
      }).ok,
    ).toBe(true);
  });

  it('counts text lengths in code points, so an emoji is one character as the limit means', () => {
    const clapper = '\u{1F3AC}';
    const lite = getTool('lite-t2v');
    expect(validateRequest(lite, { prompt: clapper.repeat(20_000) }).ok).toBe(true);
    expect(validateRequest(lite, { prompt: clapper.repeat(20_001) }).invalid).toEqual([
      { field: 'prompt', reason: 'must be at most 20000 characters' },
    ]);
    expect(validateRequest(lite, { prompt: 'x', negative_prompt: clapper.repeat(20_000) }).ok).toBe(true);
    expect(
      validateRequest(getTool('video-25'), { shots: [{ prompt: clapper.repeat(40_000), duration: 4 }], duration: 4 })
        .ok,
    ).toBe(true);
    expect(validateRequest(getTool('music-variants'), { prompt: clapper.repeat(9) }).invalid).toEqual([
      { field: 'prompt', reason: 'must be at least 10 characters' },
    ]);
    expect(validateRequest(getTool('video-2x'), { prompt: clapper.repeat(2000) }).ok).toBe(true);
    expect(validateRequest(getTool('video-2x'), { prompt: clapper.repeat(2001) }).invalid).toEqual([
      { field: 'prompt', reason: 'must be at most 2000 characters' },
    ]);
  });

  it('wants a 2.5 prompt or shots, and an end-frame start frame and prompt: a request that describes nothing is refused', () => {
    const t25 = getTool('video-25');
    expect(validateRequest(t25, { duration: 8 }).invalid).toEqual([
      { field: 'prompt', reason: 'is required (or add shots, each with a prompt of its own)' },
    ]);
    expect(validateRequest(t25, { shots: [{ prompt: 'a pier', duration: 5 }], duration: 5 }).ok).toBe(true);
    // An emptied duration input gives null: said in words, not as zod's "expected number, received null".
    expect(validateRequest(t25, { shots: [{ prompt: 'a pier', duration: null }], duration: 5 }).invalid).toEqual([
      { field: 'shots.0.duration', reason: 'must be a whole number of seconds' },
    ]);
    for (const id of ['i2v-endframe', 'i2v-endframe-fast']) {
      expect(validateRequest(getTool(id), {}).invalid).toEqual([
        { field: 'prompt', reason: 'is required' },
        { field: 'image', reason: 'is required' },
      ]);
      expect(validateRequest(getTool(id), { prompt: 'a pier' }).ok).toBe(false);
      expect(validateRequest(getTool(id), { prompt: 'a pier', image: png }).ok).toBe(true);
    }
  });

  it('warns that a LoRA style is ignored beside a reference image (api-notes), and only then', () => {
    const t = getTool('hires');
    const styled = { prompt: 'a harbour', styling: { styles: [{ name: 'Watercolor', strength: 80 }] } };
    expect(validateRequest(t, styled).warnings).toEqual([]);
    for (const ref of ['structure_reference', 'style_reference']) {
      const r = validateRequest(t, { ...styled, [ref]: png });
      expect(r.ok).toBe(true);
      expect(r.warnings).toEqual([{ field: 'styling', reason: expect.stringContaining('LoRA style is ignored') }]);
    }
    // A character is not a style: the note speaks of styles only.
    expect(
      validateRequest(t, {
        prompt: 'a harbour',
        style_reference: png,
        styling: { characters: [{ id: 6, strength: 85 }] },
      }).warnings,
    ).toEqual([]);
  });

  it('counts per-shot prompts in the 2.5 prompt limit and warns above 5,000', () => {
    const t = getTool('video-25');
    const shots = [
      { prompt: 'a'.repeat(30000), duration: 3 },
      { prompt: 'b'.repeat(10001), duration: 3 },
    ];
    expect(validateRequest(t, { shots }).invalid[0].reason).toMatch(/at most 40000 characters \(found 40001\)/);
    const ok = validateRequest(t, { prompt: 'c'.repeat(6000) });
    expect(ok.ok).toBe(true);
    expect(ok.warnings[0].field).toBe('prompt');
  });

  it('gives defaults from the spec and api-notes', () => {
    expect(defaultsOf(getTool('upscaler-precision'))).toMatchObject({ sharpen: 7, smart_grain: 7, ultra_detail: 30 });
    expect(defaultsOf(getTool('change-camera'))).toMatchObject({
      horizontal_angle: 0,
      vertical_angle: 0,
      zoom: 5,
      output_format: 'png',
    });
    expect(defaultsOf(getTool('skin-faithful'))).toMatchObject({ sharpen: 0, smart_grain: 2, skin_detail: 80 });
    expect(defaultsOf(getTool('video-2x'))).toEqual({
      resolution: '720p',
      duration: 5,
      aspect_ratio: 'widescreen_16_9',
      camera_fixed: false,
    });
  });

  it('parses CLI parameters by field kind, with specific errors', () => {
    const t = getTool('upscaler-precision');
    expect(parseParam(t, 'scale_factor=4')).toEqual(['scale_factor', 4]);
    expect(() => parseParam(t, 'scale_factor=four')).toThrow('scale_factor must be a number, got "four"');
    expect(() => parseParam(t, 'nope=1')).toThrow(/has no parameter "nope"/);
    expect(parseParam(getTool('video-2x'), 'camera_fixed=true')).toEqual(['camera_fixed', true]);
  });
});
