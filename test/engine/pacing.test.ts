// The queue paced by the limiter against the Sandbox with its limits on, over real HTTP and real
// SQLite: rates scaled down (the same numbers for both) so a batch's pacing takes seconds; the
// batches past both windows run on a TestClock the engine and the Sandbox share.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { join } from 'node:path';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { openEngine } from '../../electron/core/engine/open.ts';
import { limitsHandlers } from '../../electron/core/limits/handlers.ts';
import { DEFAULT_SLUGS } from '../../shared/catalogue/index.ts';
import { heldMessage } from '../../shared/contract/jobs.ts';
import { DEFAULT_DAILY_CAPS, nextUtcMidnight, type RateLimits } from '../../shared/service-limits.ts';
import { DEFAULT_SETTINGS } from '../../shared/settings.ts';
import { cleanup, control, creates, makeImages, settle, tmp } from './helpers.ts';
import { cliEnv, runCli } from '../cli.ts';
import { createCore } from '../../electron/core/index.ts';
import { MemorySecretStore } from '../../electron/core/secrets.ts';
import { DeskError, type CommandName, type Req, type Res } from '../../shared/contract/index.ts';
import { SETTLED_STATES } from '../../shared/contract/jobs.ts';
import { ApiClient } from '../../electron/core/api/client.ts';
import { realClock, type Clock } from '../../electron/core/clock.ts';
import { SERVICE_RATES } from '../../shared/service-limits.ts';
import { TestClock } from '../clock.ts';
import { until } from '../wait.ts';
import type { SharedPacing } from '../../electron/core/limits/pacer.ts';

const RATES: RateLimits = { burstPerSec: 50, burstWindowSec: 2, averagePerSec: 40, averageWindowSec: 10 };
const TOOL = 'image-to-prompt';

let sb: RunningSandbox;
let dir: string;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, taskDurationMs: 100, limits: { ...RATES, caps: DEFAULT_DAILY_CAPS } });
  dir = tmp('pacing');
});
afterAll(async () => {
  await sb?.close();
  cleanup(dir);
});

function pacedEngine(
  home: string,
  at: { url: string; rates: RateLimits; clock?: Clock } = { url: sb.url, rates: RATES },
) {
  return openEngine({
    home,
    target: async () => ({ baseUrl: at.url, apiKey: 'sandbox-owner' }),
    slugs: () => ({ ...DEFAULT_SLUGS }),
    settings: () => DEFAULT_SETTINGS,
    rates: at.rates,
    clock: at.clock,
    concurrency: 32,
    poll: { firstMs: 300, minMs: 300, maxMs: { image: 600, text: 600, audio: 600, video: 600 } },
    client: { maxDelayMs: 2000 },
  });
}

/** Waits until `done` of the jobs are done and every other one says why it waits. */
async function heldAfter(e: ReturnType<typeof openEngine>, ids: readonly string[], done: number): Promise<void> {
  await vi.waitFor(
    () => {
      const rows = e.store.byIds(ids);
      expect(rows.filter((j) => j.state === 'done')).toHaveLength(done);
      expect(rows.every((j) => j.state === 'done' || j.error)).toBe(true);
    },
    { timeout: 60_000, interval: 50 },
  );
}

