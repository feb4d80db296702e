import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALLOWED_DATA_KEYS, ALLOWED_STATE_KEYS } from '../../electron/sandbox/audit-store.ts';
import { fakeClock, start } from './helpers.ts';

const PATH = '/v1/analytics/audit-logs/events';
const clock = fakeClock(Date.parse('2026-03-15T12:00:00Z'));
let ctx: Awaited<ReturnType<typeof start>>;
beforeAll(async () => {
  ctx = await start({ now: clock.now, seed: 7 });
});
afterAll(() => ctx.sb.close());

const q = (s: string) => ctx.api.get(`${PATH}${s}`);

describe('audit search: access', () => {
  it('lets owners and admins of Enterprise teams with audit logs search', async () => {
    for (const key of ['sandbox-owner', 'sandbox-admin']) expect((await ctx.api.get(PATH, key)).status).toBe(200);
  });
  it('answers 403 with a message to members, business plans and teams without audit logs', async () => {
    for (const key of ['sandbox-member', 'sandbox-business', 'sandbox-noaudit']) {
      const r = await ctx.api.get(PATH, key);
      expect(r.status).toBe(403);
      expect(typeof r.body.message).toBe('string');
    }
  });
});

describe('audit search: defaults and shape', () => {
  it('defaults to page 1, 20 per page, last 15 days, newest first, at least 5,000 events', async () => {
    const r = await q('');
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(20);
    expect(r.body.meta.pagination).toMatchObject({ current_page: 1, per_page: 20 });
    expect(r.body.meta.pagination.total).toBeGreaterThanOrEqual(5000);
    expect(r.body.meta.pagination.last_page).toBe(Math.ceil(r.body.meta.pagination.total / 20));
    const dates = r.body.data.map((e: any) => Date.parse(e.date));
    expect([...dates].sort((a, b) => b - a)).toEqual(dates);
    const oldest = Date.parse((await q(`?page=${r.body.meta.pagination.last_page}`)).body.data.at(-1).date);
    expect(clock.now() - oldest).toBeLessThanOrEqual(15 * 86_400_000);
    expect(typeof r.body.meta.next_cursor).toBe('string');
  });
  it('returns events of the spec shape with allow-listed keys only', async () => {
    const r = await q('?per_page=100');
    const types = new Set<string>();
    for (const e of r.body.data) {
      expect(e).toMatchObject({
        event_id: expect.any(String),
        date: expect.any(String),
        member: { type: expect.any(String) },
        source: expect.any(Object),
      });
      expect(e.action.event_type).toMatch(/^[a-z_]+\.[a-z_]+\.[a-z_]+ed$/);
      types.add(e.action.event_type);
      for (const k of Object.keys(e.action.data)) expect(ALLOWED_DATA_KEYS).toContain(k);
      for (const s of [e.action.old_state, e.action.new_state])
        if (s) for (const k of Object.keys(s)) expect(ALLOWED_STATE_KEYS).toContain(k);
      expect(JSON.stringify(e)).not.toMatch(/provider_model|billing_state|moderation|internal_/);
    }
    expect(types.size).toBeGreaterThanOrEqual(5);
    expect(r.body.data.some((e: any) => e.action.old_state && e.action.new_state)).toBe(true);
  });
  it('is deterministic for a seed and a clock', async () => {
    const other = await start({ now: clock.now, seed: 7 });
    const a = (await q('?per_page=5')).body;
    const b = (await other.api.get(`${PATH}?per_page=5`)).body;
    await other.sb.close();
    expect(b.data).toEqual(a.data);
  });
});

