import { createServer } from 'node:http';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../../electron/sandbox/index.ts';
import { DEFAULT_SLUGS, getTool, resolvePaths } from '../../shared/catalogue/index.ts';
import { bytesOf, fakeClock, start, testPng, until } from './helpers.ts';

const clock = fakeClock(Date.parse('2026-03-15T12:00:00Z'));
let ctx: Awaited<ReturnType<typeof start>>;
beforeAll(async () => {
  ctx = await start({ now: clock.now, taskDurationMs: 100 });
});
afterAll(() => ctx.sb.close());

const V1_ROUTES: [string, string][] = [
  ['GET', '/v1/analytics/audit-logs/events'],
  ['GET', '/v1/ai/loras'],
  ['GET', '/v1/ai/apps'],
  ['GET', '/v1/ai/apps/pS7kQ2xa'],
  ['POST', '/v1/ai/apps/pS7kQ2xa/run'],
  ['GET', '/v1/ai/apps/runs/x'],
  ['GET', '/v1/ai/flows'],
  ['GET', '/v1/ai/flows/pS7kQ2xa'],
  ['POST', '/v1/ai/flows/pS7kQ2xa/run'],
  ['GET', '/v1/ai/flows/runs/x'],
  ['POST', '/v1/analytics/team-credit-usage'],
  ['GET', '/v1/analytics/team-members'],
  ['GET', '/v1/analytics/team-api-keys'],
  ['GET', '/v1/analytics/team-groups'],
  ['GET', '/v1/analytics/team-projects'],
  ['GET', '/v1/creations/recent'],
  ['POST', '/v1/ai/image-change-camera'],
  ['GET', '/v1/ai/skin-enhancer'],
];

describe('authentication', () => {
  it('answers 401 "Missing API key" and "Invalid API key" on every /v1 route', async () => {
    for (const [method, path] of V1_ROUTES) {
      const missing = await ctx.api.call(method, path, { key: null, body: method === 'POST' ? {} : undefined });
      expect(missing.status, path).toBe(401);
      expect(missing.body.message).toBe('Missing API key');
      const invalid = await ctx.api.call(method, path, { key: 'nope', body: method === 'POST' ? {} : undefined });
      expect(invalid.status, path).toBe(401);
      expect(invalid.body.message).toBe('Invalid API key');
    }
  });
  it("reads the key from the live service's headers only: x-magnific-api-key or the legacy x-freepik-api-key, never the spec's placeholder", async () => {
    const with_ = (header: string) =>
      ctx.api.call('GET', '/v1/ai/loras', { key: null, headers: { [header]: 'sandbox-owner' } });
    expect((await with_('x-magnific-api-key')).status).toBe(200);
    expect((await with_('x-freepik-api-key')).status).toBe(200);
    const placeholder = await with_('x-service-api-key');
    expect([placeholder.status, placeholder.body.message]).toEqual([401, 'Missing API key']);
  });
  it('exports the five demo keys with plan, role and audit flag', () => {
    expect(DEMO_KEYS.map((k) => [k.key, k.plan, k.role, k.auditLogs])).toEqual([
      ['sandbox-owner', 'enterprise', 'owner', true],
      ['sandbox-admin', 'enterprise', 'admin', true],
      ['sandbox-member', 'enterprise', 'member', true],
      ['sandbox-business', 'business', 'admin', false],
      ['sandbox-noaudit', 'enterprise', 'owner', false],
    ]);
  });
});

describe('LoRA catalogue', () => {
  it("lists default and the caller's custom LoRAs with fetchable previews, in the declared shape (data an array of groups)", async () => {
    const r = await ctx.api.get('/v1/ai/loras');
    expect(r.status).toBe(200);
    expect(Array.isArray(r.body.data)).toBe(true);
    const [groups] = r.body.data;
    expect(groups.default.length).toBeGreaterThan(3);
    expect(new Set(groups.default.map((l: any) => l.type))).toEqual(new Set(['style', 'character', 'product']));
    expect(groups.customs[0]).toMatchObject({
      id: expect.any(Number),
      training: { status: 'completed', defaultScale: expect.any(Number), quality: null },
    });
    const preview = await bytesOf(groups.default[0].preview);
    expect(preview.headers.get('content-type')).toBe('image/png');
    expect((await ctx.api.get('/v1/ai/loras', 'sandbox-member')).body.data[0].customs).toEqual([]);
  });
});

