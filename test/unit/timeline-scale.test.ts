import { describe, expect, it } from 'vitest';
import { timelineRange, timelineTick } from '../../renderer/src/lib/timeline-scale.ts';
import { formatDate, formatMonth, formatTime } from '../../shared/dates.ts';

const DAY = 86_400;
const t = (iso: string) => Date.parse(iso) / 1000;

describe('audit timeline x axis', () => {
  it('shows a single day of events as one bar in the middle of a week, not across the whole width', () => {
    const d = t('2026-03-01T00:00:00Z');
    const [lo, hi] = timelineRange('day', d, d, t('2026-11-22T00:00:00Z'));
    expect(hi - lo).toBe(7 * DAY);
    expect((lo + hi) / 2).toBe(d);
    // The ticks stay within those days, in the one date format, in UTC.
    expect(timelineTick('day', lo, hi - lo)).toBe(formatDate('2026-02-25'));
    expect(timelineTick('day', hi, hi - lo)).toBe(formatDate('2026-03-04'));
  });

  it('keeps the first and last bars whole: half a bucket beyond each end', () => {
    const a = t('2026-03-01T00:00:00Z');
    const b = t('2026-03-15T00:00:00Z');
    expect(timelineRange('day', a, b, 0)).toEqual([a - DAY / 2, b + DAY / 2]);
    expect(timelineRange('hour', a, a + 30 * 3600, 0)).toEqual([a - 1800, a + 30 * 3600 + 1800]);
  });

  it('shows a day around a single hour, and the week before now when there are no events', () => {
    const h = t('2026-03-01T13:00:00Z');
    const [lo, hi] = timelineRange('hour', h, h, 0);
    expect([hi - lo, (lo + hi) / 2]).toEqual([DAY, h]);
    const now = t('2026-11-22T09:00:00Z');
    expect(timelineRange('day', null, null, now)).toEqual([now - 7 * DAY, now]);
    expect(timelineRange('hour', null, null, now)).toEqual([now - DAY, now]);
  });

  it('labels hours within a day, days across days, and months with the year across half a year', () => {
    const h = t('2026-03-01T13:00:00Z');
    expect(timelineTick('hour', h, DAY)).toBe(formatTime(h * 1000, { utc: true }));
    expect(timelineTick('hour', t('2026-03-02T00:00:00Z'), DAY)).toBe(formatDate('2026-03-02'));
    expect(timelineTick('day', t('2026-03-02T00:00:00Z'), 15 * DAY)).toBe(formatDate('2026-03-02'));
    expect(timelineTick('day', t('2025-07-01T00:00:00Z'), 400 * DAY)).toBe(formatMonth('2025-07'));
    if (new Intl.DateTimeFormat().resolvedOptions().locale !== 'en-US') return;
    expect([
      timelineTick('hour', h, DAY).replace(/\s/g, ' '),
      timelineTick('day', t('2026-03-02T00:00:00Z'), DAY),
    ]).toEqual(['1:00 PM', 'Mar 2, 2026']);
  });
});
