import type { AuditFilters } from '../../../shared/contract/audit.ts';
import { asUtc } from '../../../shared/validation/dates.ts';
import { searchMatch } from './search.ts';
import { keyBound } from './keys.ts';

/** A WHERE clause and its bound values. User values only ever travel in `params`. */
export interface Where {
  sql: string;
  params: unknown[];
}

const DAY_MS = 86_400_000;
const isDay = (s: string) => /^\d{4}-\d{2}-\d{2}$/.test(s);

/** `from` is inclusive; a `to` day includes that whole UTC day, a `to` instant is inclusive. */
export function timeRange(f: Pick<AuditFilters, 'from' | 'to'>): { fromTs?: number; toTsExclusive?: number } {
  const out: { fromTs?: number; toTsExclusive?: number } = {};
  if (f.from) out.fromTs = isDay(f.from) ? Date.parse(`${f.from}T00:00:00Z`) : Date.parse(asUtc(f.from));
  if (f.to) out.toTsExclusive = isDay(f.to) ? Date.parse(`${f.to}T00:00:00Z`) + DAY_MS : Date.parse(asUtc(f.to)) + 1;
  return out;
}

function inList(column: string, values: readonly unknown[], where: string[], params: unknown[]): void {
  if (values.length === 1) {
    where.push(`${column} = ?`);
  } else {
    where.push(`${column} IN (${values.map(() => '?').join(', ')})`);
  }
  params.push(...values);
}

/**
 * Member ids and actors without one (all, or those of some e-mails): one dimension, its choices
 * ORed. `member_id IS NULL AND member_email ...` is the partial index events_noid_email_ts (migration 7).
 */
function members(f: AuditFilters, where: string[], params: unknown[]): void {
  const any: string[] = [];
  if (f.memberIds?.length) inList('member_id', f.memberIds, any, params);
  if (f.noUserId) any.push('member_id IS NULL');
  else if (f.noUserIdEmails?.length) {
    const emails: string[] = [];
    inList('member_email', f.noUserIdEmails, emails, params);
    any.push(`(member_id IS NULL AND ${emails[0]})`);
  }
  if (any.length) where.push(any.length === 1 ? any[0] : `(${any.join(' OR ')})`);
}

export type FacetDimension = 'eventTypes' | 'memberIds';

/** `omit` drops one dimension so its facet counts show every choice, not just the chosen ones. */
export interface WhereOptions {
  omit?: FacetDimension;
  /**
   * Many full-text matches: `+seq` keeps SQLite from driving the query from the match list (a
   * lookup and a sort per match); it walks the date index instead and tests each row against the
   * matches, materialized once, stopping at LIMIT. Few matches: driving from them is cheaper.
   */
  ftsAsFilter?: boolean;
  /** Every row key follows its date (keys.ts keysFollowDates): a date range is a range of keys, read without an index of dates. */
  byKey?: boolean;
  /** The search as an FTS5 query (search.ts searchMatch, which reads the cache's names); else the words alone. */
  match?: string | null;
}

export function buildWhere(f: AuditFilters, opts: WhereOptions = {}): Where {
  const omit = opts.omit;
  const where: string[] = [];
  const params: unknown[] = [];
  const { fromTs, toTsExclusive } = timeRange(f);
  const dated = (ts: number) => (opts.byKey ? keyBound(ts) : ts);
  if (fromTs !== undefined) {
    where.push(opts.byKey ? 'seq >= ?' : 'ts >= ?');
    params.push(dated(fromTs));
  }
  if (toTsExclusive !== undefined) {
    where.push(opts.byKey ? 'seq < ?' : 'ts < ?');
    params.push(dated(toTsExclusive));
  }
  if (omit !== 'memberIds') members(f, where, params);
  if (f.groupIds?.length) inList('group_id', f.groupIds, where, params);
  if (f.folderRefs?.length) inList('folder_ref', f.folderRefs, where, params);
  if (f.eventTypes?.length && omit !== 'eventTypes') inList('event_type', f.eventTypes, where, params);
  if (f.requestId) {
    where.push('request_id = ?');
    params.push(f.requestId);
  }
  if (f.correlationId) {
    where.push('correlation_id = ?');
    params.push(f.correlationId);
  }
  let match: string | null = null;
  if (f.search) match = opts.match === undefined ? searchMatch(null, f.search) : opts.match;
  if (match) {
    where.push(`${opts.ftsAsFilter ? '+seq' : 'seq'} IN (SELECT rowid FROM events_fts WHERE events_fts MATCH ?)`);
    params.push(match);
  }
  return { sql: where.length ? `WHERE ${where.join(' AND ')}` : '', params };
}
