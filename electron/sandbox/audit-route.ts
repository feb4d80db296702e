import type { FastifyInstance } from 'fastify';
import { publicEvent, RETENTION_DAYS, type AuditFilter, type AuditStore, type StoredEvent } from './audit-store.ts';
import { sendError, sendInvalid, type InvalidParam } from './errors.ts';
import { holdAnswer } from './faults.ts';
import type { Caller } from './keys.ts';
import type { DailyQuota } from './stats.ts';

const DAY = 86_400_000;
const MAX_DEPTH = 10_000;
const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;

/** Every value of a multi-value parameter: `x=a`, `x=a,b` and `x[]=a&x[]=b`, in any mix. */
export function multiValues(params: URLSearchParams, name: string): string[] | undefined {
  const raw = [...params.getAll(name), ...params.getAll(`${name}[]`)];
  if (raw.length === 0) return undefined;
  return raw
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

function parseDate(value: string, field: string, bad: InvalidParam[]): number | undefined {
  if (!DATE_RE.test(value)) {
    bad.push({ field, reason: 'must be a date in the format YYYY-MM-DD' });
    return undefined;
  }
  const ms = Date.parse(`${value}T00:00:00Z`);
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value) {
    bad.push({ field, reason: 'is not a valid calendar date' });
    return undefined;
  }
  return ms;
}

function parseInt1(
  value: string | null,
  field: string,
  def: number,
  max: number | undefined,
  bad: InvalidParam[],
): number {
  if (value === null) return def;
  if (!/^-?\d+$/.test(value.trim())) {
    bad.push({ field, reason: 'must be an integer' });
    return def;
  }
  const n = Number(value);
  if (n < 1) bad.push({ field, reason: 'must be greater than 0' });
  else if (max !== undefined && n > max) bad.push({ field, reason: `must be at most ${max}` });
  return n;
}

function parseIds(values: string[] | undefined, field: string, bad: InvalidParam[]): number[] | undefined {
  if (!values) return undefined;
  const out: number[] = [];
  values.forEach((v, i) => {
    if (!/^\d+$/.test(v) || Number(v) < 1)
      bad.push({ field: `${field}.${i}`, reason: 'must be an integer of at least 1' });
    else out.push(Number(v));
  });
  return out;
}

/** The cursor carries the query it belongs to and the last item seen: keyset paging, no depth limit. */
interface Cursor {
  f: AuditFilter;
  t: number;
  s: number;
}
const encodeCursor = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString('base64url');
function decodeCursor(s: string): Cursor | null {
  try {
    const c = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as Cursor;
    if (
      typeof c?.t !== 'number' ||
      typeof c?.s !== 'number' ||
      typeof c?.f?.fromMs !== 'number' ||
      typeof c?.f?.toMs !== 'number'
    )
      return null;
    return c;
  } catch {
    return null;
  }
}

