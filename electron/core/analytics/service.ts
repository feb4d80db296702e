import { writeFile } from 'node:fs/promises';
import { freePath } from '../saved-files.ts';
import { resolve } from 'node:path';
import { DeskError, type DeskErrorCode } from '../../../shared/contract/define.ts';
import type {
  BreakdownRow,
  Directory,
  Granularity,
  UsageBudget,
  UsagePoint,
  UsageQuery,
  UsageResult,
} from '../../../shared/contract/team.ts';
import { ApiError, type ApiClient, type ApiTarget, type CallOptions } from '../api/client.ts';
import type { Db } from '../db/open.ts';
import { toCsv } from './csv.ts';
import { bucketCover } from '../../../shared/usage-buckets.ts';
import { usageToolName } from '../../../shared/usage-tools.ts';
import { keyHashOf, UsageCache, UsageLedger, utcDay } from './ledger.ts';
import { parseDirectory, parseUsage } from './wire.ts';
import { ensureFolder } from '../output-folder.ts';
import { realDay } from '../../../shared/validation/dates.ts';

const USAGE_ERROR_CODES: Record<number, DeskErrorCode> = { 403: 'forbidden', 400: 'invalid' };

const DAY = 86_400_000;
export const DEFAULT_DAYS = 7;
export const MAX_DAYS = 365;
/** A range that includes today still changes: its cached answer is reused for an hour. */
export const OPEN_RANGE_TTL_MS = 3_600_000;

export type UsageBody = UsageResult['request'];

const dayMs = (day: string) => Date.parse(`${day}T00:00:00Z`);
const spanDays = (from: string, to: string) => (dayMs(to) - dayMs(from)) / DAY + 1;
/** The first day of the month `back` months before the one holding `day`. */
const monthStart = (day: string, back: number) =>
  utcDay(Date.UTC(Number(day.slice(0, 4)), Number(day.slice(5, 7)) - 1 - back, 1));

/**
 * The range asked for when a query names no `from`, ending at `to`. The service's 7-day default is one
 * partial bucket of a month or year, so each range starts on a bucket's first day, within the
 * service's 365 days (11 months when 12 would be 366 days; a leap year to Dec 31 starts a day late).
 */
export const DEFAULT_RANGES: Record<Granularity, { says: string; from(to: string): string }> = {
  day: { says: `the last ${DEFAULT_DAYS} days`, from: (to) => utcDay(dayMs(to) - (DEFAULT_DAYS - 1) * DAY) },
  week: {
    says: 'this week and the 11 before (weeks start on Monday)',
    from: (to) => utcDay(dayMs(to) - (((new Date(dayMs(to)).getUTCDay() + 6) % 7) + 11 * 7) * DAY),
  },
  month: {
    says: 'this month and the 11 before, as many as fit in 365 days',
    from: (to) => (spanDays(monthStart(to, 11), to) <= MAX_DAYS ? monthStart(to, 11) : monthStart(to, 10)),
  },
  year: {
    says: 'this year so far',
    from: (to) =>
      spanDays(`${to.slice(0, 4)}-01-01`, to) <= MAX_DAYS
        ? `${to.slice(0, 4)}-01-01`
        : utcDay(dayMs(to) - (MAX_DAYS - 1) * DAY),
  },
};

/**
 * The body actually sent, with the default range made explicit and filters sorted: the same
 * question always has the same body, so the cache recognises it.
 */
