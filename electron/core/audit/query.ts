import { DeskError } from '../../../shared/contract/define.ts';
import {
  NO_USER_ID_EMAIL,
  type AuditEventDetail,
  type AuditFacets,
  type AuditFilters,
  type AuditQueryResponse,
  type AuditRow,
  type AuditSort,
  type AuditTimeline,
} from '../../../shared/contract/audit.ts';
import type { Db } from '../db/open.ts';
import { storedEventProblem } from './event.ts';
import { buildWhere as buildWords, timeRange, type Where, type WhereOptions } from './filters.ts';
import { searchMatch } from './search.ts';
import { KEY_SLOTS, keyBound, keysFollowDates, MAX_KEY } from './keys.ts';

/** The event as received, from its side table (migration 4). */
const RAW = '(SELECT r.raw FROM events_raw AS r WHERE r.seq = events.seq) AS raw';

export const ROW_COLUMNS =
  'seq, event_id, ts, event_type, verb, status, category, member_id, member_email, member_type, group_id, folder_ref, project_ref, request_id, correlation_id, resource_id';

export interface DbRow {
  seq: number;
  event_id: string;
  ts: number;
  event_type: string;
  verb: string | null;
  status: string | null;
  category: string | null;
  member_id: number | null;
  member_email: string;
  member_type: string | null;
  group_id: number | null;
  folder_ref: string | null;
  project_ref: string | null;
  request_id: string | null;
  correlation_id: string | null;
  resource_id: string | null;
}

export function toAuditRow(r: DbRow, folderName: string | null = null): AuditRow {
  return {
    eventId: r.event_id,
    date: new Date(r.ts).toISOString(),
    eventType: r.event_type,
    verb: r.verb,
    status: r.status,
    category: r.category,
    memberId: r.member_id,
    memberEmail: r.member_email || null,
    memberType: r.member_type,
    groupId: r.group_id,
    folderRef: r.folder_ref,
    folderName,
    projectRef: r.project_ref,
    requestId: r.request_id,
    correlationId: r.correlation_id,
    resourceId: r.resource_id,
  };
}

/** An event's folder name, from its stored text; null where it has none (or the text cannot be read as JSON). */
const FOLDER_NAME = "CASE WHEN json_valid(r.raw) THEN json_extract(r.raw, '$.action.folder_name') END";
/** Date order: by key alone where every key follows its date (migration 10 left the filter indexes without dates), else by (ts, seq). */
function dateOrder(byKey: boolean, dir: 'ASC' | 'DESC'): string {
  return byKey ? `seq ${dir}` : `ts ${dir}, seq ${dir}`;
}

/** How many of a folder's newest events are looked at for its name when a row's own event has none. */
const NAME_LOOKBACK = 50;

/**
 * Rows for people: each folder by the name the events carry (the service resolves it from the
 * reference): the row's own event's, else one of the folder's newest events that has one.
 */
export function withFolderNames(db: Db, rows: DbRow[]): AuditRow[] {
  const inFolder = rows.filter((r) => r.folder_ref !== null);
  if (!inFolder.length) return rows.map((r) => toAuditRow(r));
  const own = new Map(
    (
      db
        .prepare(
          `SELECT r.seq AS seq, ${FOLDER_NAME} AS name FROM events_raw AS r WHERE r.seq IN (${inFolder.map(() => '?').join(', ')})`,
        )
        .all(...inFolder.map((r) => r.seq)) as { seq: number; name: unknown }[]
    ).map((x) => [x.seq, typeof x.name === 'string' && x.name ? x.name : null]),
  );
  const newest = db
    .prepare(
      `SELECT ${FOLDER_NAME} AS name FROM (SELECT seq FROM events WHERE folder_ref = ? ORDER BY ${dateOrder(keysFollowDates(db), 'DESC')} LIMIT ${NAME_LOOKBACK}) AS e
       JOIN events_raw AS r ON r.seq = e.seq WHERE typeof(${FOLDER_NAME}) = 'text' AND ${FOLDER_NAME} != '' LIMIT 1`,
    )
    .pluck();
  const byRef = new Map<string, string | null>();
  const nameOf = (ref: string): string | null => {
    if (!byRef.has(ref)) byRef.set(ref, (newest.get(ref) as string | undefined) ?? null);
    return byRef.get(ref)!;
  };
  return rows.map((r) => toAuditRow(r, r.folder_ref === null ? null : (own.get(r.seq) ?? nameOf(r.folder_ref))));
}