describe('LoRAs in a generation request', () => {
  // A Sandbox of its own: the tasks made here are no other test's creations.
  let own: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    own = await start();
  });
  afterAll(() => own.sb.close());
  const create = resolvePaths(getTool('hires'), DEFAULT_SLUGS, {}).create;
  const styled = (styling: unknown, key?: string) =>
    own.api.post(create, { prompt: 'a harbour at dawn', styling }, key);
  it("applies LoRAs of the caller's catalogue: defaults and its own customs, styles by name and characters by id", async () => {
    expect(
      (await styled({ styles: [{ name: 'Watercolor', strength: 80 }], characters: [{ id: '6', strength: 85 }] }))
        .status,
    ).toBe(200);
    expect(
      (await styled({ styles: [{ name: 'Brand palette' }], characters: [{ id: '1002', strength: 100 }] })).status,
    ).toBe(200);
    expect((await styled({ characters: [{ id: '1101', strength: 90 }] }, 'sandbox-admin')).status).toBe(200);
  });
  it("refuses a LoRA its catalogue does not list, another user's custom one included, naming the entry", async () => {
    const r = await styled({ styles: [{ name: 'Watercolour' }], characters: [{ id: '1101', strength: 100 }] });
    expect(r.status).toBe(400);
    expect(r.headers.get('content-type')).toContain('application/problem+json');
    expect(r.body.invalid_params).toEqual([
      {
        field: 'styling.styles.0.name',
        name: 'styling.styles.0.name',
        reason: '"Watercolour" is not a LoRA of your catalogue (GET /v1/ai/loras)',
      },
      {
        field: 'styling.characters.0.id',
        name: 'styling.characters.0.id',
        reason: '1101 is not the id of a LoRA of your catalogue (GET /v1/ai/loras)',
      },
    ]);
    expect((await styled({ styles: [{ name: 'Brand palette' }] }, 'sandbox-member')).status).toBe(400);
  });
});

