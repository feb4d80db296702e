/**
 * The one way the screens write a date and a time: the user's locale (the browser's or the
 * desktop's), a medium date ("Dec 5, 2026", "5 Dec 2026") and a short time ("9:13 AM", "09:13").
 * Instants are shown in the viewer's time zone, or in UTC with `utc` where a screen counts in UTC
 * (the audit log, the service's usage days) and says so. Text that is not a time is shown as it came.
 */
export type When = number | string | Date;

const DATE: Intl.DateTimeFormatOptions = { dateStyle: 'medium' };
const TIME: Intl.DateTimeFormatOptions = { timeStyle: 'short' };
const formats = new Map<string, Intl.DateTimeFormat>();

function formatter(options: Intl.DateTimeFormatOptions, utc: boolean): Intl.DateTimeFormat {
  const key = `${JSON.stringify(options)}|${utc}`;
  let f = formats.get(key);
  if (!f)
    formats.set(key, (f = new Intl.DateTimeFormat(undefined, { ...options, ...(utc ? { timeZone: 'UTC' } : {}) })));
  return f;
}

/** The instant, or null for what is not one. A bare day ("2026-12-05") is that day's UTC midnight. */
function instant(at: When): Date | null {
  const d = at instanceof Date ? at : new Date(typeof at === 'string' ? Date.parse(at) : at);
  return Number.isNaN(d.getTime()) ? null : d;
}

const shown = (at: When | null | undefined, options: Intl.DateTimeFormatOptions, utc = false): string => {
  if (at === null || at === undefined || at === '') return '';
  const d = instant(at);
  return d ? formatter(options, utc).format(d) : String(at);
};

/** A day: a calendar day ("2026-12-05") is shown as that day wherever the viewer is. */
export const formatDate = (at: When | null | undefined, o: { utc?: boolean } = {}): string =>
  shown(at, DATE, o.utc ?? (typeof at === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(at)));

export const formatTime = (at: When | null | undefined, o: { utc?: boolean } = {}): string => shown(at, TIME, o.utc);

/** The date format and the time format together, as the locale joins them. */
export const formatDateTime = (at: When | null | undefined, o: { utc?: boolean } = {}): string =>
  shown(at, { ...DATE, ...TIME }, o.utc);

/** A month of the year ("Mar 2025"), for axes and buckets that span months. */
export const formatMonth = (at: When | null | undefined, o: { utc?: boolean } = {}): string =>
  shown(
    at,
    { month: 'short', year: 'numeric' },
    o.utc ?? (typeof at === 'string' && /^\d{4}-\d{2}(-\d{2})?$/.test(at)),
  );

/** The days from `first` to `last` in the date format, as the locale joins a range ("Mar 5 – 9, 2025"). */
export function formatDateRange(first: When, last: When, o: { utc?: boolean } = {}): string {
  const [a, b] = [instant(first), instant(last)];
  const utc = o.utc ?? (typeof first === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(first));
  if (!a || !b) return `${formatDate(first, o)} – ${formatDate(last, o)}`;
  const f = formatter(DATE, utc);
  return formatDate(a, { utc }) === formatDate(b, { utc }) ? f.format(a) : f.formatRange(a, b);
}
