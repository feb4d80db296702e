import { describe, expect, it } from 'vitest';
import { makesWords, rankTools, searchTools, TOOLS } from '../../shared/catalogue/index.ts';
import { presetNameProblem, presetProblem, STARTER_PRESETS } from '../../shared/presets.ts';

const ids = (query: string) => searchTools(TOOLS, query).map((t) => t.id);

describe('finding a tool by the words a person types', () => {
  it('by name, by model and by a word with another ending', () => {
    expect(ids('upscale')).toEqual(expect.arrayContaining(['upscaler-creative', 'upscaler-precision']));
    expect(ids('magnific')).toEqual(['upscaler-creative']);
    expect(ids('kling')).toEqual(['kling-i2v']);
    expect(ids('isolate')).toEqual(['audio-isolation']);
    expect(ids('ideogram')).toEqual(['image-expand']);
    expect(ids('no such tool anywhere')).toEqual([]);
  });

  it('by what it makes and what it takes, in any order', () => {
    const videoFromImage = ids('takes image makes video');
    expect(videoFromImage).toEqual(expect.arrayContaining(['kling-i2v', 'lite-i2v', 'talking-portrait']));
    expect(videoFromImage).not.toContain('lite-t2v');
    expect(ids('makes audio takes audio')).toEqual(['audio-isolation']);
    expect(makesWords(TOOLS.find((t) => t.id === 'talking-portrait')!)).toBe('video from image and audio');
  });

  it('favourites first in the order starred, then the recently used, then the catalogue order', () => {
    const ranked = rankTools(TOOLS, ['relight', 'music'], ['hires', 'relight', 'editor']).map((t) => t.id);
    expect(ranked.slice(0, 4)).toEqual(['relight', 'music', 'hires', 'editor']);
    expect(ranked.slice(4)).toEqual(TOOLS.map((t) => t.id).filter((id) => !ranked.slice(0, 4).includes(id)));
  });
});

describe('starter presets of the favourites', () => {
  it('each is a valid setting of a Studio tool, named once', () => {
    for (const p of STARTER_PRESETS) {
      expect(presetProblem(p.tool, p.params), `${p.tool}: ${p.name}`).toBeNull();
      expect(presetNameProblem(p.name), p.name).toBeNull();
      expect(['image', 'prompt']).toContain(TOOLS.find((t) => t.id === p.tool)?.group);
    }
    expect(new Set(STARTER_PRESETS.map((p) => p.name)).size).toBe(STARTER_PRESETS.length);
    // A preset that does not fit is caught by the same check.
    expect(presetProblem('upscaler-creative', { creativity: 11 })).toBe('creativity must be at most 10');
  });
});