describe('pacing to the service limits', () => {
  it("runs a batch past both of the service's windows with no 429 at all: the limiter keeps under them", async () => {
    // Time moves only while no request is in flight, to the next timer: minutes of pacing in seconds.
    const clock = new TestClock();
    // The service's windows with a tenth of its rates: 200 jobs cross them as 2,000 do at full rates.
    const rates = {
      ...SERVICE_RATES,
      burstPerSec: SERVICE_RATES.burstPerSec / 10,
      averagePerSec: SERVICE_RATES.averagePerSec / 10,
    };
    const jobs = 200;
    const service = await startSandbox({
      port: 0,
      taskDurationMs: 100,
      now: clock.now,
      limits: { ...rates, caps: DEFAULT_DAILY_CAPS },
    });
    const inputs = await makeImages(
      join(dir, 'many'),
      Array.from({ length: jobs }, (_, i) => `p${i}.png`),
      8,
    );
    const e = pacedEngine(join(dir, 'home-many'), { url: service.url, rates, clock });
    const stopClock = clock.autoAdvance(() => e.tools.api.inFlight === 0);
    try {
      const started = clock.now();
      const r = await e.startBatch({ tool: TOOL, inputs, outDir: join(dir, 'out-many') });
      expect(r.queued).toBe(jobs);
      e.start();
      await settle(e, r.jobIds, 230_000);
      const states = new Set(e.store.byIds(r.jobIds).map((j) => j.state));
      expect(states).toEqual(new Set(['done']));
      const stats = await control(service.url, 'stats');
      expect(creates(stats)).toBe(jobs);
      expect(stats.limited).toEqual({ burst: 0, average: 0, daily_cap: 0 });
      // Held back, not sent at once: the batch is more than one burst window and one average window take.
      const { burstPerSec, burstWindowSec, averagePerSec, averageWindowSec } = rates;
      expect(burstPerSec * burstWindowSec).toBeLessThan(jobs);
      expect(averagePerSec * averageWindowSec).toBeLessThan(jobs);
      expect(clock.now() - started).toBeGreaterThan(averageWindowSec * 1000);
    } finally {
      stopClock();
      await e.close();
      await service.close();
    }
  }, 240_000);

  it("paces every request through the client, not only the queue's: reads sent during a batch draw no 429 and each takes one place", async () => {
    const clock = new TestClock();
    // A quarter of RATES and of its 400 jobs: the batch still fills both windows while the reads go.
    const rates = { ...RATES, burstPerSec: 12, averagePerSec: 10 };
    const service = await startSandbox({
      port: 0,
      taskDurationMs: 100,
      now: clock.now,
      limits: { ...rates, caps: DEFAULT_DAILY_CAPS },
    });
    const inputs = await makeImages(
      join(dir, 'reads'),
      Array.from({ length: 100 }, (_, i) => `r${i}.png`),
      8,
    );
    const e = pacedEngine(join(dir, 'home-reads'), { url: service.url, rates, clock });
    // Another service's client (usage, creations, uploads...): paced by the engine's pacer, as createCore wires it.
    const other = new ApiClient(async () => ({ baseUrl: service.url, apiKey: 'sandbox-owner' }), {
      pace: () => e.pacer.gate(),
      maxDelayMs: 2000,
    });
    // Counts the places taken (the limiter's table keeps only its windows' rows).
    let places = 0;
    const acquire = e.pacer.limiter.acquire.bind(e.pacer.limiter);
    e.pacer.limiter.acquire = (req) => {
      const grant = acquire(req);
      if (grant.go) places++;
      return grant;
    };
    const stopClock = clock.autoAdvance(() => e.tools.api.inFlight === 0 && other.inFlight === 0);
    try {
      const r = await e.startBatch({ tool: TOOL, inputs, outDir: join(dir, 'out-reads') });
      e.start();
      // Reads all through the batch, while the queue keeps the windows full.
      let reads = 0;
      const reader = (async () => {
        while (e.store.byIds(r.jobIds).some((j) => !SETTLED_STATES.includes(j.state))) {
          await other.get('/v1/ai/loras');
          reads++;
        }
      })();
      await settle(e, r.jobIds);
      await reader;
      expect(new Set(e.store.byIds(r.jobIds).map((j) => j.state))).toEqual(new Set(['done']));
      expect(reads).toBeGreaterThan(20);
      const stats = await control(service.url, 'stats');
      expect(stats.limited).toEqual({ burst: 0, average: 0, daily_cap: 0 });
      // One place per request the service saw: the queue's own are not counted twice.
      const seen = Object.entries(stats.requests as Record<string, number>)
        .filter(([k]) => / \/v1\//.test(k))
        .reduce((a, [, n]) => a + n, 0);
      expect(places).toBeGreaterThanOrEqual(seen);
      expect(places).toBeLessThanOrEqual(seen + 5);
    } finally {
      stopClock();
      await e.close();
      await service.close();
    }
  }, 240_000);

  it('holds a batch at its daily cap without failing a job, and resumes it by itself when the cap is raised', async () => {
    await control(sb.url, 'reset', {});
    const capped = (n: number) => ({ ...DEFAULT_DAILY_CAPS.enterprise, [TOOL]: n });
    await control(sb.url, 'limits', { limits: { ...RATES, caps: { ...DEFAULT_DAILY_CAPS, enterprise: capped(10) } } });
    const inputs = await makeImages(
      join(dir, 'capped'),
      Array.from({ length: 25 }, (_, i) => `c${i}.png`),
      8,
    );
    const e = pacedEngine(join(dir, 'home-capped'));
    const limits = limitsHandlers(e.pacer, e.store);
    try {
      expect((await limits['limits.setCap']({ tool: TOOL, cap: 10 })).today).toEqual([]);
      const r = await e.startBatch({ tool: TOOL, inputs, outDir: join(dir, 'out-capped') });
      e.start();
      // Held: ten done, the rest queued with the cap's words, nothing failed.
      await heldAfter(e, r.jobIds, 10);
      const rows = e.store.byIds(r.jobIds);
      expect(rows.filter((j) => j.state === 'queued')).toHaveLength(15);
      expect(rows.find((j) => j.state === 'queued')!.error).toMatch(
        /^Waiting: the daily limit of 10 jobs for Image to prompt is reached \(0 left today\); it resets at \d{1,2}:\d\d(\s[AP]M)? your time\.$/,
      );
      const status = await e.statusNow();
      expect(status.capHolds).toEqual([
        expect.objectContaining({ tool: TOOL, limit: 10, left: 0, waiting: 15, title: 'Image to prompt' }),
      ]);
      expect(heldMessage(status.capHolds[0])).toMatch(
        /^Held: the daily limit of 10 jobs for Image to prompt is reached; 0 left today, resets at \d{1,2}:\d\d(\s[AP]M)? your time \(15 jobs wait\)\.$/,
      );
      const today = (await limits['limits.status']({})).today;
      expect(today).toEqual([expect.objectContaining({ tool: TOOL, cap: 10, used: 10, left: 0, waiting: 15 })]);
      expect((await control(sb.url, 'stats')).limited.daily_cap).toBe(0);

      // Raised, here and on the service: the held jobs go on with nobody starting them again.
      await control(sb.url, 'limits', {
        limits: { ...RATES, caps: { ...DEFAULT_DAILY_CAPS, enterprise: capped(30) } },
      });
      await limits['limits.setCap']({ tool: TOOL, cap: 30 });
      await settle(e, r.jobIds);
      expect(new Set(e.store.byIds(r.jobIds).map((j) => j.state))).toEqual(new Set(['done']));
      expect((await e.statusNow()).capHolds).toEqual([]);
      const stats = await control(sb.url, 'stats');
      expect(creates(stats)).toBe(25);
      expect(stats.limited).toEqual({ burst: 0, average: 0, daily_cap: 0 });
    } finally {
      await e.close();
    }
  }, 120_000);
});

describe("a create's place is taken only for a create sent", () => {
  it('a job canceled while its input uploads takes none', async () => {
    await control(sb.url, 'reset', {});
    const home = join(dir, 'home-cancel-upload');
    const [img] = await makeImages(join(home, 'in'), ['c.png'], 300);
    const e = pacedEngine(home);
    try {
      // change-camera takes its image by URL: the local file is uploaded first, its answer held till let go.
      await control(sb.url, 'faults', { putAnswerDelayMs: 600_000 });
      const r = await e.startBatch({ tool: 'change-camera', inputs: [img], params: { zoom: 3 }, outDir: home });
      e.start();
      await until(async () => (await control(sb.url, 'stats')).uploads.stored >= 1, { what: 'the upload stored' });
      e.cancelJob(r.jobIds[0]);
      await control(sb.url, 'faults', { putAnswerDelayMs: 0 });
      // Waits for the steps in flight: the upload's answer, and what the job does next.
      await e.stop();
      expect(e.job(r.jobIds[0]).state).toBe('canceled');
      expect(creates(await control(sb.url, 'stats'))).toBe(0);
      expect(e.pacer.usedToday(e.pacer.lastScope!.scope).get('change-camera') ?? 0).toBe(0);
    } finally {
      await control(sb.url, 'faults', { putAnswerDelayMs: 0 });
      await e.close();
    }
  });

  it("a job sent while the queue awaited another project's answer is not started again from its old row", async () => {
    await control(sb.url, 'reset', {});
    const home = join(dir, 'home-stale');
    const [held, beta] = await makeImages(join(home, 'in'), ['held.png', 'beta.png'], 8);
    const e = pacedEngine(home);
    // The team server's seam, over this folder's limiter: project Acme is out of budget. Beta's
    // grant is answered only once the queue asks about Acme again, and that answer comes once
    // Beta's job has been sent and its step ended: the queue's row of it is stale by then.
    let betaGrants = 0;
    let betaWaits: (() => void) | null = null;
    const betaJob = () => e.store.byIds(b.jobIds)[0];
    const team: SharedPacing = {
      acquire: async (req) => {
        if (req.kind === 'create' && req.project === 'Beta') {
          betaGrants++;
          await new Promise<void>((res) => (betaWaits = res));
        }
        return e.pacer.limiter.acquire(req);
      },
      peek: async (req, pending) => {
        if (req.project !== 'Acme') return e.pacer.limiter.peek(req, pending);
        const release = betaWaits;
        if (release) {
          betaWaits = null;
          release();
          await until(() => !['queued', 'submitting'].includes(betaJob().state), { what: 'Beta sent' });
          await new Promise((res) => setImmediate(res));
        }
        const resetsAt = Date.now() + 60_000;
        return { go: false, waitMs: 60_000, reason: 'project_budget', limit: 10, left: 0, resetsAt, project: 'Acme' };
      },
      usedToday: (scope) => e.pacer.limiter.usedToday(scope),
      note: null,
    };
    e.pacer.share(team);
    const a = await e.startBatch({ tool: TOOL, inputs: [held], outDir: join(home, 'out'), project: 'Acme' });
    const b = await e.startBatch({ tool: TOOL, inputs: [beta], outDir: join(home, 'out'), project: 'Beta' });
    try {
      e.start();
      await settle(e, b.jobIds);
      await e.stop();
      expect(betaJob().state).toBe('done');
      expect(e.store.byIds(a.jobIds)[0].state).toBe('queued');
      expect(creates(await control(sb.url, 'stats'))).toBe(1);
      expect(betaGrants).toBe(1);
    } finally {
      await e.close();
    }
  });
});

describe('the day turning at midnight UTC', () => {
  it('resumes a batch held at its daily cap by itself once the engine and the service reach the next day', async () => {
    // One clock for the Sandbox and the engine's limiter, set ten minutes before midnight UTC, moved past it below.
    let shift = nextUtcMidnight(Date.now()) - 10 * 60_000 - Date.now();
    const clock = () => Date.now() + shift;
    const caps = { ...DEFAULT_DAILY_CAPS, enterprise: { ...DEFAULT_DAILY_CAPS.enterprise, [TOOL]: 4 } };
    const service = await startSandbox({ port: 0, taskDurationMs: 100, now: clock, limits: { ...RATES, caps } });
    const home = join(dir, 'home-midnight');
    const e = openEngine({
      home,
      target: async () => ({ baseUrl: service.url, apiKey: 'sandbox-owner' }),
      slugs: () => ({ ...DEFAULT_SLUGS }),
      settings: () => DEFAULT_SETTINGS,
      rates: RATES,
      clock: { ...realClock, now: clock },
      poll: { firstMs: 100, minMs: 100, maxMs: { image: 300, text: 300, audio: 300, video: 300 } },
    });
    const limits = limitsHandlers(e.pacer, e.store);
    try {
      await limits['limits.setCap']({ tool: TOOL, cap: 4 });
      const inputs = await makeImages(
        join(dir, 'midnight'),
        Array.from({ length: 8 }, (_, i) => `m${i}.png`),
        8,
      );
      const r = await e.startBatch({ tool: TOOL, inputs, outDir: join(dir, 'out-midnight') });
      e.start();
      await heldAfter(e, r.jobIds, 4);
      expect(e.store.byIds(r.jobIds).filter((j) => j.state === 'queued')).toHaveLength(4);
      expect((await e.statusNow()).capHolds).toEqual([expect.objectContaining({ tool: TOOL, left: 0, waiting: 4 })]);

      // Midnight UTC passes: nobody raises the cap or starts anything, the rest of the batch goes.
      shift += 10 * 60_000 + 1000;
      await settle(e, r.jobIds);
      expect(new Set(e.store.byIds(r.jobIds).map((j) => j.state))).toEqual(new Set(['done']));
      expect(e.store.byIds(r.jobIds).every((j) => j.error === null)).toBe(true);
      expect((await e.statusNow()).capHolds).toEqual([]);
      const today = (await limits['limits.status']({})).today;
      expect(today).toEqual([expect.objectContaining({ tool: TOOL, cap: 4, used: 4, left: 0, waiting: 0 })]);
      expect(today[0].resetsAt).toBe(nextUtcMidnight(clock()));
      const stats = await control(service.url, 'stats');
      expect(creates(stats)).toBe(8);
      expect(stats.limited.daily_cap).toBe(0);
    } finally {
      await e.close();
      await service.close();
    }
  }, 60_000);
});

describe('a daily limit the service tells', () => {
  it('holds that tool until the reset its 429 gives, says the cap was learned, and lets the other tools go on', async () => {
    await control(sb.url, 'reset', {});
    // The Sandbox's own cap of 3 (no cap is published for the tool: the app knows none until told).
    const caps = { ...DEFAULT_DAILY_CAPS, enterprise: { ...DEFAULT_DAILY_CAPS.enterprise, [TOOL]: 3 } };
    await control(sb.url, 'limits', { limits: { ...RATES, caps } });
    const inputs = await makeImages(
      join(dir, 'learned'),
      Array.from({ length: 8 }, (_, i) => `l${i}.png`),
      8,
    );
    const e = pacedEngine(join(dir, 'home-learned'));
    const limits = limitsHandlers(e.pacer, e.store);
    try {
      const r = await e.startBatch({ tool: TOOL, inputs, outDir: join(dir, 'out-learned') });
      e.start();
      await heldAfter(e, r.jobIds, 3);
      const rows = e.store.byIds(r.jobIds);
      expect(rows.filter((j) => j.state === 'failed')).toEqual([]);
      expect(rows.find((j) => j.state === 'queued')!.error).toMatch(
        /^Waiting: the daily limit of 3 jobs for Image to prompt is reached \(0 left today\); it resets at \d{1,2}:\d\d(\s[AP]M)? your time\.$/,
      );
      const status = await limits['limits.status']({});
      const learned = status.caps.find((c) => c.tool === TOOL)!;
      expect(learned).toMatchObject({ cap: 3, from: 'learned', own: false });
      // Until the reset the 429 gave (Retry-After, in whole seconds): midnight UTC.
      expect(Math.abs(learned.until! - nextUtcMidnight(Date.now()))).toBeLessThan(2000);
      expect(status.today).toEqual([expect.objectContaining({ tool: TOOL, capFrom: 'learned', used: 3, left: 0 })]);
      // Another tool is not held by it.
      const other = await makeImages(join(dir, 'learned-other'), ['o.png'], 8);
      const o = await e.startBatch({ tool: 'skin-creative', inputs: other, outDir: join(dir, 'out-learned-other') });
      await settle(e, o.jobIds);
      expect(e.store.byIds(o.jobIds)[0].state).toBe('done');
    } finally {
      await e.close();
    }
  }, 60_000);
});

describe('mediadesk limits', () => {
  it('shows the plan and its caps, sets a cap of your own and takes it back, and refuses a bad one by name', async () => {
    const env = cliEnv(join(dir, 'home-cli'), sb.url);
    const shown = await runCli(['limits'], { env });
    expect(shown.code).toBe(0);
    // A demo key's plan decides (sandbox-owner: enterprise); a live key's is the planTier setting's.
    expect(shown.out).toMatch(/^Plan: enterprise \(from the Sandbox's demo key\)$/m);
    // Only the caps the service publishes, named by title with the id `limits set` takes; no `*`.
    expect(shown.out).toMatch(/^High-resolution generator +hires +6000 +published$/m);
    expect(shown.out).toContain('published: https://docs.freepik.com/ratelimits');
    expect(shown.out).not.toMatch(/upscaler-precision|^Every other tool/m);
    const set = await runCli(['limits', 'set', 'upscaler-precision', '300'], { env });
    expect([set.code, set.err]).toEqual([0, '']);
    expect(set.out).toMatch(/^Precision upscaler +upscaler-precision +300 +yours$/m);
    const other = await runCli(['limits', 'set', 'music', '7', '--plan', 'business'], { env });
    expect(other.out).not.toMatch(/ music +7/);
    const live = await runCli(['limits'], { env: cliEnv(join(dir, 'home-cli'), sb.url, 'a-live-key') });
    expect(live.out).toMatch(/^Plan: business \(from Settings \(planTier\)\)$/m);
    expect(live.out).toMatch(/^Music generation +music +7 +yours$/m);
    // A workflow app's cap is named by the app's title from the apps list.
    const app = await runCli(['limits', 'set', 'app:jM4nX8sc', '5'], { env });
    expect([app.code, app.err]).toEqual([0, '']);
    expect(app.out).toMatch(/^Jingle maker +app:jM4nX8sc +5 +yours$/m);
    expect(app.out).not.toMatch(/^app:/m);
    const json = await runCli(['limits', '--json'], { env }).then((r) => JSON.parse(r.out).caps);
    const own = { own: true, from: 'own', until: null };
    expect(json).toContainEqual({ tool: 'upscaler-precision', title: 'Precision upscaler', cap: 300, ...own });
    expect(json).toContainEqual({ tool: 'app:jM4nX8sc', title: 'Jingle maker', cap: 5, ...own });
    const back = await runCli(['limits', 'set', 'upscaler-precision', 'default'], { env });
    expect(back.out).not.toMatch(/upscaler-precision/);
    const bad = await runCli(['limits', 'set', 'no-such-tool', '5'], { env });
    expect(bad.code).toBe(2);
    expect(bad.err.trim()).toBe(
      'mediadesk limits: tool must be a tool id (mediadesk run without one lists them), * for every other tool, or app:<app id>',
    );
    const notANumber = await runCli(['limits', 'set', 'music', 'lots'], { env });
    expect([notANumber.code, notANumber.err.trim()]).toEqual([
      2,
      'mediadesk limits: the cap is a whole number of jobs a day, 0 or more, or default; got "lots"',
    ]);
  }, 60_000);
});

/** The CLI's core on a data folder, on the shared Sandbox with one of its demo keys. */
const cliCore = (home: string, key: string, appRuns?: TestClock) =>
  createCore({
    home,
    host: 'cli',
    env: { MEDIADESK_API_URL: sb.url, MEDIADESK_API_KEY: key },
    secrets: new MemorySecretStore(),
    startSandbox: () => Promise.reject(new Error('not used')),
    clocks: { appRuns },
  });

describe('workflow app runs', () => {
  it("count against their app's own daily cap: a run over it waits, said plainly, and goes once the cap is raised", async () => {
    await control(sb.url, 'reset', {});
    const home = join(dir, 'home-apps');
    // The runner's time moves a tick (250 ms) at each look: its recheck of a cap 5 s later takes 20 looks.
    const clock = new TestClock();
    const core = await cliCore(home, 'sandbox-owner', clock);
    const moving = { timeout: 30_000, interval: 20 };
    const waitMoving = (check: () => void) =>
      vi.waitFor(() => {
        clock.advance(250);
        check();
      }, moving);
    const call = async <K extends CommandName>(name: K, req: Req<K>): Promise<Res<K>> => {
      const reply = await core.dispatch(name, req);
      if (!reply.ok) throw DeskError.from(reply.error);
      return reply.result as Res<K>;
    };
    const run = (brief: string) =>
      call('apps.run', { appId: 'jM4nX8sc', confirmedCost: 8, inputs: { brief }, outDir: join(home, 'out') });
    try {
      await call('limits.setCap', { tool: 'app:jM4nX8sc', cap: 1 });
      const first = (await run('one')).id;
      const second = (await run('two')).id;
      await waitMoving(() =>
        expect([SETTLED_STATES.includes(core.apps.one(first).state), !!core.apps.one(second).error]).toEqual([
          true,
          true,
        ]),
      );
      expect(core.apps.one(first).state).toBe('done');
      expect(core.apps.one(second)).toMatchObject({
        state: 'queued',
        error: expect.stringMatching(
          /^Waiting: the daily limit of 1 job for the workflow app Jingle maker is reached \(0 left today\); it resets at \d{1,2}:\d\d(\s[AP]M)? your time\.$/,
        ),
      });
      await call('limits.setCap', { tool: 'app:jM4nX8sc', cap: 2 });
      await waitMoving(() => expect(SETTLED_STATES).toContain(core.apps.one(second).state));
      expect(core.apps.one(second)).toMatchObject({ state: 'done', error: null });
      // The limits tables name it as the Apps screen does.
      const limits = await call('limits.status', {});
      expect(limits.caps).toContainEqual({
        tool: 'app:jM4nX8sc',
        title: 'Jingle maker',
        cap: 2,
        own: true,
        from: 'own',
        until: null,
      });
      expect(limits.today).toContainEqual(expect.objectContaining({ tool: 'app:jM4nX8sc', title: 'Jingle maker' }));
    } finally {
      await core.close();
    }
    // With a key whose team cannot list apps, the name its runs were queued under names it; an app never run, none.
    const other = await cliCore(home, 'sandbox-business');
    try {
      expect(await other.apps.titlesOf(['jM4nX8sc', 'zQ8gone7x1'])).toEqual(new Map([['jM4nX8sc', 'Jingle maker']]));
    } finally {
      await other.close();
    }
  }, 60_000);
});
