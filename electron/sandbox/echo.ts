/** Fields that name a thing the client asks about again: echoing the key there would only break the next request. */
const IDENTIFIERS = new Set([
  'task_id',
  'run_id',
  'id',
  'app_id',
  'sqid',
  'workflow_run_identifier',
  'next_cursor',
  'status',
  'event_id',
]);

/** Dates stay dates: a server that echoes a key does so in its words, not in its timestamps. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * A 2xx answer as a server that echoes the caller's key would send it (the `echoKeyInAnswers`
 * fault): every URL carries it as a query parameter, every other text but a date ends with it, and a failed
 * task or run says it in its error. Identifiers and statuses are kept, so the client still works.
 */
export function echoKeyInto(body: unknown, key: string): unknown {
  const text = (v: string) =>
    /^https?:\/\//.test(v) ? `${v}${v.includes('?') ? '&' : '?'}echo=${key}` : `${v} ${key}`;
  const walk = (v: unknown, field: string): unknown => {
    if (typeof v === 'string') return IDENTIFIERS.has(field) || ISO_DATE.test(v) ? v : text(v);
    if (Array.isArray(v)) return v.map((x) => walk(x, field));
    if (v && typeof v === 'object') {
      const o = Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
      if (o.status === 'FAILED' || o.status === 'failed') {
        o.error = `the task failed for the key ${key}`;
        o.error_message = `the run failed for the key ${key}`;
      }
      return o;
    }
    return v;
  };
  return walk(body, '');
}