/** The sort key columns per sort field; ts and seq always end it so the order is total. */
const SORT_KEYS: Record<AuditSort['field'], { cols: string[]; of: (r: DbRow) => (string | number)[] }> = {
  date: { cols: ['ts', 'seq'], of: (r) => [r.ts, r.seq] },
  event_type: { cols: ['event_type', 'ts', 'seq'], of: (r) => [r.event_type, r.ts, r.seq] },
  member: { cols: ['member_email', 'ts', 'seq'], of: (r) => [r.member_email, r.ts, r.seq] },
};

/** The sort's columns, without ts where the keys follow the dates (seq then orders by date alone). */
function sortCols(sort: AuditSort, byKey: boolean): string[] {
  const cols = SORT_KEYS[sort.field].cols;
  return byKey ? cols.filter((c) => c !== 'ts') : cols;
}

export function orderBy(sort: AuditSort, byKey = false): string {
  const dir = sort.dir === 'asc' ? 'ASC' : 'DESC';
  return `ORDER BY ${sortCols(sort, byKey)
    .map((c) => `${c} ${dir}`)
    .join(', ')}`;
}

interface Cursor {
  f: AuditSort['field'];
  d: AuditSort['dir'];
  k: (string | number)[];
}

function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

function decodeCursor(s: string, sort: AuditSort): Cursor {
  let c: Cursor;
  try {
    c = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as Cursor;
  } catch {
    throw new DeskError('invalid', 'the page cursor is not valid', [
      { field: 'after', reason: 'is not a cursor this cache issued' },
    ]);
  }
  const n = SORT_KEYS[sort.field].cols.length;
  const okKeys =
    Array.isArray(c?.k) &&
    c.k.length === n &&
    c.k.every((v, i) => (i >= n - 2 ? Number.isSafeInteger(v) : typeof v === 'string'));
  if (!okKeys || c.f !== sort.field || c.d !== sort.dir) {
    throw new DeskError('invalid', 'the page cursor belongs to another sort order; start from the first page', [
      { field: 'after', reason: 'does not match the sort' },
    ]);
  }
  return c;
}

export interface QueryInput {
  filters: AuditFilters;
  sort: AuditSort;
  limit: number;
  offset?: number;
  after?: string;
  withTotal?: boolean;
  /** Only the events whose ids a table holds (the team archive's matches of a search, service.ts). */
  inTable?: string;
}

function and(where: Where, cond: string, params: unknown[]): Where {
  return { sql: where.sql ? `${where.sql} AND ${cond}` : `WHERE ${cond}`, params: [...where.params, ...params] };
}

/**
 * Pages of the cache for the virtualized table. With `after` it is keyset pagination: a row-value
 * comparison on the sort index, so page 10,000 costs what page 1 costs.
 */