describe('audit search: filters', () => {
  it('accepts single, comma and bracket multi-value syntaxes alike', async () => {
    const one = (await q('?member_id=4&per_page=100')).body.meta.pagination.total;
    const two = (await q('?member_id=5&per_page=100')).body.meta.pagination.total;
    const comma = await q('?member_id=4,5&per_page=100');
    const brackets = await q('?member_id[]=4&member_id[]=5&per_page=100');
    const encoded = await q('?member_id%5B%5D=4&member_id%5B%5D=5&per_page=100');
    expect(one).toBeGreaterThan(0);
    expect(comma.body.meta.pagination.total).toBe(one + two);
    expect(brackets.body.meta.pagination.total).toBe(one + two);
    expect(encoded.body.meta.pagination.total).toBe(one + two);
    for (const e of comma.body.data) expect([4, 5]).toContain(e.member.user_id);
  });
  it('filters by event_type, folder_id and group_id', async () => {
    const t = await q('?event_type=project.folder.shared,team.member.role_changed&per_page=100');
    expect(t.body.data.length).toBeGreaterThan(0);
    for (const e of t.body.data)
      expect(['project.folder.shared', 'team.member.role_changed']).toContain(e.action.event_type);
    const folder = t.body.data.find((e: any) => e.action.data.folder_reference).action.data.folder_reference;
    const f = await q(`?folder_id[]=${folder}&per_page=100`);
    expect(f.body.data.length).toBeGreaterThan(0);
    for (const e of f.body.data) expect(e.action.data.folder_reference).toBe(folder);
    const g = await q('?group_id=101');
    const all = (await q('')).body.meta.pagination.total;
    expect(g.body.meta.pagination.total).toBeGreaterThan(0);
    expect(g.body.meta.pagination.total).toBeLessThan(all);
  });
  it('returns every event of one request for request_id, and several share one', async () => {
    const page = (await q('?per_page=100')).body.data;
    const counts = new Map<string, number>();
    for (const e of page) counts.set(e.action.request_id, (counts.get(e.action.request_id) ?? 0) + 1);
    const [rid, n] = [...counts].find(([, c]) => c > 1)!;
    const r = await q(`?request_id=${rid}`);
    expect(r.body.data.length).toBeGreaterThanOrEqual(n);
    for (const e of r.body.data) expect(e.action.request_id).toBe(rid);
    expect((await q('?request_id=req_nope')).body.data).toEqual([]);
  });
  it('filters by date window', async () => {
    const r = await q('?date_from=2026-03-10&date_to=2026-03-10&per_page=100');
    expect(r.body.data.length).toBeGreaterThan(0);
    for (const e of r.body.data) expect(e.date.slice(0, 10)).toBe('2026-03-10');
  });
});

describe('audit search: validation', () => {
  const bad = async (query: string, field: string) => {
    const r = await q(query);
    expect(r.status, query).toBe(400);
    expect(r.headers.get('content-type')).toContain('application/problem+json');
    expect(typeof r.body.message).toBe('string');
    const item = r.body.invalid_params.find((p: any) => p.field === field || p.field.startsWith(`${field}.`));
    expect(item, `${query} names ${field}`).toBeTruthy();
    expect(item.name).toBe(item.field);
    expect(typeof item.reason).toBe('string');
  };
  it('rejects out-of-bounds paging', async () => {
    await bad('?page=0', 'page');
    await bad('?page=abc', 'page');
    await bad('?per_page=0', 'per_page');
    await bad('?per_page=101', 'per_page');
    expect((await q('?per_page=100')).status).toBe(200);
    expect((await q('?per_page=1')).status).toBe(200);
  });
  it('rejects page x per_page above 10,000 but allows exactly 10,000', async () => {
    await bad('?page=101&per_page=100', 'page');
    await bad('?page=501&per_page=20', 'page');
    expect((await q('?page=100&per_page=100')).status).toBe(200);
  });
  it('rejects ids below 1 and malformed dates', async () => {
    await bad('?member_id=0', 'member_id');
    await bad('?group_id[]=2&group_id[]=x', 'group_id');
    await bad('?date_from=2026-3-1', 'date_from');
    await bad('?date_to=2026-02-30', 'date_to');
  });
  it('rejects windows over 15 days and reversed windows', async () => {
    await bad('?date_from=2026-02-01&date_to=2026-03-01', 'date_from');
    await bad('?date_from=2026-03-12&date_to=2026-03-10', 'date_from');
    // date_from left to its default (15 days ago): the error is on the date_to that was sent.
    const early = await q('?date_to=2026-02-20');
    expect([early.status, early.body.invalid_params]).toEqual([
      400,
      [
        {
          field: 'date_to',
          name: 'date_to',
          reason: 'must not be before date_from, which defaults to 15 days ago (2026-02-28)',
        },
      ],
    ]);
    expect((await q('?date_from=2026-02-28&date_to=2026-03-15')).status).toBe(200);
  });
  it('rejects a cursor it did not issue', async () => {
    await bad('?cursor=not-a-cursor', 'cursor');
  });
});

