import { describe, expect, it } from 'vitest';
import { DEFAULT_SLUGS, TOOLS, resolvePaths, withDefaults } from '../../shared/catalogue/index.ts';
import { usageToolName } from '../../shared/usage-tools.ts';

describe("a tool as the team's credit usage names it, as people know it", () => {
  it('names each catalogue tool by its title, a path choice such as the resolution after it', () => {
    expect(usageToolName('video/seedance-2-5-pro-720p')).toBe('Video 2.5 (multi-shot), 720p');
    expect(usageToolName('image-upscaler-precision-v2')).toBe('Precision upscaler');
    expect(usageToolName('video-upscaler-topaz')).toBe('Video upscaler');
    // Every tool's own usage name (its create path, defaults filled in) reads as its title.
    for (const t of TOOLS) {
      const path = resolvePaths(t, DEFAULT_SLUGS, withDefaults(t, {})).create.replace(/^\/v1\/ai\//, '');
      expect(usageToolName(path).startsWith(t.title), `${path} -> ${usageToolName(path)}`).toBe(true);
    }
  });

  it('with the slugs in use, and a path no tool makes as words rather than a path', () => {
    expect(
      usageToolName('text-to-image/flux-kontext-max', { ...DEFAULT_SLUGS, context_model: 'flux-kontext-max' }),
    ).toBe(TOOLS.find((t) => t.create === '/v1/ai/text-to-image/{context_model}')!.title);
    expect(usageToolName('video/some-new-model-1080p')).toBe('Video: some new model 1080p');
    expect(usageToolName('brand-new-tool')).toBe('Brand new tool');
  });
});
