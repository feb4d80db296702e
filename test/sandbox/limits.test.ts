// The service's limits as the Sandbox models them, over real HTTP with an injected clock: the burst
// and average rates, the per-plan daily caps, and the credits each accepted create is charged.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_SLUGS, resolvePaths, TOOLS } from '../../shared/catalogue/index.ts';
import { creditsOf, DEFAULT_DAILY_CAPS, SERVICE_RATES } from '../../shared/service-limits.ts';
import { fakeClock, start, testPng } from './helpers.ts';
import { uploadTo } from '../sandbox-upload.ts';

const clock = fakeClock(Date.parse('2026-03-15T23:58:00Z'));
let ctx: Awaited<ReturnType<typeof start>>;
let imageUrl: string;

const pathOf = (id: string) =>
  resolvePaths(
    TOOLS.find((t) => t.id === id)!,
    DEFAULT_SLUGS,
    {},
  ).create;
const TEXT_TOOL = pathOf('context-t2i');
const UPSCALER = pathOf('upscaler-precision');
const LIST = '/v1/ai/mystic';

beforeAll(async () => {
  ctx = await start({ now: clock.now, taskDurationMs: 1000 });
  imageUrl = (await uploadTo(ctx.sb.url, await testPng(), 'image/png')).url;
});
afterAll(() => ctx.sb.close());
beforeEach(async () => {
  await ctx.api.control('reset', {});
  clock.set(Date.parse('2026-03-15T12:00:00Z'));
});

/** `n` list requests at the clock's current time; their statuses. */
async function burst(n: number, key = 'sandbox-owner'): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await ctx.api.get(LIST, key)).status);
  return out;
}

describe('the Sandbox limits', () => {
  it('are off unless asked for: 300 requests in one instant all pass', async () => {
    expect((await ctx.api.control('limits')).body).toEqual({ mode: 'off', limits: null });
    expect(new Set(await burst(300))).toEqual(new Set([200]));
  });

  it('switch at run time through the control API, and a bad setting is refused by name', async () => {
    const on = await ctx.api.control('limits', { limits: 'service' });
    expect(on.body).toEqual({ mode: 'service', limits: { ...SERVICE_RATES, caps: DEFAULT_DAILY_CAPS } });
    const bad = await ctx.api.control('limits', { limits: 'sometimes' });
    expect(bad.status).toBe(400);
    expect(bad.body.invalid_params[0].field).toBe('limits');
    expect((await ctx.api.control('limits')).body.mode).toBe('service');
    await ctx.api.control('reset', {});
    expect((await ctx.api.control('limits')).body.mode).toBe('off');
  });

  it('the burst rate: 250 requests in 5 s pass, the next is 429 with Retry-After until the window frees', async () => {
    await ctx.api.control('limits', { limits: 'service' });
    expect(new Set(await burst(250))).toEqual(new Set([200]));
    const over = await ctx.api.get(LIST);
    expect([over.status, over.body, over.headers.get('retry-after')]).toEqual([
      429,
      { message: 'Too many requests' },
      '5',
    ]);
    // Another key has its own windows.
    expect((await ctx.api.get(LIST, 'sandbox-admin')).status).toBe(200);
    clock.advance(4000);
    const still = await ctx.api.get(LIST);
    expect([still.status, still.headers.get('retry-after')]).toEqual([429, '1']);
    clock.advance(1000);
    expect((await ctx.api.get(LIST)).status).toBe(200);
    expect((await ctx.api.control('stats')).body.limited).toEqual({ burst: 2, average: 0, daily_cap: 0 });
  });

  it('the average rate: 1,200 requests in 2 minutes pass, the next is 429 until the first leave the window', async () => {
    await ctx.api.control('limits', { limits: 'service' });
    // 200 every 5 s stays under the burst rate; 6 steps reach 1,200 within 25 s.
    for (let step = 0; step < 6; step++) {
      expect(new Set(await burst(200))).toEqual(new Set([200]));
      clock.advance(5000);
    }
    const over = await ctx.api.get(LIST);
    expect([over.status, over.body.message, over.headers.get('retry-after')]).toEqual([429, 'Too many requests', '90']);
    clock.advance(89_000);
    expect((await ctx.api.get(LIST)).headers.get('retry-after')).toBe('1');
    clock.advance(1000);
    expect((await ctx.api.get(LIST)).status).toBe(200);
    expect((await ctx.api.control('stats')).body.limited).toEqual({ burst: 0, average: 2, daily_cap: 0 });
  });

  it("a tool's daily cap, per the key's plan, holds until the clock passes midnight UTC", async () => {
    const caps = { business: { '*': 3, 'context-t2i': 2 }, enterprise: { '*': 4 } };
    await ctx.api.control('limits', { limits: { ...SERVICE_RATES, caps } });
    clock.set(Date.parse('2026-03-15T23:59:00Z'));
    const create = (key: string, path = TEXT_TOOL) => ctx.api.post(path, { prompt: 'a lighthouse' }, key);
    expect((await create('sandbox-business')).status).toBe(200);
    expect((await create('sandbox-business')).status).toBe(200);
    const capped = await create('sandbox-business');
    expect([capped.status, capped.body, capped.headers.get('retry-after')]).toEqual([
      429,
      { message: 'Too many requests' },
      '60',
    ]);
    // Another tool has its own cap (`*`: 3), and the Enterprise plan its own table.
    const other = pathOf('image50');
    for (let i = 0; i < 3; i++) expect((await create('sandbox-business', other)).status).toBe(200);
    expect((await create('sandbox-business', other)).status).toBe(429);
    for (let i = 0; i < 4; i++) expect((await create('sandbox-owner')).status).toBe(200);
    expect((await create('sandbox-owner')).status).toBe(429);
    // A refused body takes nothing from the cap: it is still a 400 naming the field.
    expect((await ctx.api.post(TEXT_TOOL, { prompt: 5 }, 'sandbox-admin')).status).toBe(400);
    clock.advance(59_000);
    const last = await create('sandbox-business');
    expect([last.status, last.headers.get('retry-after')]).toEqual([429, '1']);
    clock.advance(1000);
    expect((await create('sandbox-business')).status).toBe(200);
    expect((await ctx.api.control('stats')).body.limited).toEqual({ burst: 0, average: 0, daily_cap: 4 });
  });
});

