import { describe, expect, it, vi } from 'vitest';
import { sleepOn } from '../../electron/core/clock.ts';
import { TestClock } from '../clock.ts';

describe('TestClock', () => {
  it('calls timers only once time is moved past them, in order, and never a cleared one', async () => {
    const clock = new TestClock(1000);
    const called: string[] = [];
    clock.setTimeout(() => called.push('b'), 20);
    clock.setTimeout(() => called.push('a'), 10);
    const cleared = clock.setTimeout(() => called.push('cleared'), 15);
    clock.clearTimeout(cleared);
    clock.advance(9);
    await new Promise((r) => setImmediate(r));
    expect(called).toEqual([]);
    clock.advance(11);
    await vi.waitFor(() => expect(called).toEqual(['a', 'b']));
    expect(clock.now()).toBe(1020);
    expect(clock.nextAt).toBe(null);
  });

  it('runs time by itself to the next timer only while idle', async () => {
    const clock = new TestClock(0);
    let busy = true;
    let asked = 0;
    const stop = clock.autoAdvance(() => (asked++, !busy));
    try {
      const slept = sleepOn(clock, 60_000);
      // Busy (a request in flight): time stands still, however often it is asked.
      await vi.waitFor(() => expect(asked).toBeGreaterThan(10));
      expect(clock.now()).toBe(0);
      busy = false;
      await slept;
      expect(clock.now()).toBe(60_000);
    } finally {
      stop();
    }
  });
});
