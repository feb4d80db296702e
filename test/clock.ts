// A clock tests move (core/clock.ts): time stands still until advanced, or runs by itself from one
// timer to the next whenever the code under test is idle (a discrete-event run of paced work).
import type { Clock, ClockTimer } from '../electron/core/clock.ts';

interface Pending {
  at: number;
  seq: number;
  fn: () => void;
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

export class TestClock implements Clock {
  private t: number;
  private seq = 0;
  private readonly pending = new Set<Pending>();
  private flushing = false;

  constructor(start = Date.now()) {
    this.t = start;
  }

  now = (): number => this.t;

  setTimeout = (fn: () => void, ms: number): ClockTimer => {
    const timer: Pending = { at: this.t + Math.max(0, ms), seq: this.seq++, fn };
    this.pending.add(timer);
    // Due at once: called on a later turn, as a real timer would be.
    if (timer.at <= this.t) this.flushSoon();
    return timer as unknown as ClockTimer;
  };

  clearTimeout = (timer: ClockTimer): void => {
    this.pending.delete(timer as unknown as Pending);
  };

  /** Moves time on by `ms` (and no further), calling the timers that fall due on the way, in order. */
  advance(ms: number): void {
    this.t += ms;
    this.flushSoon();
  }

  /** When the next timer falls due; null when none is pending. */
  get nextAt(): number | null {
    let next: number | null = null;
    for (const p of this.pending) if (next === null || p.at < next) next = p.at;
    return next;
  }

  /**
   * Runs time by itself until stopped: once `idle()` has held for a few turns of the event loop (no
   * request in flight, nothing due now), jumps to the next timer. Returns the stop.
   */
  autoAdvance(idle: () => boolean, quietTurns = 3): () => void {
    let on = true;
    void (async () => {
      let quiet = 0;
      while (on) {
        const next = this.nextAt;
        const still = next !== null && next > this.t && idle();
        // Waiting on I/O: a real millisecond, not a spin of the event loop.
        await (still ? turn() : new Promise((resolve) => setTimeout(resolve, 1)));
        quiet = still && this.nextAt === next ? quiet + 1 : 0;
        if (quiet >= quietTurns) {
          this.advance(next! - this.t);
          quiet = 0;
        }
      }
    })();
    return () => {
      on = false;
    };
  }

  private flushSoon(): void {
    if (this.flushing) return;
    this.flushing = true;
    setImmediate(() => {
      this.flushing = false;
      const due = [...this.pending].filter((p) => p.at <= this.t).sort((a, b) => a.at - b.at || a.seq - b.seq);
      for (const p of due) {
        if (!this.pending.delete(p)) continue;
        p.fn();
      }
    });
  }
}

/**
 * A clock on which every wait is over on the next turn: for the API client's retry waits in tests
 * that look at what is retried, not for how long (test/engine/client.test.ts measures the waits).
 */
export const waitsAtOnce: Clock = {
  now: () => Date.now(),
  setTimeout: (fn) => setImmediate(fn) as unknown as ClockTimer,
  clearTimeout: (timer) => clearImmediate(timer as unknown as NodeJS.Immediate),
};
