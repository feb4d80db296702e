/** Runs `fn` over items with at most `n` at a time, keeping order: I/O fan-out that stays polite. */
export async function mapLimit<T, R>(items: readonly T[], n: number, fn: (t: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  }));
  return out;
}