describe('workflow apps', () => {
  const creates = async (appId: string): Promise<number> =>
    (await ctx.api.control('stats')).body.creates[`app:${appId}`]?.['sandbox-owner'] ?? 0;

  it('lists and defines apps in the official shape: `sqid` (no `id`), name, tool_metadata; inputs {id, key, type, label, config, required, default}', async () => {
    const list = await ctx.api.get('/v1/ai/apps');
    expect(list.status).toBe(200);
    expect(list.body.data.map((a: any) => a.sqid)).toEqual(['pS7kQ2xa', 'tV3mW9rb', 'jM4nX8sc']);
    const types = new Set<string>();
    for (const a of list.body.data) {
      expect(Object.keys(a).sort()).toEqual(['name', 'sqid', 'tool_metadata']);
      const def = await ctx.api.get(`/v1/ai/apps/${a.sqid}`);
      expect(Object.keys(def.body.data).sort()).toEqual(['inputs', 'name', 'sqid', 'tool_metadata']);
      expect(def.body.data).toMatchObject({ sqid: a.sqid, name: a.name, tool_metadata: a.tool_metadata });
      expect(typeof def.body.data.tool_metadata.total_cost).toBe('number');
      for (const i of def.body.data.inputs) {
        expect(Object.keys(i).sort()).toEqual(['config', 'default', 'id', 'key', 'label', 'required', 'type']);
        expect(i).toMatchObject({
          id: expect.any(String),
          key: expect.any(String),
          type: expect.any(String),
          label: expect.any(String),
          config: expect.any(Object),
          required: expect.any(Boolean),
        });
        types.add(i.type);
      }
    }
    expect(types).toEqual(new Set(['creation', 'text', 'number', 'select']));
    // Each type's limits are in `config`: a select's choices in config.options.
    const inputs = (await ctx.api.get('/v1/ai/apps/pS7kQ2xa')).body.data.inputs;
    const byId = Object.fromEntries(inputs.map((i: any) => [i.id, i]));
    expect(byId.style).toEqual({
      id: 'style',
      key: 'look',
      type: 'select',
      label: 'Style',
      config: { options: ['studio', 'outdoor', 'minimal'] },
      required: false,
      default: 'studio',
    });
    expect(byId.variations.config).toEqual({ min: 1, max: 4 });
    expect(byId.scene.config).toEqual({ max_length: 2000 });
    expect(byId.product_image).toMatchObject({ config: { mediaType: 'image' }, required: true, default: null });
    expect((await ctx.api.get('/v1/ai/apps/nope')).status).toBe(404);
  });

  it('serves the same apps as flows (the newer description); a run made by either family is read by both', async () => {
    for (const path of ['', '/pS7kQ2xa'])
      expect((await ctx.api.get(`/v1/ai/flows${path}`)).body).toEqual((await ctx.api.get(`/v1/ai/apps${path}`)).body);
    expect((await ctx.api.get('/v1/ai/flows/nope')).body).toEqual({ message: 'Flow not found' });
    const run = await ctx.api.post('/v1/ai/flows/jM4nX8sc/run', { inputs: { brief: 'summer sale' } });
    expect(run.status).toBe(202);
    const id = run.body.workflow_run_identifier;
    const viaFlows = await ctx.api.get(`/v1/ai/flows/runs/${id}`);
    expect(viaFlows.body.data).toMatchObject({ run_id: id, app_id: 'jM4nX8sc' });
    expect((await ctx.api.get(`/v1/ai/apps/runs/${id}`)).body).toEqual(viaFlows.body);
  });

  it('the missingAppFamily fault makes every endpoint of that family answer 404, as a service without it would', async () => {
    try {
      for (const family of ['flows', 'apps'] as const) {
        const other = family === 'flows' ? 'apps' : 'flows';
        await ctx.api.control('faults', { missingAppFamily: family });
        const run = await ctx.api.post(`/v1/ai/${other}/jM4nX8sc/run`, { inputs: { brief: 'x' } });
        expect(run.status).toBe(202);
        const id = run.body.workflow_run_identifier;
        for (const [method, path] of [
          ['GET', ''],
          ['GET', '/jM4nX8sc'],
          ['POST', '/jM4nX8sc/run'],
          ['GET', `/runs/${id}`],
        ]) {
          const r = await ctx.api.call(
            method,
            `/v1/ai/${family}${path}`,
            method === 'POST' ? { body: { inputs: { brief: 'x' } } } : {},
          );
          expect([r.status, r.body.message], `${method} ${family}${path}`).toEqual([404, 'Not found']);
        }
        expect((await ctx.api.get(`/v1/ai/${other}/runs/${id}`)).status).toBe(200);
      }
    } finally {
      await ctx.api.control('faults', { missingAppFamily: null });
    }
  });

  it('runs with 202 {status, workflow_run_identifier}; the run detail is {data: {run_id, status, ..., result: {images, videos, audios}}}, and so is each webhook', async () => {
    const got: any[] = [];
    const server = createServer((req, res) => {
      let b = '';
      req
        .on('data', (c) => (b += c))
        .on('end', () => {
          got.push({ sig: req.headers['webhook-signature'], body: JSON.parse(b) });
          res.end();
        });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const hook = `http://127.0.0.1:${(server.address() as any).port}/h`;
    const png = (await testPng()).toString('base64');
    const run = await ctx.api.post('/v1/ai/apps/pS7kQ2xa/run', {
      inputs: { product_image: png, scene: 'a beach', variations: 2, style: 'outdoor' },
      webhook: hook,
    });
    expect(run.status).toBe(202);
    expect(run.body).toEqual({ status: 'pending', workflow_run_identifier: expect.any(String) });
    const id = run.body.workflow_run_identifier;
    const path = `/v1/ai/apps/runs/${id}`;
    expect((await ctx.api.get(path)).body).toEqual({
      data: {
        run_id: id,
        status: 'pending',
        app_id: 'pS7kQ2xa',
        started_at: null,
        completed_at: null,
        error_message: null,
        result: null,
      },
    });
    clock.advance(50);
    expect((await ctx.api.get(path)).body.data).toMatchObject({
      status: 'running',
      started_at: expect.any(String),
      completed_at: null,
      result: null,
    });
    clock.advance(50);
    const done = (await ctx.api.get(path)).body.data;
    expect(done).toMatchObject({
      run_id: id,
      status: 'completed',
      app_id: 'pS7kQ2xa',
      completed_at: expect.any(String),
      error_message: null,
    });
    expect(done.result.videos).toEqual([]);
    expect(done.result.audios).toEqual([]);
    expect(done.result.images).toHaveLength(2);
    for (const item of done.result.images) {
      expect(Object.keys(item).sort()).toEqual(['created_at', 'duration', 'height', 'id', 'tool', 'url', 'width']);
      expect(item).toMatchObject({
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/results\/.+\.png$/),
        tool: 'text-to-image',
        duration: null,
        width: 1024,
        height: 1024,
      });
    }
    const first = await bytesOf(done.result.images[0].url);
    expect(first.headers.get('content-type')).toBe('image/png');
    await until(async () => got.length >= 2);
    server.close();
    expect(got.map((g) => g.body.data.status)).toEqual(['running', 'completed']);
    expect(got[1].body.data.result.images).toHaveLength(2);
    expect(got[0].sig).toMatch(/^v1,/);
  });

  it("a video app's results come under result.videos, an audio app's under result.audios", async () => {
    const png = (await testPng()).toString('base64');
    const video = await ctx.api.post('/v1/ai/apps/tV3mW9rb/run', { inputs: { key_visual: png, tagline: 'Now open' } });
    const audio = await ctx.api.post('/v1/ai/apps/jM4nX8sc/run', { inputs: { brief: 'coffee brand' } });
    clock.advance(100);
    const v = (await ctx.api.get(`/v1/ai/apps/runs/${video.body.workflow_run_identifier}`)).body.data.result;
    const a = (await ctx.api.get(`/v1/ai/apps/runs/${audio.body.workflow_run_identifier}`)).body.data.result;
    expect([v.images, v.audios, a.images, a.videos]).toEqual([[], [], [], []]);
    expect(v.videos).toEqual([
      expect.objectContaining({
        url: expect.stringMatching(/\.mp4$/),
        tool: 'image-to-video',
        duration: 2,
        width: 320,
        height: 240,
      }),
    ]);
    expect(a.audios).toEqual([
      expect.objectContaining({
        url: expect.stringMatching(/\.mp3$/),
        tool: 'music-generation',
        width: null,
        height: null,
      }),
    ]);
    expect((await bytesOf(v.videos[0].url)).headers.get('content-type')).toBe('video/mp4');
    expect((await bytesOf(a.audios[0].url)).headers.get('content-type')).toBe('audio/mpeg');
  });

  it('bad input values answer 422 with invalid_params naming each input, and create nothing', async () => {
    const before = await creates('tV3mW9rb');
    const r = await ctx.api.post('/v1/ai/apps/tV3mW9rb/run', {
      inputs: { key_visual: 'not an image', duration: 99, format: 'square', extra: 1 },
    });
    expect(r.status).toBe(422);
    expect(r.body.message).toBe("Your request parameters didn't validate.");
    expect(r.body.invalid_params.map((p: any) => p.name)).toEqual([
      'inputs.extra',
      'inputs.key_visual',
      'inputs.tagline',
      'inputs.format',
      'inputs.duration',
    ]);
    const wrongType = await ctx.api.post('/v1/ai/apps/tV3mW9rb/run', {
      inputs: { key_visual: (await testPng()).toString('base64'), tagline: 7, duration: '5' },
    });
    expect([wrongType.status, wrongType.body.invalid_params]).toEqual([
      422,
      [
        { field: 'inputs.tagline', name: 'inputs.tagline', reason: 'must be text' },
        { field: 'inputs.duration', name: 'inputs.duration', reason: 'must be a number' },
      ],
    ]);
    expect(await creates('tV3mW9rb')).toBe(before);
    // A body that is not a run request stays a 400.
    expect((await ctx.api.post('/v1/ai/apps/tV3mW9rb/run', { inputs: [] })).status).toBe(400);
  });

  it('a select value not in config.options is a 422 naming the input; nothing is created or charged', async () => {
    const before = await creates('jM4nX8sc');
    const stats = (await ctx.api.control('stats')).body.requests['POST /v1/ai/apps/:appId/run'];
    const r = await ctx.api.post('/v1/ai/apps/jM4nX8sc/run', { inputs: { brief: 'summer sale', mood: 'gloomy' } });
    expect(r.status).toBe(422);
    expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = {
      message: "Your request parameters didn't validate.",
      invalid_params: [{ field: 'inputs.mood', name: 'inputs.mood', reason: 'must be one of upbeat, calm, epic' }],
    };
    // Both placements of the description: its examples' (top level) and its schema's (under problem).
    expect(r.body).toEqual({ ...problem, problem });
    expect(r.body.workflow_run_identifier).toBeUndefined();
    expect((await ctx.api.control('stats')).body.requests['POST /v1/ai/apps/:appId/run']).toBe(stats + 1);
    expect(await creates('jM4nX8sc')).toBe(before);
    expect(
      (await ctx.api.post('/v1/ai/apps/jM4nX8sc/run', { inputs: { brief: 'summer sale', mood: 'calm' } })).status,
    ).toBe(202);
    expect(await creates('jM4nX8sc')).toBe(before + 1);
  });

  it('counts a text input in characters (code points): 1000 emoji fit a 1000-character brief, 1001 do not', async () => {
    const ok = await ctx.api.post('/v1/ai/apps/jM4nX8sc/run', { inputs: { brief: '🎵'.repeat(1000) } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(202);
    const over = await ctx.api.post('/v1/ai/apps/jM4nX8sc/run', { inputs: { brief: '🎵'.repeat(1001) } });
    expect([over.status, over.body.invalid_params]).toEqual([
      422,
      [{ field: 'inputs.brief', name: 'inputs.brief', reason: 'must be at most 1000 characters' }],
    ]);
  });

  it('fails runs with error_message and no result when the failure rate says so', async () => {
    await ctx.api.control('faults', { failureRate: 1 });
    const run = await ctx.api.post('/v1/ai/apps/jM4nX8sc/run', { inputs: { brief: 'summer sale' } });
    clock.advance(100);
    const r = await ctx.api.get(`/v1/ai/apps/runs/${run.body.workflow_run_identifier}`);
    await ctx.api.control('faults', { failureRate: 0 });
    expect(r.body.data).toMatchObject({
      status: 'failed',
      error_message: expect.any(String),
      completed_at: expect.any(String),
      result: null,
    });
  });

  it('ends completed_with_errors (one result fewer, error_message) or cancelled (no result) when asked', async () => {
    const ending = async (appRunEnding: string) => {
      await ctx.api.control('faults', { appRunEnding });
      try {
        const png = (await testPng()).toString('base64');
        const run = await ctx.api.post('/v1/ai/apps/pS7kQ2xa/run', {
          inputs: { product_image: png, scene: 'x', variations: 3 },
        });
        clock.advance(100);
        return (await ctx.api.get(`/v1/ai/apps/runs/${run.body.workflow_run_identifier}`)).body.data;
      } finally {
        await ctx.api.control('faults', { appRunEnding: 'completed' });
      }
    };
    const partial = await ending('completed_with_errors');
    expect(partial).toMatchObject({
      status: 'completed_with_errors',
      error_message: expect.stringMatching(/One step of the workflow failed/),
    });
    expect(partial.result.images).toHaveLength(2);
    expect(await ending('cancelled')).toMatchObject({ status: 'cancelled', result: null });
  });

  it('serves a cost changed by the control route, or none, in the list and the definition, until a reset', async () => {
    const costOf = async () => {
      const list = (await ctx.api.get('/v1/ai/apps')).body.data.find((a: any) => a.sqid === 'jM4nX8sc').tool_metadata;
      const def = (await ctx.api.get('/v1/ai/apps/jM4nX8sc')).body.data.tool_metadata;
      expect(list).toEqual(def);
      expect(def).toMatchObject({ icon: 'workflow', category: 'general' });
      return Object.hasOwn(def, 'total_cost') ? def.total_cost : 'none';
    };
    expect(await costOf()).toBe(8);
    expect((await ctx.api.control('apps/jM4nX8sc/cost', { cost: 20 })).body).toEqual({ id: 'jM4nX8sc', cost: 20 });
    expect(await costOf()).toBe(20);
    await ctx.api.control('apps/jM4nX8sc/cost', { cost: null });
    expect(await costOf()).toBe('none');
    const bad = await ctx.api.control('apps/jM4nX8sc/cost', { cost: -1 });
    expect(bad.status).toBe(400);
    expect(bad.body.invalid_params[0]).toMatchObject({ field: 'cost' });
    expect((await ctx.api.control('apps/nope/cost', { cost: 1 })).body).toEqual({ message: 'No app nope' });
    await ctx.api.control('reset', {});
    expect(await costOf()).toBe(8);
  });
  it('is Enterprise only', async () => {
    for (const [m, p] of [
      ['GET', '/v1/ai/apps'],
      ['GET', '/v1/ai/apps/pS7kQ2xa'],
      ['POST', '/v1/ai/apps/pS7kQ2xa/run'],
      ['GET', '/v1/ai/apps/runs/x'],
    ]) {
      expect(
        (await ctx.api.call(m, p, { key: 'sandbox-business', body: m === 'POST' ? { inputs: {} } : undefined })).status,
      ).toBe(403);
    }
  });
});

describe('team analytics', () => {
  const usage = (body: unknown, key?: string) => ctx.api.post('/v1/analytics/team-credit-usage', body, key);
  it('defaults to the last 7 days by day, with the api-notes shape', async () => {
    const r = await usage({});
    expect(r.status).toBe(200);
    expect(r.body.data.map((d: any) => d.date)).toEqual([
      '2026-03-09',
      '2026-03-10',
      '2026-03-11',
      '2026-03-12',
      '2026-03-13',
      '2026-03-14',
      '2026-03-15',
    ]);
    const c = r.body.data[0].consumptions[0];
    expect(c).toMatchObject({
      tool: expect.any(String),
      user_uses: expect.any(Number),
      user_credits: expect.any(Number),
      user_usages: expect.any(Array),
    });
    expect(c.user_usages.reduce((s: number, u: any) => s + u.uses, 0)).toBe(c.user_uses);
  });
  it('buckets by week, month and year, totals agreeing with days', async () => {
    const total = (d: any[]) => d.flatMap((x) => x.consumptions).reduce((s: number, c: any) => s + c.user_credits, 0);
    const range = { start_date: '2026-01-01', end_date: '2026-03-15' };
    const days = (await usage({ ...range, granularity: 'day' })).body.data;
    const weeks = (await usage({ ...range, granularity: 'week' })).body.data;
    const months = (await usage({ ...range, granularity: 'month' })).body.data;
    const years = (await usage({ ...range, granularity: 'year' })).body.data;
    expect(days).toHaveLength(74);
    expect(weeks[0].date).toBe('2025-12-29');
    expect(months.map((m: any) => m.date)).toEqual(['2026-01-01', '2026-02-01', '2026-03-01']);
    expect(years.map((m: any) => m.date)).toEqual(['2026-01-01']);
    for (const x of [weeks, months, years]) expect(total(x)).toBe(total(days));
  });
  it('filters by group, project and API key', async () => {
    const total = (d: any[]) => d.flatMap((x) => x.consumptions).reduce((s: number, c: any) => s + c.user_credits, 0);
    const all = total((await usage({ start_date: '2026-02-01', end_date: '2026-03-01' })).body.data);
    for (const filter of [
      { group_ids: [101] },
      { project_references: [(await ctx.api.get('/v1/analytics/team-projects')).body.data[0].project_reference] },
      { api_key_ids: ['9001'] },
    ]) {
      const t = total((await usage({ start_date: '2026-02-01', end_date: '2026-03-01', ...filter })).body.data);
      expect(t).toBeGreaterThan(0);
      expect(t).toBeLessThan(all);
    }
  });
  it('validates the body', async () => {
    for (const [body, field] of [
      [{ granularity: 'hour' }, 'granularity'],
      [{ start_date: '2024-01-01', end_date: '2026-01-01' }, 'start_date'],
      [{ group_ids: [0] }, 'group_ids.0'],
      [{ end_date: '2026-13-01' }, 'end_date'],
      // The reference's API key ids are strings.
      [{ api_key_ids: [9001] }, 'api_key_ids'],
    ] as const) {
      const r = await usage(body);
      expect(r.status).toBe(400);
      expect(r.body.invalid_params.map((p: any) => p.field)).toContain(field);
    }
    // Business plans may ask at most 180 days; Enterprise 365.
    const range = { start_date: '2025-06-01', end_date: '2026-01-01' };
    expect((await usage(range, 'sandbox-business')).status).toBe(400);
    expect((await usage(range)).status).toBe(200);
  });
  it('allows 100 requests a day per key', async () => {
    await ctx.api.control('reset', {});
    for (let i = 0; i < 100; i++) expect((await usage({}, 'sandbox-noaudit')).status).toBe(200);
    const r = await usage({}, 'sandbox-noaudit');
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
  });
  it('lists members, API keys, groups and projects in the shapes of the description, nothing more', async () => {
    const m = (await ctx.api.get('/v1/analytics/team-members')).body.data;
    expect(m.length).toBeGreaterThanOrEqual(50);
    expect(Object.keys(m[0]).sort()).toEqual(['email', 'role', 'status']);
    const keys = (await ctx.api.get('/v1/analytics/team-api-keys')).body.data;
    expect(Object.keys(keys[0]).sort()).toEqual(['api_key_id', 'created_at', 'display_name', 'status']);
    expect(keys[0].api_key_id).toEqual(expect.any(String));
    const groups = (await ctx.api.get('/v1/analytics/team-groups')).body.data;
    expect(Object.keys(groups[0]).sort()).toEqual(['group_id', 'member_count', 'name']);
    expect(groups.reduce((s: number, g: any) => s + g.member_count, 0)).toBe(m.length);
    const projects = (await ctx.api.get('/v1/analytics/team-projects')).body.data;
    expect(Object.keys(projects[0]).sort()).toEqual(['name', 'project_reference']);
  });
});

describe('recent creations', () => {
  it("lists the caller's own completed creations, newest first, filtered and paged", async () => {
    const png = (await testPng()).toString('base64');
    const up = resolvePaths(getTool('upscaler-precision'), DEFAULT_SLUGS);
    const mu = resolvePaths(getTool('music'), DEFAULT_SLUGS);
    const a = (await ctx.api.post(up.create, { image: png }, 'sandbox-admin')).body.data.task_id;
    clock.advance(1);
    const b = (await ctx.api.post(mu.create, { prompt: 'x', music_length_seconds: 30 }, 'sandbox-admin')).body.data
      .task_id;
    clock.advance(1);
    const c = (await ctx.api.post(up.create, { image: png }, 'sandbox-admin')).body.data.task_id;
    expect((await ctx.api.get('/v1/creations/recent', 'sandbox-admin')).body.data).toEqual([]);
    clock.advance(200);
    const all = await ctx.api.get('/v1/creations/recent', 'sandbox-admin');
    expect(all.body.data.map((x: any) => x.reference)).toEqual([c, b, a]);
    // The description's item: the file under creation (url, family), an image's thumbnail beside it.
    expect(all.body.data[0]).toMatchObject({
      id: expect.any(Number),
      name: expect.any(String),
      reference: c,
      created_at: expect.any(String),
      thumbnail: { url: expect.stringMatching(/^http/) },
      tool_name: 'upscaler-precision',
      creation: { url: expect.stringMatching(/^http/), family: 'image', tool: 'upscaler-precision' },
    });
    expect(all.body.data[0]).not.toHaveProperty('url');
    expect(all.body.data[1]).toMatchObject({ thumbnail: null, creation: { family: 'audio' } });
    const filtered = await ctx.api.get(
      '/v1/creations/recent?tool_name=upscaler-precision&per_page=1&page=2',
      'sandbox-admin',
    );
    expect(filtered.body.data.map((x: any) => x.reference)).toEqual([a]);
    expect(filtered.body.meta.pagination).toMatchObject({ total: 2, last_page: 2 });
    expect((await ctx.api.get('/v1/creations/recent', 'sandbox-member')).body.data).toEqual([]);
    expect((await ctx.api.get('/v1/creations/recent?per_page=0', 'sandbox-admin')).status).toBe(400);
  });
});

describe('CLI', () => {
  it('`mediadesk sandbox` prints "listening on http://127.0.0.1:PORT" first and serves until killed', async () => {
    const child = spawn(process.execPath, ['bin/mediadesk.js', 'sandbox', '--port', '0', '--seed', '3'], {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    await until(async () => out.includes('\n'), 20_000);
    const first = out.split('\n')[0];
    expect(first).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+$/);
    const url = first.slice('listening on '.length);
    const r = await fetch(`${url}/v1/ai/loras`, { headers: { 'x-magnific-api-key': 'sandbox-owner' } });
    expect(r.status).toBe(200);
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });
  it('`--print-keys` lists the demo keys', async () => {
    const child = spawn(process.execPath, ['bin/mediadesk.js', 'sandbox', '--print-keys'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    await once(child, 'exit');
    for (const k of DEMO_KEYS) expect(out).toContain(k.key);
  });
});