describe('audit search: cursor', () => {
  it('gives the same sequence as page mode and ignores page', async () => {
    const filter = '&event_type=team.member.invited,project.folder.created,creation.image.generated';
    const paged: string[] = [];
    for (let p = 1; ; p++) {
      const r = await q(`?per_page=100&page=${p}${filter}`);
      paged.push(...r.body.data.map((e: any) => e.event_id));
      if (p >= r.body.meta.pagination.last_page) break;
    }
    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      // page=999 alone would be a 400 (depth); with a cursor it is ignored.
      const r: any = await q(`?per_page=100${filter}${cursor ? `&page=999&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(r.status).toBe(200);
      walked.push(...r.body.data.map((e: any) => e.event_id));
      cursor = r.body.meta.next_cursor;
    } while (cursor);
    expect(walked).toEqual(paged);
    expect(new Set(walked).size).toBe(walked.length);
  });
  it('has no depth limit: the cursor walks more than 10,000 events to null', async () => {
    await ctx.api.control('audit/events', { count: 4500 });
    let r = await q('?per_page=100');
    expect(r.body.meta.pagination.total).toBeGreaterThan(10_000);
    let seen = 0;
    while (r.body.meta.next_cursor) {
      seen += r.body.data.length;
      r = await q(`?per_page=100&cursor=${encodeURIComponent(r.body.meta.next_cursor)}`);
    }
    seen += r.body.data.length;
    expect(seen).toBe(r.body.meta.pagination.total);
    expect(r.body.meta.next_cursor).toBeNull();
  });
  it('stays correct while events are added during the walk', async () => {
    const first = await q('?per_page=50');
    const before = (await q('?per_page=100&page=1')).body.data.map((e: any) => e.event_id);
    clock.advance(60_000);
    const added = await ctx.api.control('audit/events', { count: 25 });
    expect(added.status).toBe(200);
    const second = await q(`?per_page=50&cursor=${encodeURIComponent(first.body.meta.next_cursor)}`);
    expect(second.body.data.map((e: any) => e.event_id)).toEqual(before.slice(50, 100));
    const top = await q('?per_page=25');
    expect(top.body.data.map((e: any) => e.event_id)).not.toContain(before[0]);
  });
});

describe('audit search: rate limit', () => {
  it('allows 500 requests a day per key, then answers 429', async () => {
    await ctx.api.control('reset', {});
    const statuses: number[] = [];
    for (let i = 0; i < 501; i++) statuses.push((await ctx.api.get(`${PATH}?per_page=1`, 'sandbox-admin')).status);
    expect(statuses.slice(0, 500).every((s) => s === 200)).toBe(true);
    const last = await ctx.api.get(`${PATH}?per_page=1`, 'sandbox-admin');
    expect(last.status).toBe(429);
    expect(last.body.message).toBe('Too many requests');
    expect((await ctx.api.get(`${PATH}?per_page=1`, 'sandbox-owner')).status).toBe(200);
    clock.advance(86_400_000);
    expect((await ctx.api.get(`${PATH}?per_page=1`, 'sandbox-admin')).status).toBe(200);
  });
});

describe('audit search: retention', () => {
  it('keeps 15 days: older events age out as the days pass, in page mode and along a cursor issued before', async () => {
    const DAY = 86_400_000;
    const own = fakeClock(Date.parse('2026-03-15T12:00:00Z'));
    const sb = await start({ now: own.now, seed: 7 });
    try {
      const window = `${PATH}?date_from=2026-02-28&date_to=2026-03-15&per_page=100`;
      const dates = async (url: string) => {
        const out: string[] = [];
        for (
          let r = await sb.api.get(url);
          ;
          r = await sb.api.get(`${PATH}?per_page=100&cursor=${r.body.meta.next_cursor}`)
        ) {
          expect(r.status).toBe(200);
          out.push(...r.body.data.map((e: { date: string }) => e.date));
          if (!r.body.meta.next_cursor) return out;
        }
      };
      const all = await dates(window);
      expect(all.some((d) => d < '2026-03-05')).toBe(true);
      const firstPage = await sb.api.get(window);

      own.advance(5 * DAY); // 2026-03-20: the trail now starts on 2026-03-05
      const after = await sb.api.get(window);
      expect(after.status).toBe(200);
      expect(after.body.meta.pagination.total).toBe(all.filter((d) => d >= '2026-03-05').length);
      const kept = await dates(window);
      expect(kept.length).toBe(after.body.meta.pagination.total);
      expect(kept.every((d) => d >= '2026-03-05')).toBe(true);
      const rest = await dates(`${PATH}?per_page=100&cursor=${firstPage.body.meta.next_cursor}`);
      expect(rest.every((d) => d >= '2026-03-05')).toBe(true);
    } finally {
      await sb.sb.close();
    }
  });
});
