import { z } from 'zod';

/**
 * Dates as the app's forms, CLI flags and contract take them: a UTC day `YYYY-MM-DD`, or (for the
 * audit filters) an exact ISO 8601 instant. One rule for every command that takes a date, so that
 * `2026-02-30` is refused the same way everywhere instead of rolling over to March 2.
 */

const DAY_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

/** Date.parse rolls 2026-02-30 over to March 2; a real day reads back the same. */
export function realDay(day: string): boolean {
  const t = Date.parse(`${day}T00:00:00Z`);
  return DAY_PATTERN.test(day) && !Number.isNaN(t) && new Date(t).toISOString().slice(0, 10) === day;
}

function realInstant(s: string): boolean {
  return /^\d{4}-\d{2}-\d{2}T/.test(s) && realDay(s.slice(0, 10)) && !Number.isNaN(Date.parse(s));
}

export const isoDaySchema = z.string().refine(realDay, 'must be a real date YYYY-MM-DD');

/** A day (YYYY-MM-DD, UTC, the whole day) or an exact ISO 8601 instant. */
export const dayOrInstantSchema = z
  .string()
  .refine((s) => realDay(s) || realInstant(s), 'must be a real date, YYYY-MM-DD or an ISO 8601 date-time');

const ZONE = /(?:Z|[+-]\d{2}(?::?\d{2})?)$/i;

/**
 * An instant written without a zone (`2026-03-01T12:00`) as UTC, as every date of the viewer and
 * the CLI is: Date.parse would read it in the machine's own zone, hours off what the user meant.
 */
export function asUtc(dayOrInstant: string): string {
  return dayOrInstant.includes('T') && !ZONE.test(dayOrInstant) ? `${dayOrInstant}Z` : dayOrInstant;
}

/** The first millisecond a `from` bound admits, or NaN when it is not a date. */
function startMs(from: string): number {
  if (realDay(from)) return Date.parse(`${from}T00:00:00Z`);
  return realInstant(from) ? Date.parse(asUtc(from)) : NaN;
}

/** The last millisecond a `to` bound admits: a day means all of it. */
function endMs(to: string): number {
  if (realDay(to)) return Date.parse(`${to}T23:59:59.999Z`);
  return realInstant(to) ? Date.parse(asUtc(to)) : NaN;
}

/**
 * True when both bounds are dates and nothing can fall between them. A bound that is not a date
 * is not "reversed": its own check names it.
 */
export function rangeReversed(from: string | undefined, to: string | undefined): boolean {
  if (!from || !to) return false;
  return startMs(from) > endMs(to);
}