export function queryEvents(db: Db, q: QueryInput): AuditQueryResponse {
  const match = q.filters.search ? searchMatch(db, q.filters.search) : null;
  if (match && q.sort.field === 'date' && keysFollowDates(db)) return searchByDate(db, q, match);
  const byKey = keysFollowDates(db);
  let where = buildWhere(db, q.filters, { ftsAsFilter: manyMatches(db, match), match, byKey });
  const only = q.inTable ? `event_id IN (SELECT event_id FROM ${q.inTable})` : null;
  if (only) where = and(where, only, []);
  const keys = SORT_KEYS[q.sort.field];
  if (q.after) {
    const c = decodeCursor(q.after, q.sort);
    const op = q.sort.dir === 'asc' ? '>' : '<';
    const cols = sortCols(q.sort, byKey);
    // The cursor always carries ts (its shape does not depend on the cache); by key it is left out.
    const values = byKey ? c.k.filter((_, i) => i !== c.k.length - 2) : c.k;
    where = and(where, `(${cols.join(', ')}) ${op} (${cols.map(() => '?').join(', ')})`, values);
  }
  const offset = q.after ? 0 : (q.offset ?? 0);
  // One extra row tells whether a next page exists without counting.
  const rows = db
    .prepare(`SELECT ${ROW_COLUMNS} FROM events ${where.sql} ${orderBy(q.sort, byKey)} LIMIT ? OFFSET ?`)
    .all(...where.params, q.limit + 1, offset) as DbRow[];
  const more = rows.length > q.limit;
  if (more) rows.pop();
  const last = rows[rows.length - 1];
  const res: AuditQueryResponse = {
    rows: withFolderNames(db, rows),
    next: more && last ? encodeCursor({ f: q.sort.field, d: q.sort.dir, k: keys.of(last) }) : null,
  };
  if (q.withTotal) res.total = countEvents(db, q.filters, only);
  return res;
}

/**
 * Full-text search in date order: seq follows the date (keys.ts), so the FTS index walks matches by
 * rowid and a page stops at its LIMIT, a common term costing what a rare one does. Dates and cursor
 * become rowid bounds; the other filters are checked on each matching row.
 */
function searchByDate(db: Db, q: QueryInput, match: string): AuditQueryResponse {
  const desc = q.sort.dir !== 'asc';
  const { fromTs, toTsExclusive } = timeRange(q.filters);
  let lo = fromTs === undefined ? -MAX_KEY : keyBound(fromTs);
  let hi = toTsExclusive === undefined ? MAX_KEY : keyBound(toTsExclusive) - 1;
  if (q.after) {
    const c = decodeCursor(q.after, q.sort);
    const seq = c.k[1] as number;
    if (desc) hi = Math.min(hi, seq - 1);
    else lo = Math.max(lo, seq + 1);
  }
  const rest = buildWhere(db, { ...q.filters, search: undefined, from: undefined, to: undefined }, { byKey: true });
  const cond = rest.sql ? `AND ${rest.sql.slice('WHERE '.length)}` : '';
  const offset = q.after ? 0 : (q.offset ?? 0);
  const rows = db
    .prepare(
      `SELECT ${ROW_COLUMNS} FROM events_fts CROSS JOIN events ON events.seq = events_fts.rowid
    WHERE events_fts MATCH ? AND events_fts.rowid >= ? AND events_fts.rowid <= ? ${cond}
    ORDER BY events_fts.rowid ${desc ? 'DESC' : 'ASC'} LIMIT ? OFFSET ?`,
    )
    .all(match, lo, hi, ...rest.params, q.limit + 1, offset) as DbRow[];
  const more = rows.length > q.limit;
  if (more) rows.pop();
  const last = rows[rows.length - 1];
  const res: AuditQueryResponse = {
    rows: withFolderNames(db, rows),
    next: more && last ? encodeCursor({ f: q.sort.field, d: q.sort.dir, k: SORT_KEYS.date.of(last) }) : null,
  };
  if (q.withTotal) res.total = countEvents(db, q.filters);
  return res;
}

/** Above this many full-text matches a page is found faster by walking the date index. */
const FEW_MATCHES = 2000;

function manyMatches(db: Db, match: string | null): boolean {
  if (!match) return false;
  const n = db
    .prepare('SELECT count(*) AS n FROM (SELECT rowid FROM events_fts WHERE events_fts MATCH ? LIMIT ?)')
    .get(match, FEW_MATCHES + 1) as { n: number };
  return n.n > FEW_MATCHES;
}

export function countEvents(db: Db, filters: AuditFilters, only: string | null = null): number {
  let where = buildWhere(db, filters);
  if (only) where = and(where, only, []);
  return (db.prepare(`SELECT count(*) AS n FROM events ${where.sql}`).get(...where.params) as { n: number }).n;
}