export function usageBody(q: UsageQuery, now: number): UsageBody {
  const to = q.to ?? utcDay(now);
  if (!realDay(to))
    throw new DeskError('invalid', `to: ${to} is not a date`, [{ field: 'to', reason: 'must be a date YYYY-MM-DD' }]);
  const from = q.from ?? DEFAULT_RANGES[q.granularity].from(to);
  if (!realDay(from))
    throw new DeskError('invalid', `from: ${from} is not a date`, [
      { field: 'from', reason: 'must be a date YYYY-MM-DD' },
    ]);
  if (from > to)
    throw new DeskError('invalid', 'from must not be after to', [{ field: 'from', reason: 'must not be after to' }]);
  if (spanDays(from, to) > MAX_DAYS)
    throw new DeskError('invalid', `the range cannot exceed ${MAX_DAYS} days`, [
      { field: 'from', reason: `the range cannot exceed ${MAX_DAYS} days` },
    ]);
  const sorted = <T extends string | number>(xs: T[] | undefined) => (xs?.length ? [...new Set(xs)].sort() : undefined);
  const body: UsageBody = { granularity: q.granularity, start_date: from, end_date: to };
  const g = sorted(q.groupIds);
  const p = sorted(q.projectRefs);
  const k = sorted(q.apiKeyIds?.map(String));
  if (g) body.group_ids = g;
  if (p) body.project_references = p;
  if (k) body.api_key_ids = k;
  return body;
}

export interface AnalyticsOptions {
  client: ApiClient;
  db: Db;
  target: () => Promise<ApiTarget>;
  now?: () => number;
  limit?: number;
}

export class AnalyticsService {
  readonly ledger: UsageLedger;
  readonly cache: UsageCache;
  private readonly opts: AnalyticsOptions;
  private readonly now: () => number;

  constructor(opts: AnalyticsOptions) {
    this.opts = opts;
    this.now = opts.now ?? Date.now;
    this.ledger = new UsageLedger(opts.db, { limit: opts.limit, now: this.now });
    this.cache = new UsageCache(opts.db);
  }

  private async keyHash(): Promise<string> {
    return keyHashOf((await this.opts.target()).apiKey);
  }

  async budget(): Promise<UsageBudget> {
    return this.ledger.budget(await this.keyHash());
  }

  private fresh(body: UsageBody, fetchedAt: number): boolean {
    // A range that ended before the day it was fetched is final: it never changes again.
    return body.end_date < utcDay(fetchedAt) || this.now() - fetchedAt < OPEN_RANGE_TTL_MS;
  }

  /** The credit usage for a query: from the cache when it has it, else one request of today's budget. */
  async query(q: UsageQuery, refresh = false, call: CallOptions = {}): Promise<UsageResult> {
    const body = usageBody(q, this.now());
    const kh = await this.keyHash();
    const hit = this.cache.get(kh, body);
    if (hit && !refresh && this.fresh(body, hit.fetchedAt))
      return {
        request: body,
        points: parseUsage(hit.response),
        cached: true,
        fetchedAt: hit.fetchedAt,
        budget: this.ledger.budget(kh),
      };
    const response = await this.fetch(kh, body, call);
    const fetchedAt = this.now();
    this.cache.put(kh, body, response, fetchedAt);
    return { request: body, points: parseUsage(response), cached: false, fetchedAt, budget: this.ledger.budget(kh) };
  }

  private async fetch(kh: string, body: UsageBody, call: CallOptions = {}): Promise<unknown> {
    if (!this.ledger.take(kh)) {
      const b = this.ledger.budget(kh);
      throw new DeskError(
        'rate_limited',
        `Today's ${b.limit} credit-usage requests are spent (the limit renews at 00:00 UTC). Views already loaded stay available from the cache.`,
      );
    }
    try {
      return await this.opts.client.query('/v1/analytics/team-credit-usage', body, call);
    } catch (err) {
      if (err instanceof ApiError && err.status === 429) {
        this.ledger.exhaust(kh);
        throw new DeskError(
          'rate_limited',
          `The service says today's credit-usage requests are spent (${err.message}); other clients may be using this key. It renews at 00:00 UTC.`,
        );
      }
      if (err instanceof ApiError)
        throw new DeskError(
          USAGE_ERROR_CODES[err.status ?? 0] ?? 'unavailable',
          err.describe(),
          err.invalidParams.length ? err.invalidParams : undefined,
        );
      throw err;
    }
  }

