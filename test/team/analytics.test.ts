import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRANULARITIES } from '../../shared/contract/team.ts';
import { AnalyticsService, usageBody } from '../../electron/core/analytics/service.ts';
import { keyHashOf, UsageLedger } from '../../electron/core/analytics/ledger.ts';
import { openDatabase } from '../../electron/core/db/open.ts';
import { QUEUE_MIGRATIONS } from '../../electron/core/queue/migrations.ts';
import { join } from 'node:path';
import { ApiClient } from '../../electron/core/api/client.ts';
import { cleanup, control, rig, tmp, type Rig } from './helpers.ts';

let r: Rig;
const usageRequests = async () =>
  (await control(r.sandbox.url, 'stats')).requests['POST /v1/analytics/team-credit-usage'] ?? 0;

beforeAll(async () => {
  r = await rig();
});
afterAll(async () => {
  await r.close();
  cleanup(r.home);
});

describe('team credit usage', () => {
  it('answers at every granularity, with bucket dates of that granularity', async () => {
    for (const granularity of GRANULARITIES) {
      const res = await r.services.analytics.query({ granularity, from: '2025-01-01', to: '2025-03-31' });
      expect(res.cached).toBe(false);
      expect(res.points.length).toBeGreaterThan(0);
      const dates = res.points.map((p) => p.date);
      if (granularity === 'day') expect(dates).toHaveLength(90);
      if (granularity === 'week')
        expect(dates.every((d) => new Date(`${d}T00:00:00Z`).getUTCDay() === 1 || d === '2025-01-01')).toBe(true);
      if (granularity === 'month') expect(dates).toEqual(['2025-01-01', '2025-02-01', '2025-03-01']);
      if (granularity === 'year') expect(dates).toEqual(['2025-01-01']);
      const total = res.points.reduce((a, p) => a + p.credits, 0);
      expect(total).toBeGreaterThan(0);
      expect(Object.keys(res.points[0].byUser).length).toBeGreaterThan(0);
    }
  });

  it('applies the filters of the API: groups, projects and API keys narrow the usage', async () => {
    const q = { granularity: 'month' as const, from: '2025-01-01', to: '2025-02-28' };
    const all = await r.services.analytics.query(q);
    const dir = await r.services.analytics.directory();
    const credits = (p: { points: { credits: number }[] }) => p.points.reduce((a, x) => a + x.credits, 0);
    const g = await r.services.analytics.query({ ...q, groupIds: [dir.groups[0].id] });
    const p = await r.services.analytics.query({ ...q, projectRefs: [dir.projects[0].reference] });
    const k = await r.services.analytics.query({ ...q, apiKeyIds: [Number(dir.apiKeys[0].id)] });
    for (const f of [g, p, k]) {
      expect(credits(f)).toBeGreaterThan(0);
      expect(credits(f)).toBeLessThan(credits(all));
    }
    expect(g.request.group_ids).toEqual([dir.groups[0].id]);
    expect(p.request.project_references).toEqual([dir.projects[0].reference]);
    expect(k.request.api_key_ids).toEqual([String(dir.apiKeys[0].id)]);
  });

  it('repeated views come from the cache and cost nothing; refresh spends one request', async () => {
    const q = { granularity: 'week' as const, from: '2024-06-01', to: '2024-06-30' };
    const first = await r.services.analytics.query(q);
    const sent = await usageRequests();
    const again = await r.services.analytics.query({ ...q });
    expect(again.cached).toBe(true);
    expect(again.points).toEqual(first.points);
    expect(again.budget.used).toBe(first.budget.used);
    expect(await usageRequests()).toBe(sent);
    const fresh = await r.services.analytics.query(q, true);
    expect(fresh.cached).toBe(false);
    expect(fresh.budget.used).toBe(first.budget.used + 1);
    expect(await usageRequests()).toBe(sent + 1);
  });

  it('breaks usage down per user, group, tool and project', async () => {
    const q = { granularity: 'month' as const, from: '2025-01-01', to: '2025-01-31' };
    for (const by of ['user', 'group', 'tool'] as const) {
      const b = await r.services.analytics.breakdown(q, by);
      expect(b.rows.length).toBeGreaterThan(1);
      expect(b.rows[0].credits).toBeGreaterThanOrEqual(b.rows.at(-1)!.credits);
      // Tools as the service names them: its categories ("AI Image Models"), never API paths.
      if (by === 'tool') {
        expect(b.rows.filter((x) => x.label.includes('/')).map((x) => x.label)).toEqual([]);
        expect(b.rows.map((x) => x.label)).toContain('AI Image Models');
      }
    }
    const dir = await r.services.analytics.directory();
    const proj = await r.services.analytics.breakdown(
      { ...q, projectRefs: dir.projects.slice(0, 3).map((p) => p.reference) },
      'project',
    );
    expect(proj.rows.map((x) => x.label).sort()).toEqual(
      dir.projects
        .slice(0, 3)
        .map((p) => p.name)
        .sort(),
    );
    expect(proj.requestsSpent).toBe(3);
    const again = await r.services.analytics.breakdown(
      { ...q, projectRefs: dir.projects.slice(0, 3).map((p) => p.reference) },
      'project',
    );
    expect(again.requestsSpent).toBe(0);
  });

  it('lists members (email, role, status), API keys, groups (member count) and projects, and exports CSV', async () => {
    const d = await r.services.analytics.directory();
    expect(d.members[0]).toMatchObject({ email: 'owner@sandbox.test', role: 'owner', status: 'active' });
    expect(d.apiKeys.some((k) => k.status === 'inactive')).toBe(true);
    expect(d.groups.reduce((a, g) => a + g.memberCount, 0)).toBe(d.members.length);
    expect(d.projects[0].name).toBeTruthy();
    const out = tmp('csv');
    const m = await r.services.analytics.exportCsv('members', out);
    const text = readFileSync(m.path, 'utf8');
    expect(text.split('\r\n')[0]).toBe('id,name,email,role,status,group_ids');
    expect(m.rows).toBe(d.members.length);
    const sent = await usageRequests();
    const u = await r.services.analytics.exportCsv('usage', out, {
      granularity: 'month',
      from: '2025-01-01',
      to: '2025-01-31',
    });
    // A whole month: every row counts all of its days.
    const rows = readFileSync(u.path, 'utf8').trim().split('\r\n');
    expect(rows[0]).toBe('date,tool,uses,credits,days_from,days_to,partial');
    expect(rows.slice(1).length).toBeGreaterThan(0);
    for (const row of rows.slice(1)) expect(row).toMatch(/^2025-01-01,.*,2025-01-01,2025-01-31,false$/);
    expect(await usageRequests()).toBe(sent); // from the cache
    cleanup(out);
  });
});

