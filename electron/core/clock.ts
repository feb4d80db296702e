/**
 * Time as the engine reads it and waits on it: real time in the app, a clock a test moves
 * (test/clock.ts) so paced work runs in a fraction of its wall time.
 */
export interface Clock {
  now(): number;
  /** Calls `fn` once `ms` have passed on this clock. */
  setTimeout(fn: () => void, ms: number): ClockTimer;
  clearTimeout(timer: ClockTimer): void;
}

/** A pending call of Clock.setTimeout, only for its clearTimeout. */
export type ClockTimer = { readonly __clockTimer?: never } | NodeJS.Timeout;

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout),
};

/** Resolves after `ms` on `clock`. */
export const sleepOn = (clock: Clock, ms: number): Promise<void> =>
  new Promise((resolve) => clock.setTimeout(resolve, ms));

/** Lets the process exit while `timer` is pending, as Node's `unref` (a TestClock's timers hold nothing). */
export const unrefTimer = (timer: ClockTimer): ClockTimer => ((timer as Partial<NodeJS.Timeout>).unref?.(), timer);
