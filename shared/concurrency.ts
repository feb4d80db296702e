/**
 * `emit` at most once per `ms`, except a value whose `stepOf` differs from the last one emitted's:
 * it goes at once, so a new step (a new file, the last count) never lags behind the throttle.
 */
export function throttled<T>(emit: (v: T) => void, ms: number, stepOf: (v: T) => string = () => ''): (v: T) => void {
  let last = -Infinity;
  let step: string | null = null;
  return (v) => {
    const now = performance.now();
    const s = stepOf(v);
    if (s === step && now - last < ms) return;
    step = s;
    last = now;
    emit(v);
  };
}

/** Runs `fn` over items with at most `n` at a time, keeping order: I/O fan-out that stays polite. */
export async function mapLimit<T, R>(
  items: readonly T[],
  n: number,
  fn: (t: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

/** Work run one piece after another: each starts once the one before has ended, whether it failed or not. */
export function oneAfterAnother(): { run<T>(work: () => Promise<T>): Promise<T>; idle(): Promise<void> } {
  let last: Promise<unknown> = Promise.resolve();
  return {
    run(work) {
      const turn = last.then(work);
      last = turn.catch(() => {});
      return turn;
    },
    /** Settles once everything handed over so far has ended. */
    async idle() {
      await last;
    },
  };
}
