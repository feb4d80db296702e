import { describe, expect, it } from 'vitest';
import { oneAfterAnother } from '../../shared/concurrency.ts';

describe('oneAfterAnother', () => {
  it('starts each piece of work once the one before has ended, a failed one too, and says when all have', async () => {
    const turns = oneAfterAnother();
    const seen: string[] = [];
    let release!: () => void;
    const first = turns.run(async () => {
      seen.push('first starts');
      await new Promise<void>((done) => (release = done));
      seen.push('first ends');
      throw new Error('first failed');
    });
    const second = turns.run(async () => {
      seen.push('second starts');
      return 2;
    });
    const idle = turns.idle().then(() => seen.push('idle'));
    await Promise.resolve();
    expect(seen).toEqual(['first starts']);
    release();
    await expect(first).rejects.toThrow('first failed');
    expect(await second).toBe(2);
    await idle;
    expect(seen).toEqual(['first starts', 'first ends', 'second starts', 'idle']);
  });
});