/** The filters' WHERE clause, the search matching names too (search.ts), dates as keys where they can be. */
function buildWhere(db: Db, filters: AuditFilters, opts: WhereOptions = {}): Where {
  const match = opts.match !== undefined || !filters.search ? opts.match : searchMatch(db, filters.search);
  return buildWords(filters, { ...opts, match, byKey: opts.byKey ?? keysFollowDates(db) });
}

const RELATED_LIMIT = 200;

function related(
  db: Db,
  column: 'request_id' | 'correlation_id',
  value: string | null,
): { rows: AuditRow[]; count: number } {
  if (!value) return { rows: [], count: 0 };
  const rows = db
    .prepare(
      `SELECT ${ROW_COLUMNS} FROM events WHERE ${column} = ? ORDER BY ${dateOrder(keysFollowDates(db), 'ASC')} LIMIT ?`,
    )
    .all(value, RELATED_LIMIT) as DbRow[];
  const count =
    rows.length < RELATED_LIMIT
      ? rows.length
      : (db.prepare(`SELECT count(*) AS n FROM events WHERE ${column} = ?`).get(value) as { n: number }).n;
  return { rows: withFolderNames(db, rows), count };
}

/** The detail drawer: every field as received, and the events it links to. */
export function eventDetail(db: Db, eventId: string): AuditEventDetail | null {
  const r = db.prepare(`SELECT ${ROW_COLUMNS}, ${RAW}, origin FROM events WHERE event_id = ?`).get(eventId) as
    (DbRow & { raw: string; origin: 'sync' | 'import' }) | undefined;
  if (!r) return null;
  // A cache filled before import and sync refused such events can still hold one: parsed and sent
  // as it is, it overflowed the stack of the reply's serialisation.
  const problem = storedEventProblem(r.raw);
  if (problem)
    throw new DeskError(
      'invalid',
      `event ${JSON.stringify(eventId.slice(0, 200))} cannot be shown: ${problem} (it was cached before MediaDesk refused such events; import and sync refuse it now)`,
    );
  const byRequest = related(db, 'request_id', r.request_id);
  const byCorrelation = related(db, 'correlation_id', r.correlation_id);
  return {
    row: withFolderNames(db, [r])[0],
    event: JSON.parse(r.raw) as Record<string, unknown>,
    origin: r.origin,
    sameRequest: byRequest.rows,
    sameRequestCount: byRequest.count,
    sameCorrelation: byCorrelation.rows,
    sameCorrelationCount: byCorrelation.count,
  };
}

/** One facet value, its count, and how many values the facet has in all. */
interface Group<V> {
  v: V;
  n: number;
  d: number;
}