  /**
   * Per user and per tool come with every answer; per group is derived from the members'
   * groups (a free listing); per project takes one request per project, so its cost is checked
   * against the remaining budget before any is sent.
   */
  async breakdown(
    q: UsageQuery,
    by: 'user' | 'group' | 'project' | 'tool',
  ): Promise<{ rows: BreakdownRow[]; requestsSpent: number; budget: UsageBudget }> {
    const kh = await this.keyHash();
    const before = this.ledger.budget(kh).used;
    let rows: BreakdownRow[];
    if (by === 'project') {
      const dir = await this.directory();
      const refs = q.projectRefs?.length ? q.projectRefs : dir.projects.map((p) => p.reference);
      const bodies = refs.map((r) => usageBody({ ...q, projectRefs: [r] }, this.now()));
      const missing = bodies.filter((b) => {
        const h = this.cache.get(kh, b);
        return !h || !this.fresh(b, h.fetchedAt);
      }).length;
      const left = this.ledger.budget(kh).remaining;
      if (missing > left)
        throw new DeskError(
          'rate_limited',
          `A breakdown by project needs ${missing} credit-usage requests and ${left} remain today; narrow the projects or try after 00:00 UTC.`,
        );
      const names = new Map(dir.projects.map((p) => [p.reference, p.name]));
      rows = [];
      for (const ref of refs) {
        const r = await this.query({ ...q, projectRefs: [ref] });
        rows.push({ key: ref, label: names.get(ref) ?? ref, ...sum(r.points) });
      }
    } else {
      const r = await this.query(q);
      if (by === 'tool')
        // Named as the catalogue names the tool; the usage's own name (its API path) stays the key.
        rows = totals(
          r.points.flatMap((p) =>
            Object.entries(p.byTool).map(([k, v]) => ({ key: k, label: usageToolName(k), ...v })),
          ),
        );
      else {
        const users = r.points.flatMap((p) =>
          Object.entries(p.byUser).map(([k, v]) => ({
            key: k,
            label: v.email ?? '',
            uses: v.uses,
            credits: v.credits,
          })),
        );
        if (by === 'user') {
          // A row without an e-mail (an API key's use) is named by the member's name in the directory.
          const dir = users.some((u) => !u.label) ? await this.directory().catch(() => null) : null;
          const names = new Map(dir?.members.map((m) => [String(m.id), m.name || m.email]) ?? []);
          rows = totals(users.map((u) => ({ ...u, label: u.label || (names.get(u.key) ?? `member ${u.key}`) })));
        } else {
          // The service names each member's group in the usage itself (group_name); the directory's
          // members carry no ids to join on, so it is only the fallback for an answer without names.
          const groupOf = new Map(
            r.points.flatMap((p) => Object.entries(p.byUser).flatMap(([k, v]) => (v.group ? [[k, v.group]] : []))),
          );
          const dir = groupOf.size ? null : await this.directory();
          const groupsOf = new Map(dir?.members.map((m) => [String(m.id), m.groupIds]) ?? []);
          const names = new Map(dir?.groups.map((g) => [g.id, g.name]) ?? []);
          rows = totals(
            users.flatMap((u) => {
              const group = groupOf.get(u.key);
              if (groupOf.size)
                return [{ key: group ?? 'none', label: group ?? 'No group', uses: u.uses, credits: u.credits }];
              const gs = groupsOf.get(u.key) ?? [];
              return gs.length
                ? gs.map((g) => ({
                    key: String(g),
                    label: names.get(g) ?? `group ${g}`,
                    uses: u.uses,
                    credits: u.credits,
                  }))
                : [{ key: 'none', label: 'No group', uses: u.uses, credits: u.credits }];
            }),
          );
        }
      }
    }
    const budget = this.ledger.budget(kh);
    return { rows: rows.sort((a, b) => b.credits - a.credits), requestsSpent: budget.used - before, budget };
  }

