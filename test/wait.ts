// The suite's one way to wait for a state no event announces: vi.waitFor on a check, within the
// tests' own timeout unless told otherwise (never a timed assertion: a slow machine only waits longer).
import { vi } from 'vitest';

type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

/** Resolves with `check`'s first truthy answer; fails with `what` (and `log()`, when given) past `timeout`. */
export function until<T>(
  check: () => T | Promise<T>,
  {
    what = 'the condition',
    timeout = 60_000,
    interval = 25,
    log,
  }: { what?: string; timeout?: number; interval?: number; log?: () => string } = {},
): Promise<Truthy<T>> {
  return vi.waitFor(
    async () => {
      const v = await check();
      if (!v) throw new Error(`still waiting for ${what}${log ? `:\n${log()}` : ''}`);
      return v as Truthy<T>;
    },
    { timeout, interval },
  );
}
