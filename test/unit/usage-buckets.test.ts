import { describe, expect, it } from 'vitest';
import { formatDate as day, formatDateRange as days, formatMonth } from '../../shared/dates.ts';
import { bucketLabel, partialDays, usageTick } from '../../shared/usage-buckets.ts';

const range = (start_date: string, end_date: string) => ({ start_date, end_date });

describe('credit-usage buckets cut by the range', () => {
  it('marks a first or last week with the days inside the range, and leaves whole weeks alone', () => {
    const r = range('2025-03-05', '2025-03-20');
    expect(bucketLabel('2025-03-03', 'week', r)).toBe(
      `week of ${day('2025-03-03')} (partial: ${days('2025-03-05', '2025-03-09')} only)`,
    );
    expect(bucketLabel('2025-03-10', 'week', r)).toBe(`week of ${day('2025-03-10')}`);
    expect(bucketLabel('2025-03-17', 'week', r)).toBe(
      `week of ${day('2025-03-17')} (partial: ${days('2025-03-17', '2025-03-20')} only)`,
    );
  });

  it('names both months when a week spans two, and one day when only one is inside', () => {
    expect(partialDays('2025-02-24', 'week', range('2025-02-20', '2025-03-01'))).toBe(days('2025-02-24', '2025-03-01'));
    expect(partialDays('2025-03-03', 'week', range('2025-03-09', '2025-03-31'))).toBe(day('2025-03-09'));
  });

  it('knows month lengths and years, leap days included', () => {
    expect(partialDays('2024-02-01', 'month', range('2024-02-10', '2024-12-31'))).toBe(
      days('2024-02-10', '2024-02-29'),
    );
    expect(partialDays('2024-12-01', 'month', range('2024-02-10', '2024-12-31'))).toBeNull();
    expect(bucketLabel('2025-01-01', 'year', range('2025-01-01', '2025-03-09'))).toBe(
      `2025 (partial: ${days('2025-01-01', '2025-03-09')} only)`,
    );
  });

  it('finds the bucket from its date when a service names a cut bucket by its first day in range', () => {
    expect(partialDays('2025-03-05', 'week', range('2025-03-05', '2025-03-20'))).toBe(days('2025-03-05', '2025-03-09'));
  });

  it('never marks days, nor labels without a range', () => {
    expect(partialDays('2025-03-05', 'day', range('2025-03-05', '2025-03-05'))).toBeNull();
    expect(bucketLabel('2025-03-03', 'week')).toBe(`week of ${day('2025-03-03')}`);
  });
});

describe('bucket names and chart ticks in the one date format', () => {
  it("in en-US (the tests' process locale): UTC days shown as those days, ranges as the locale joins them", () => {
    if (new Intl.DateTimeFormat().resolvedOptions().locale !== 'en-US') return;
    const r = range('2025-02-20', '2025-03-01');
    expect(bucketLabel('2025-02-24', 'week', r).replace(/\s/g, ' ')).toBe(
      'week of Feb 24, 2025 (partial: Feb 24 – Mar 1, 2025 only)',
    );
    expect(bucketLabel('2025-02-01', 'month', r).replace(/\s/g, ' ')).toBe(
      'Feb 2025 (partial: Feb 20 – 28, 2025 only)',
    );
    expect(bucketLabel('2025-03-05', 'day')).toBe('Mar 5, 2025');
    expect(formatMonth('2025-03')).toBe('Mar 2025');
  });

  it('ticks the chart as coarse as its buckets, on UTC days', () => {
    const t = Date.parse('2025-03-05T00:00:00Z') / 1000;
    expect(usageTick(t, 'day')).toBe(day('2025-03-05'));
    expect(usageTick(t, 'week')).toBe(day('2025-03-05'));
    expect(usageTick(t, 'month')).toBe(formatMonth('2025-03'));
    expect(usageTick(t, 'year')).toBe('2025');
  });
});