/** Requests and the ledger both use this key. */
function serviceFor(db: ReturnType<typeof openDatabase>, apiKey: string, limit?: number) {
  const target = async () => ({ baseUrl: r.sandbox.url, apiKey });
  return new AnalyticsService({ client: new ApiClient(target, { maxDelayMs: 500, retries: 2 }), db, target, limit });
}

describe('the 100-a-day ledger', () => {
  it('counts before sending and never exceeds the limit; the key is stored only as a hash', async () => {
    const home = tmp('ledger');
    const db = openDatabase(join(home, 'mediadesk.db'), QUEUE_MIGRATIONS);
    const a = serviceFor(db, 'sandbox-admin', 3);
    await control(r.sandbox.url, 'reset', {});
    for (let i = 0; i < 3; i++)
      await a.query({ granularity: 'day', from: `2025-02-0${i + 1}`, to: `2025-02-0${i + 1}` });
    expect((await a.budget()).remaining).toBe(0);
    await expect(a.query({ granularity: 'day', from: '2025-02-09', to: '2025-02-09' })).rejects.toMatchObject({
      code: 'rate_limited',
    });
    expect(await usageRequests()).toBe(3);
    // Cached views still work with no budget left.
    expect((await a.query({ granularity: 'day', from: '2025-02-01', to: '2025-02-01' })).cached).toBe(true);
    const dump =
      JSON.stringify(db.prepare('SELECT * FROM usage_ledger').all()) +
      JSON.stringify(db.prepare('SELECT key_hash, body FROM usage_cache').all());
    expect(dump).not.toContain('sandbox-admin');
    expect(dump).toContain(keyHashOf('sandbox-admin'));
    db.close();
    cleanup(home);
  });

  it('take() is atomic at the limit, per key and per UTC day', () => {
    const home = tmp('ledger2');
    const db = openDatabase(join(home, 'mediadesk.db'), QUEUE_MIGRATIONS);
    let now = Date.parse('2025-05-05T23:59:00Z');
    const l = new UsageLedger(db, { now: () => now });
    let taken = 0;
    for (let i = 0; i < 130; i++) if (l.take('k1')) taken++;
    expect(taken).toBe(100);
    expect(l.budget('k1')).toMatchObject({ used: 100, remaining: 0, day: '2025-05-05' });
    expect(l.take('k2')).toBe(true);
    now += 120_000;
    expect(l.budget('k1')).toMatchObject({ used: 0, remaining: 100, day: '2025-05-06' });
    expect(l.take('k1', 101)).toBe(false);
    l.exhaust('k1');
    expect(l.take('k1')).toBe(false);
    db.close();
    cleanup(home);
  });

  it('a 429 from the server (budget spent elsewhere) exhausts the local budget for the day', async () => {
    const home = tmp('ledger3');
    const db = openDatabase(join(home, 'mediadesk.db'), QUEUE_MIGRATIONS);
    const a = serviceFor(db, 'sandbox-member');
    await control(r.sandbox.url, 'reset', {});
    // Another client spends this key's whole day.
    for (let i = 0; i < 100; i++)
      await fetch(`${r.sandbox.url}/v1/analytics/team-credit-usage`, {
        method: 'POST',
        headers: { 'x-magnific-api-key': 'sandbox-member', 'content-type': 'application/json' },
        body: '{}',
      });
    await expect(a.query({ granularity: 'day' })).rejects.toMatchObject({ code: 'rate_limited' });
    expect((await a.budget()).remaining).toBe(0);
    db.close();
    cleanup(home);
  });

  it('makes the default range explicit so the same question has the same body', () => {
    const now = Date.parse('2025-03-10T12:00:00Z');
    expect(usageBody({ granularity: 'day' }, now)).toEqual({
      granularity: 'day',
      start_date: '2025-03-04',
      end_date: '2025-03-10',
    });
    expect(usageBody({ granularity: 'day', groupIds: [3, 1, 3] }, now).group_ids).toEqual([1, 3]);
    expect(() => usageBody({ granularity: 'day', from: '2024-01-01', to: '2025-03-01' }, now)).toThrow(/365/);
  });
});
