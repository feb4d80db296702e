import { describe, expect, it } from 'vitest';
import { carryValues } from '../../renderer/src/lib/carry.ts';
import { defaultsOf, getTool, validateRequest } from '../../shared/catalogue/index.ts';

describe('carryValues (switching a video variant)', () => {
  const t2v = getTool('lite-t2v');
  const i2v = getTool('lite-i2v');

  it('takes the shared fields along and keeps the fields only the target has', () => {
    const typed = {
      ...defaultsOf(t2v),
      prompt: 'A paper boat in a rain gutter',
      duration: 4,
      aspect_ratio: '9:16',
      seed: 7,
    };
    const target = { ...defaultsOf(i2v), image: 'https://example.com/boat.png' };
    const out = carryValues(t2v, i2v, typed, target);
    expect(out).toMatchObject({
      prompt: 'A paper boat in a rain gutter',
      duration: 4,
      aspect_ratio: '9:16',
      seed: 7,
      image: 'https://example.com/boat.png',
    });
    expect(validateRequest(i2v, out).ok).toBe(true);
  });

  it('clears what was cleared, and leaves behind a value the target would refuse', () => {
    const out = carryValues(
      t2v,
      i2v,
      { ...defaultsOf(t2v), prompt: 'x', seed: undefined },
      { ...defaultsOf(i2v), seed: 3 },
    );
    expect(out).not.toHaveProperty('seed');
    // The end-frame model renders 4K; lite does not, so 4k does not go along (end frame → lite is no variant pair, but the rule is the target's).
    const kept = carryValues(getTool('i2v-endframe'), t2v, { prompt: 'x', resolution: '4k' }, { resolution: '1080p' });
    expect(kept).toEqual({ prompt: 'x', resolution: '1080p' });
  });
});