describe('credits charged', () => {
  const usageOf = async (key: string, tool: string) => {
    const r = await ctx.api.post('/v1/analytics/team-credit-usage', { granularity: 'day' }, key);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const today = r.body.data.find((b: { date: string }) => b.date === '2026-03-15');
    const c = today.consumptions.find((x: { tool: string }) => x.tool === tool);
    return { uses: c?.user_uses ?? 0, credits: c?.user_credits ?? 0, users: c?.user_usages ?? [] };
  };

  it('on each accepted create, failed tasks included, show in the credit usage beside its history', async () => {
    // Reported under its category's display name, as the service does, never the model.
    const tool = 'AI Image Models';
    const before = await usageOf('sandbox-owner', tool);
    await ctx.api.control('faults', { failureRate: 1 });
    const failed = await ctx.api.post(UPSCALER, { image: imageUrl, scale_factor: 4 });
    expect(failed.status).toBe(200);
    await ctx.api.control('faults', { failureRate: 0 });
    expect((await ctx.api.post(UPSCALER, { image: imageUrl }, 'sandbox-admin')).status).toBe(200);
    clock.advance(1000);
    const end = await ctx.api.get(`${UPSCALER}/${failed.body.data.task_id}`);
    expect(end.body.data.status).toBe('FAILED');
    // Priced by output area: 5 credits per input area, scale 4 makes 16, the default 2 makes 4.
    expect(creditsOf('upscaler-precision', { scale_factor: 4 })).toBe(80);
    const after = await usageOf('sandbox-owner', tool);
    expect([after.uses - before.uses, after.credits - before.credits]).toEqual([2, 80 + 20]);
    expect(await usageOf('sandbox-admin', tool)).toEqual(after);
    expect((await ctx.api.control('stats')).body.charges).toEqual({
      'upscaler-precision': { uses: 2, credits: 100 },
    });
  });

  it("a one-person team's usage is its own charges alone, per category and user", async () => {
    const tool = 'AI Image Models';
    const baseline = await usageOf('sandbox-business', tool);
    await ctx.api.post(TEXT_TOOL, { prompt: 'a lighthouse' }, 'sandbox-business');
    await ctx.api.post(TEXT_TOOL, { prompt: 'a harbour' }, 'sandbox-business');
    const now = await usageOf('sandbox-business', tool);
    const price = creditsOf('context-t2i', {});
    expect(now.uses - baseline.uses).toBe(2);
    expect(now.credits - baseline.credits).toBe(2 * price);
    expect(now.users).toEqual([
      {
        user_id: 501,
        email: 'admin@business.sandbox.test',
        uses: now.uses,
        credits: now.credits,
        user_email: 'admin@business.sandbox.test',
        user_uses: now.uses,
        user_credits: now.credits,
        group_name: null,
      },
    ]);
  });

  it('names display names (categories), never a model: one total per category and day', async () => {
    const r = await ctx.api.post('/v1/analytics/team-credit-usage', {
      granularity: 'day',
      start_date: '2026-01-01',
      end_date: '2026-02-28',
    });
    const names = new Set<string>();
    for (const bucket of r.body.data) {
      const seen = bucket.consumptions.map((c: { tool: string }) => c.tool);
      expect(new Set(seen).size, bucket.date).toBe(seen.length);
      for (const n of seen) names.add(n);
    }
    expect(names.has('AI Image Models')).toBe(true);
    for (const n of names) expect(['AI Image Models', 'AI Video Models', 'AI Audio Models']).toContain(n);
  });

  it('a member key cannot read the team usage (403)', async () => {
    const r = await ctx.api.post('/v1/analytics/team-credit-usage', { granularity: 'day' }, 'sandbox-member');
    expect([r.status, r.body.message]).toEqual([403, "Only team admins and owners can read the team's credit usage."]);
  });
});