export function facets(db: Db, filters: AuditFilters, limit: number): AuditFacets {
  const keyed = keysFollowDates(db);
  const t = buildWhere(db, filters, { omit: 'eventTypes', byKey: keyed });
  const m = buildWhere(db, filters, { omit: 'memberIds', byKey: keyed });
  // `count(*) OVER ()` runs after the GROUP BY: the number of groups (distinct values), so saying
  // "top 50 of N" costs no second scan.
  const types = db
    .prepare(
      `SELECT event_type AS v, count(*) AS n, count(*) OVER () AS d FROM events ${t.sql} GROUP BY event_type ORDER BY n DESC, v LIMIT ?`,
    )
    .all(...t.params, limit) as Group<string>[];
  // Counts walk the (member_id, ts) index alone and each label is one seek: max(member_email) in the
  // GROUP BY read every row (1.9 s at 1M events). One more than the limit: actors without a user id
  // are dropped here and listed per e-mail below.
  const counts = db
    .prepare(
      `SELECT member_id AS v, count(*) AS n, count(*) OVER () AS d FROM events ${m.sql} GROUP BY member_id ORDER BY n DESC, v LIMIT ?`,
    )
    .all(...m.params, limit + 1) as Group<number | null>[];
  const labelOf = db
    .prepare(`SELECT member_email FROM events WHERE member_id = ? ORDER BY ${dateOrder(keyed, 'DESC')} LIMIT 1`)
    .pluck();
  // Actors without a user id (API keys, the system) are told apart by e-mail: the partial index
  // events_noid_email (migrations 7, 9) holds only their events, in e-mail order, and is all these read.
  const noId = and(m, 'member_id IS NULL', []);
  const emails = db
    .prepare(
      `SELECT member_email AS v, count(*) AS n, count(*) OVER () AS d FROM events ${noId.sql} GROUP BY member_email ORDER BY n DESC, v LIMIT ?`,
    )
    .all(...noId.params, limit) as Group<string>[];
  const typeOf = db
    .prepare(
      `SELECT member_type FROM events WHERE member_id IS NULL AND member_email = ? ORDER BY ${dateOrder(keyed, 'DESC')} LIMIT 1`,
    )
    .pluck();
  const members: (AuditFacets['members'][number] & { key: number | string })[] = [
    ...counts
      .filter((r) => r.v !== null)
      .map((r) => ({
        key: r.v!,
        value: String(r.v),
        label: ((labelOf.get(r.v) as string | undefined) ?? '') || null,
        count: r.n,
      })),
    ...emails.map((r) => ({
      key: r.v,
      value: NO_USER_ID_EMAIL + r.v,
      label: r.v || null,
      count: r.n,
      actorType: (typeOf.get(r.v) as string | null | undefined) ?? null,
    })),
  ];
  // Busiest first; on a tie actors without a user id first (as their one entry was), then by e-mail or id.
  const rank = (x: { key: number | string }) => (typeof x.key === 'string' ? 0 : 1);
  const byKey = (a: { key: number | string }, b: { key: number | string }) => {
    if (a.key === b.key) return 0;
    return a.key < b.key ? -1 : 1;
  };
  members.sort((a, b) => b.count - a.count || rank(a) - rank(b) || byKey(a, b));
  // The member_id groups counted the one of actors without a user id, which the e-mails split.
  const idGroups = (counts[0]?.d ?? 0) - (emails.length ? 1 : 0);
  return {
    eventTypes: types.map((r) => ({ value: r.v, label: null, count: r.n })),
    members: members.slice(0, limit).map(({ key: _key, ...entry }) => entry),
    eventTypesDistinct: types[0]?.d ?? 0,
    membersDistinct: idGroups + (emails[0]?.d ?? 0),
  };
}

const BUCKET_MS = { hour: 3_600_000, day: 86_400_000 } as const;

export function timeline(db: Db, filters: AuditFilters, bucket: 'hour' | 'day'): AuditTimeline {
  const byKey = keysFollowDates(db);
  const where = buildWhere(db, filters, { byKey });
  const size = BUCKET_MS[bucket];
  // By key, the date is the key shifted (seq >> 10 = ts, keys.ts), so a filter's index alone answers.
  const ts = byKey ? `(seq >> ${Math.log2(KEY_SLOTS)})` : 'ts';
  const points = db
    .prepare(`SELECT ${ts} / CAST(? AS INTEGER) AS b, count(*) AS n FROM events ${where.sql} GROUP BY b ORDER BY b`)
    .all(size, ...where.params) as { b: number; n: number }[];
  return { bucket, points: points.map((p) => ({ start: new Date(p.b * size).toISOString(), count: p.n })) };
}

/** Rows in view order, one at a time, for exports of any size. */
export function iterateEvents(
  db: Db,
  filters: AuditFilters,
  sort: AuditSort,
): IterableIterator<DbRow & { raw: string }> {
  const byKey = keysFollowDates(db);
  const where = buildWhere(db, filters, { byKey });
  return db
    .prepare(`SELECT ${ROW_COLUMNS}, ${RAW} FROM events ${where.sql} ${orderBy(sort, byKey)}`)
    .iterate(...where.params) as IterableIterator<DbRow & { raw: string }>;
}
