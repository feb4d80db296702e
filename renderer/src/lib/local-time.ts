/**
 * A timestamp from the service (ISO, UTC) in the viewer's own time zone, as the Queue and Results
 * show theirs. Cutting the ISO text instead showed UTC clock time as if it were local: 18:40 for
 * a picture made at 10:40 in California. Text that is not a time is shown as it came.
 */
export function localTime(iso: string | null): string {
  if (!iso) return '';
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : new Date(t).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' });
}
