import { formatDate, formatDateRange, formatMonth } from './dates.ts';

/** The buckets credit usage is asked for in (the contract's `granularity`, team.ts). */
export const GRANULARITIES = ['day', 'week', 'month', 'year'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

/** The UTC days a usage query asked for, as the service echoes them (inclusive). */
export interface UsageRange {
  start_date: string;
  end_date: string;
}

const DAY = 86_400_000;
/** The UTC day of a moment, YYYY-MM-DD: the days credit usage is asked for and counted in. */
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/**
 * A credit-usage bucket's name, cut from the first UTC day the service sends (weeks from Monday),
 * never through the viewer's time zone (west of UTC a day would read as the one before). With the
 * query's range, a bucket the range cuts says which of its days it counts.
 */
export function bucketLabel(date: string, granularity: Granularity, range?: UsageRange): string {
  const part = range ? partialDays(date, granularity, range) : null;
  return part ? `${baseLabel(date, granularity)} (partial: ${part} only)` : baseLabel(date, granularity);
}

function baseLabel(date: string, granularity: Granularity): string {
  if (granularity === 'year') return date.slice(0, 4);
  if (granularity === 'month') return formatMonth(date.slice(0, 7));
  if (granularity === 'week') return `week of ${formatDate(date)}`;
  return formatDate(date);
}

/** An x-axis tick of the usage chart (seconds, UTC days) in the one date format, as coarse as the buckets. */
export function usageTick(t: number, granularity: Granularity): string {
  if (granularity === 'year') return utcDay(t * 1000).slice(0, 4);
  return granularity === 'month' ? formatMonth(t * 1000, { utc: true }) : formatDate(t * 1000, { utc: true });
}

/**
 * The days of `date`'s bucket the range covers ("Mar 5–9"), or null for all: the service counts
 * only days in range, so a cut first or last bucket looks like less use. The bucket is found from
 * the date, in case a service names a cut bucket by its first day in the range.
 */
export function partialDays(date: string, granularity: Granularity, range: UsageRange): string | null {
  const c = bucketCover(date, granularity, range);
  return c.partial ? formatDateRange(c.first, c.last) : null;
}

/** The first and last UTC day of the bucket holding `date` that the range covers, and whether the range cuts the bucket. */
export function bucketCover(
  date: string,
  granularity: Granularity,
  range: UsageRange,
): { first: string; last: string; partial: boolean } {
  if (granularity === 'day') return { first: date, last: date, partial: false };
  const [start, end] = bucketDays(date, granularity);
  const first = start < range.start_date ? range.start_date : start;
  const last = end > range.end_date ? range.end_date : end;
  return { first, last, partial: first !== start || last !== end };
}

/** First and last UTC day of the week (from Monday), month or year holding `date`. */
function bucketDays(date: string, granularity: Exclude<Granularity, 'day'>): [string, string] {
  const t = Date.parse(`${date}T00:00:00Z`);
  const d = new Date(t);
  if (granularity === 'week') {
    const monday = t - ((d.getUTCDay() + 6) % 7) * DAY;
    return [utcDay(monday), utcDay(monday + 6 * DAY)];
  }
  if (granularity === 'month')
    // Day 0 of the next month (months count from 0) is this month's last.
    return [`${date.slice(0, 7)}-01`, utcDay(Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)), 0))];
  return [`${date.slice(0, 4)}-01-01`, `${date.slice(0, 4)}-12-31`];
}