  async directory(): Promise<Directory> {
    try {
      const [m, k, g, p] = await Promise.all(
        ['team-members', 'team-api-keys', 'team-groups', 'team-projects'].map((x) =>
          this.opts.client.get(`/v1/analytics/${x}`),
        ),
      );
      return parseDirectory(m, k, g, p);
    } catch (err) {
      if (err instanceof ApiError)
        throw new DeskError(err.status === 403 ? 'forbidden' : 'unavailable', err.describe());
      throw err;
    }
  }

  /** CSV of a listing or of a usage query (from the cache when it has it). */
  async exportCsv(
    what: 'usage' | 'members' | 'apiKeys' | 'groups' | 'projects',
    outDir: string,
    usage?: UsageQuery,
  ): Promise<{ path: string; rows: number }> {
    let csv: string;
    let rows: number;
    let name: string;
    if (what === 'usage') {
      if (!usage) throw new DeskError('invalid', 'a usage export needs the usage query');
      const r = await this.query(usage);
      ({ csv, rows } = usageCsv(r));
      name = `credit-usage-${r.request.granularity}-${r.request.start_date}_${r.request.end_date}.csv`;
    } else {
      const d = await this.directory();
      const table = {
        members: [
          ['id', 'name', 'email', 'role', 'status', 'group_ids'],
          d.members.map((m) => [m.id, m.name, m.email, m.role, m.status, m.groupIds.join(' ')]),
        ],
        apiKeys: [['id', 'name', 'status'], d.apiKeys.map((k) => [k.id, k.name, k.status])],
        groups: [['id', 'name', 'member_count'], d.groups.map((g) => [g.id, g.name, g.memberCount])],
        projects: [['reference', 'name'], d.projects.map((p) => [p.reference, p.name])],
      }[what] as [string[], unknown[][]];
      csv = toCsv(table[0], table[1]);
      rows = table[1].length;
      name = `team-${what}-${utcDay(this.now())}.csv`;
    }
    const dir = resolve(outDir);
    await ensureFolder(dir);
    const path = freePath(dir, name);
    await writeFile(path, csv, { encoding: 'utf8', flag: 'wx' });
    return { path, rows };
  }
}

function sum(points: UsagePoint[]): { uses: number; credits: number } {
  return points.reduce((a, p) => ({ uses: a.uses + p.uses, credits: a.credits + p.credits }), { uses: 0, credits: 0 });
}

function totals(items: BreakdownRow[]): BreakdownRow[] {
  const m = new Map<string, BreakdownRow>();
  for (const i of items) {
    const e = m.get(i.key) ?? m.set(i.key, { key: i.key, label: i.label, uses: 0, credits: 0 }).get(i.key)!;
    e.uses += i.uses;
    e.credits += i.credits;
  }
  return [...m.values()];
}

/**
 * One row per bucket and tool; an empty bucket keeps a zero row so the time axis has no holes.
 * Each row names the days its bucket counts, and `partial` marks a first or last week, month or
 * year the range cuts (as the chart does), so a spreadsheet does not read it as a slow one.
 */
export function usageCsv(r: Pick<UsageResult, 'points' | 'request'>): { csv: string; rows: number } {
  const lines = r.points.flatMap((p) => {
    const c = bucketCover(p.date, r.request.granularity, r.request);
    const cover = [c.first, c.last, c.partial];
    return Object.entries(p.byTool).length === 0
      ? [[p.date, '', 0, 0, ...cover]]
      : Object.entries(p.byTool).map(([tool, t]) => [p.date, tool, t.uses, t.credits, ...cover]);
  });
  return {
    csv: toCsv(['date', 'tool', 'uses', 'credits', 'days_from', 'days_to', 'partial'], lines),
    rows: lines.length,
  };
}
