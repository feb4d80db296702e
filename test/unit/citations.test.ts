import { describe, expect, it } from 'vitest';
import { withoutCitation } from '../../renderer/src/lib/citations.ts';
import { checkRules, getTool } from '../../shared/catalogue/index.ts';

describe('withoutCitation', () => {
  it('moves later citations down so each still names the same file', () => {
    const r = withoutCitation('Car from @Image3 drives past @Image2, mood of @Image1', 'Image', 2);
    expect(r).toEqual({ text: 'Car from @Image2 drives past, mood of @Image1', dropped: 1, moved: 1 });
  });

  it('takes out the removed item without leaving doubled spaces', () => {
    expect(withoutCitation('mood of @Image1 and light', 'Image', 1).text).toBe('mood of and light');
    expect(withoutCitation('@Image1 sets the mood', 'Image', 1).text).toBe('sets the mood');
    expect(withoutCitation('as in @Image1.', 'Image', 1).text).toBe('as in.');
    expect(withoutCitation('@Image1 @Image2 @Image3', 'Image', 2).text).toBe('@Image1 @Image2');
  });

  it('leaves other kinds and earlier citations alone', () => {
    const r = withoutCitation('Move like @Video2 in the style of @Image2 and @Video1', 'Video', 2);
    expect(r).toEqual({ text: 'Move like in the style of @Image2 and @Video1', dropped: 1, moved: 0 });
  });

  it('keeps a prompt valid against the list that is left (the mention rule of 2.5)', () => {
    const tool = getTool('video-25');
    const refs = ['a.png', 'b.png', 'c.png'];
    const prompt = 'Car from @Image3, mood of @Image1';
    const left = refs.filter((_, i) => i !== 0);
    const edited = withoutCitation(prompt, 'Image', 1).text;
    // Before the edit the old prompt fails against the shorter list (@Image3 of 2), and would
    // silently re-point @Image1 from a.png to b.png; after it, the car is still c.png (@Image2).
    expect(checkRules(tool.rules!, { prompt, reference_images: left })).not.toEqual([]);
    expect(edited).toBe('Car from @Image2, mood of');
    expect(checkRules(tool.rules!, { prompt: edited, reference_images: left })).toEqual([]);
  });
});