/** Index of the first event strictly older than (t, s) in a newest-first list. */
function firstOlder(list: StoredEvent[], t: number, s: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const e = list[mid];
    if (e.t > t || (e.t === t && e.seq >= s)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface AuditRouteDeps {
  store: AuditStore;
  quota: DailyQuota;
  now: () => number;
  callerOf: (req: unknown) => Caller;
  /** The auditDelayMs fault, read per request. */
  delayMs: () => number;
  /** Counts each audit search per key (`/__sandbox/stats` auditSearches): which callers the service saw. */
  counted?: (key: string) => void;
}

export function registerAuditRoute(app: FastifyInstance, deps: AuditRouteDeps): void {
  app.get('/v1/analytics/audit-logs/events', async (req, reply) => {
    await holdAnswer(deps.delayMs);
    const caller = deps.callerOf(req);
    deps.counted?.(caller.key);
    if (caller.plan !== 'enterprise')
      return sendError(reply, 403, 'Audit logs are available on Enterprise plans only.');
    if (!caller.auditLogs) return sendError(reply, 403, 'Audit logs are not enabled for this team.');
    if (caller.role !== 'owner' && caller.role !== 'admin')
      return sendError(reply, 403, 'Only team admins and owners can search the audit logs.');
    if (!deps.quota.take(caller.key, deps.now()))
      return sendError(reply, 429, 'Too many requests', { 'Retry-After': String(secondsToUtcMidnight(deps.now())) });

    const q = new URL(req.url, 'http://sandbox').searchParams;
    const bad: InvalidParam[] = [];
    const perPage = parseInt1(q.get('per_page'), 'per_page', 20, 100, bad);
    const cursorRaw = q.get('cursor');
    const cursor = cursorRaw !== null ? decodeCursor(cursorRaw) : undefined;
    if (cursor === null) bad.push({ field: 'cursor', reason: 'is not a cursor issued by this API' });
    // The spec: page is ignored when a cursor is set, so it is not validated either.
    const page = cursorRaw === null ? parseInt1(q.get('page'), 'page', 1, undefined, bad) : 1;

    const today = Date.parse(new Date(deps.now()).toISOString().slice(0, 10) + 'T00:00:00Z');
    // Retention: the trail keeps 15 days, so events age out as days pass, whatever window (or cursor) asks.
    const kept = today - RETENTION_DAYS * DAY;
    let filter: AuditFilter;
    if (cursor) {
      filter = cursor.f;
    } else {
      const dFrom = q.get('date_from');
      const dTo = q.get('date_to');
      const fromMs = dFrom !== null ? parseDate(dFrom, 'date_from', bad) : kept;
      const toDay = dTo !== null ? parseDate(dTo, 'date_to', bad) : today;
      if (fromMs !== undefined && toDay !== undefined) {
        // A date_from not sent is the default's: the error names the field the caller did send.
        if (fromMs > toDay)
          bad.push(
            dFrom !== null
              ? { field: 'date_from', reason: 'must not be after date_to' }
              : {
                  field: 'date_to',
                  reason: `must not be before date_from, which defaults to 15 days ago (${new Date(kept).toISOString().slice(0, 10)})`,
                },
          );
        else if ((toDay - fromMs) / DAY > RETENTION_DAYS)
          bad.push({ field: 'date_from', reason: `the window cannot exceed ${RETENTION_DAYS} days` });
      }
      const requestId = q.get('request_id');
      filter = {
        fromMs: fromMs ?? 0,
        toMs: (toDay ?? 0) + DAY - 1,
        memberIds: parseIds(multiValues(q, 'member_id'), 'member_id', bad),
        groupIds: parseIds(multiValues(q, 'group_id'), 'group_id', bad),
        folderIds: multiValues(q, 'folder_id'),
        eventTypes: multiValues(q, 'event_type'),
        ...(requestId !== null && requestId !== '' ? { requestId } : {}),
      };
      if (bad.length === 0 && page * perPage > MAX_DEPTH) {
        bad.push({
          field: 'page',
          reason: `page times per_page must be at most ${MAX_DEPTH}; follow meta.next_cursor to go deeper`,
        });
      }
    }
    if (bad.length) return sendInvalid(reply, bad);

    const all = deps.store.query({ ...filter, fromMs: Math.max(filter.fromMs, kept) });
    const start = cursor ? firstOlder(all, cursor.t, cursor.s) : (page - 1) * perPage;
    const items = all.slice(start, start + perPage);
    const last = items.at(-1);
    const more = start + perPage < all.length;
    return {
      data: items.map(publicEvent),
      meta: {
        pagination: {
          current_page: Math.floor(start / perPage) + 1,
          per_page: perPage,
          last_page: Math.max(1, Math.ceil(all.length / perPage)),
          total: all.length,
        },
        next_cursor: more && last ? encodeCursor({ f: filter, t: last.t, s: last.seq }) : null,
      },
    };
  });
}

export function secondsToUtcMidnight(nowMs: number): number {
  return Math.max(1, Math.ceil((DAY - (nowMs % DAY)) / 1000));
}
