import type { Granularity } from '../../../shared/contract/team.ts';

/** The UTC day of a moment, YYYY-MM-DD: the days credit usage is asked for and counted in. */
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/**
 * What a credit-usage bucket is called. Its date is the bucket's first UTC day as the service
 * sends it (weeks start on Monday), so the label is cut from that text and never goes through
 * the viewer's time zone, which west of UTC turned 2026-11-02 into the evening of 2026-11-01.
 */
export function bucketLabel(date: string, granularity: Granularity): string {
  if (granularity === 'year') return date.slice(0, 4);
  if (granularity === 'month') return date.slice(0, 7);
  if (granularity === 'week') return `week of ${date}`;
  return date;
}
