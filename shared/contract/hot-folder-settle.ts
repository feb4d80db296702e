// A hot folder's settle time, without zod: the renderer checks it without building the contract's
// schemas (hot-folders.ts re-exports it).

/** How long a file must keep its size and time before it is taken, per hot folder: whole seconds. */
export const SETTLE_SECONDS = { min: 1, max: 60, default: 2 } as const;
export const SETTLE_SECONDS_RULE = `a whole number of seconds from ${SETTLE_SECONDS.min} to ${SETTLE_SECONDS.max}`;
export const isSettleSeconds = (n: unknown): n is number =>
  Number.isInteger(n) && (n as number) >= SETTLE_SECONDS.min && (n as number) <= SETTLE_SECONDS.max;
