/** Rows inside the dates already written: a few (a file nearly in order) are cheap, many are random writes. */
const OUT_OF_ORDER_SHARE = 0.01;

/** The dates written so far by a load that goes in as read. */
export type DateSpan = { lo: number; hi: number } | null;

/** Whether a batch of dates `ts` (ascending) lands at one end of `span`, not among its dates. */
export function inOrder(ts: Float64Array, span: DateSpan): boolean {
  if (!span) return true;
  let inside = 0;
  for (const t of ts) if (t > span.lo && t < span.hi) inside++;
  return inside <= ts.length * OUT_OF_ORDER_SHARE;
}

/** The batch's dates, a few stray ones at either end left out so they do not block the rest of the file. */
export function widen(ts: Float64Array, span: DateSpan): { lo: number; hi: number } {
  const skip = Math.floor(ts.length * OUT_OF_ORDER_SHARE);
  return {
    lo: Math.min(span?.lo ?? Infinity, ts[skip]),
    hi: Math.max(span?.hi ?? -Infinity, ts[ts.length - 1 - skip]),
  };
}
