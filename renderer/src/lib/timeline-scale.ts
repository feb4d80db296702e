/** The audit timeline's x axis (seconds, UTC): its range and tick labels, apart from the chart so they can be tested. */
import { formatDate, formatMonth, formatTime } from '../../../shared/dates.ts';

export type TimelineBucket = 'hour' | 'day';

const HOUR = 3600;
const DAY = 24 * HOUR;
/** The least span shown: a single bucket is one bar among empty days, not the whole width with ticks years apart. */
const MIN_SPAN: Record<TimelineBucket, number> = { hour: 24 * HOUR, day: 7 * DAY };

/**
 * Half a bucket beyond the first and last, so their bars are whole, and at least MIN_SPAN, centred
 * on the data. With no events, the span before `now`.
 */
export function timelineRange(
  bucket: TimelineBucket,
  min: number | null,
  max: number | null,
  now: number,
): [number, number] {
  const step = bucket === 'hour' ? HOUR : DAY;
  const want = MIN_SPAN[bucket];
  if (min === null || max === null || !Number.isFinite(min) || !Number.isFinite(max))
    return [Math.floor(now) - want, Math.floor(now)];
  let lo = min - step / 2;
  let hi = max + step / 2;
  if (hi - lo < want) {
    const pad = (want - (hi - lo)) / 2;
    lo -= pad;
    hi += pad;
  }
  return [lo, hi];
}

/** In UTC, in the one date format: the hour inside a day of hours, the day across days, the month once the axis spans half a year. */
export function timelineTick(bucket: TimelineBucket, t: number, span: number): string {
  const ms = t * 1000;
  if (span >= 180 * DAY) return formatMonth(ms, { utc: true });
  return bucket === 'hour' && ms % (DAY * 1000) !== 0 ? formatTime(ms, { utc: true }) : formatDate(ms, { utc: true });
}
