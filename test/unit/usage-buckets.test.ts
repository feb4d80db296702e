import { describe, expect, it } from 'vitest';
import { bucketLabel, partialDays } from '../../shared/usage-buckets.ts';

const range = (start_date: string, end_date: string) => ({ start_date, end_date });

describe('credit-usage buckets cut by the range', () => {
  it('marks a first or last week with the days inside the range, and leaves whole weeks alone', () => {
    const r = range('2025-03-05', '2025-03-20');
    expect(bucketLabel('2025-03-03', 'week', r)).toBe('week of 2025-03-03 (partial: Mar 5–9 only)');
    expect(bucketLabel('2025-03-10', 'week', r)).toBe('week of 2025-03-10');
    expect(bucketLabel('2025-03-17', 'week', r)).toBe('week of 2025-03-17 (partial: Mar 17–20 only)');
  });

  it('names both months when a week spans two, and one day when only one is inside', () => {
    expect(partialDays('2025-02-24', 'week', range('2025-02-20', '2025-03-01'))).toBe('Feb 24–Mar 1');
    expect(partialDays('2025-03-03', 'week', range('2025-03-09', '2025-03-31'))).toBe('Mar 9');
  });

  it('knows month lengths and years, leap days included', () => {
    expect(partialDays('2024-02-01', 'month', range('2024-02-10', '2024-12-31'))).toBe('Feb 10–29');
    expect(partialDays('2024-12-01', 'month', range('2024-02-10', '2024-12-31'))).toBeNull();
    expect(bucketLabel('2025-01-01', 'year', range('2025-01-01', '2025-03-09'))).toBe(
      '2025 (partial: Jan 1–Mar 9 only)',
    );
  });

  it('finds the bucket from its date when a service names a cut bucket by its first day in range', () => {
    expect(partialDays('2025-03-05', 'week', range('2025-03-05', '2025-03-20'))).toBe('Mar 5–9');
  });

  it('never marks days, nor labels without a range', () => {
    expect(partialDays('2025-03-05', 'day', range('2025-03-05', '2025-03-05'))).toBeNull();
    expect(bucketLabel('2025-03-03', 'week')).toBe('week of 2025-03-03');
  });
});
