import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createCore, type Core } from '../../electron/core/index.ts';
import { MemorySecretStore } from '../../electron/core/secrets.ts';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { DeskError, type CommandName, type Req, type Res } from '../../shared/contract/index.ts';
import { costSentence } from '../../shared/cost-words.ts';
import { formatTime } from '../../shared/dates.ts';
import { cleanup, control, makeImages, tmp } from './helpers.ts';
import { cliEnv, runCli } from '../cli.ts';

/**
 * The cost told before Start, against a Sandbox with the service's limits over HTTP: priced by the
 * app's price table (never the team's usage, which the service reports by category), with the
 * user's own price over it; a tool with no published price says "cost unknown"; a budget holds a
 * batch at the right job until raised.
 */
let sb: RunningSandbox;
let dir: string;
const cores: Core[] = [];

beforeAll(async () => {
  sb = await startSandbox({ port: 0, taskDurationMs: 100, limits: 'service' });
  dir = tmp('estimate');
});
afterAll(async () => {
  for (const c of cores) await c.close();
  await sb.close();
  cleanup(dir);
});

async function coreAs(key: string, name: string): Promise<Core> {
  const core = await createCore({
    home: join(dir, name),
    host: 'cli',
    env: { MEDIADESK_API_URL: sb.url, MEDIADESK_API_KEY: key },
    secrets: new MemorySecretStore(),
    startSandbox: async () => sb,
  });
  cores.push(core);
  return core;
}
async function call<K extends CommandName>(core: Core, name: K, req: Req<K>): Promise<Res<K>> {
  const reply = await core.dispatch(name, req);
  if (!reply.ok) throw DeskError.from(reply.error);
  return reply.result as Res<K>;
}
/** `what()` once `ok` holds of it, within 10 s. */
const until = <T>(what: () => T | Promise<T>, ok: (v: T) => boolean): Promise<T> =>
  vi.waitFor(
    async () => {
      const v = await what();
      if (!ok(v)) throw new Error('the value waited for did not come');
      return v;
    },
    { timeout: 10_000, interval: 25 },
  );
const charges = async (tool: string) =>
  ((await control(sb.url, 'stats')).charges[tool] ?? { uses: 0, credits: 0 }) as { uses: number; credits: number };
const usageRequests = async () =>
  (await control(sb.url, 'stats')).requests['POST /v1/analytics/team-credit-usage'] ?? 0;

let owner: Core;

/** The table's price of the precision upscaler at ×2, in the words the estimate says it. */
const UPSCALE_EACH = 5;
const UPSCALE_BASIS =
  "5 each by the service's price as a review reports it, read 2026-12-05: 5 for an image at ×2 from about 1.2 MP";

describe('the estimate before Start', () => {
  beforeAll(async () => {
    owner = await coreAs('sandbox-owner', 'owner');
  });

  it('prices a batch by the price table on a fresh data folder, reading no usage; your own price goes over it', async () => {
    const asked = await usageRequests();
    const shoot = join(dir, 'shoot-table');
    await makeImages(shoot, ['a.png', 'b.png', 'c.png']);
    const check = await call(owner, 'batches.check', { tool: 'upscaler-precision', inputs: [shoot] });
    const estimate = await call(owner, 'batches.estimate', { tool: 'upscaler-precision', creates: check.ready });
    expect(estimate).toMatchObject({ creates: 3, creditsEach: UPSCALE_EACH, credits: 15, learnedFrom: null });
    expect(estimate.basis).toBe(UPSCALE_BASIS);
    // No cap is published for the precision upscaler: none is said.
    expect(estimate.cap).toBeNull();
    expect(costSentence(estimate)).toBe(`Sends 3 paid jobs · 15 credits (${UPSCALE_BASIS})`);
    const started = await call(owner, 'batches.start', {
      tool: 'upscaler-precision',
      inputs: [shoot],
      outDir: join(dir, 'out-table'),
    });
    expect(started.batch!.estimate).toEqual({ credits: 15, basis: UPSCALE_BASIS });
    await until(
      () => owner.engine.store.batch(started.batch!.id)!,
      (b) => b.finished,
    );
    // The usage (by category, never per tool) is not asked for a price.
    expect(await usageRequests()).toBe(asked);

    const own = await call(owner, 'prices.set', { tool: 'upscaler-precision', credits: 8 });
    expect(own.prices.find((p) => p.tool === 'upscaler-precision')).toMatchObject({
      published: 5,
      own: 8,
      effective: 8,
    });
    const mine = await call(owner, 'batches.estimate', { tool: 'upscaler-precision', creates: 2 });
    expect([mine.credits, mine.basis]).toEqual([
      16,
      '8 each by your own price: 8 for an image at ×2 from about 1.2 MP',
    ]);
    await call(owner, 'prices.reset', { tool: 'upscaler-precision' });
    expect((await call(owner, 'batches.estimate', { tool: 'upscaler-precision', creates: 2 })).credits).toBe(10);
  });

  it('a tool the service publishes no credit price for says so before Start, and a budget in credits is refused', async () => {
    const estimate = await call(owner, 'batches.estimate', { tool: 'hires', params: { prompt: 'x' }, creates: 3 });
    expect(estimate).toMatchObject({ credits: null, creditsEach: null });
    expect(estimate.basis).toBe(
      'cost unknown: the service publishes €0.10 an image at 2K and €0.32 at 4K, in euros, not credits; set a price in Settings › Prices or with mediadesk prices set',
    );
    // The high-resolution generator (mystic) has the published cap of paid plans: 6,000 a day.
    expect(estimate.cap).toMatchObject({ limit: 6000, used: 0, left: 6000 });
    const shoot = join(dir, 'unpriced-shoot');
    await makeImages(shoot, ['m.png']);
    const refused = await call(owner, 'batches.start', {
      tool: 'change-camera',
      inputs: [shoot],
      outDir: join(dir, 'unpriced-out'),
      budget: { credits: 100 },
    }).catch((e: DeskError) => e);
    expect(refused).toBeInstanceOf(DeskError);
    expect((refused as DeskError).message).toMatch(
      /^a budget in credits needs the batch's cost: cost unknown: the service's pricing pages give no credit price for this tool that could be read; set a price in Settings › Prices or with mediadesk prices set; set a budget in jobs instead$/,
    );
  });
});

describe('a budget per batch', () => {
  it('is refused when it is not a number above 0', async () => {
    for (const [budget, says] of [
      [{ credits: 0 }, 'a budget in credits must be a number above 0'],
      [{ credits: 'lots' }, 'a budget in credits must be a number above 0'],
      [{ jobs: 2.5 }, 'a budget in jobs must be a whole number above 0'],
    ] as const) {
      const reply = await owner.dispatch('batches.start', {
        tool: 'upscaler-precision',
        inputs: [dir],
        budget,
      } as never);
      expect(reply.ok).toBe(false);
      if (!reply.ok) expect(reply.error.message).toContain(says);
    }
  });

  it('holds the batch before the create that would go past it, and raising it lets the rest go on by itself', async () => {
    const shoot = join(dir, 'budget-shoot');
    await makeImages(shoot, ['1.png', '2.png', '3.png', '4.png', '5.png']);
    const before = await charges('upscaler-precision');
    const started = await call(owner, 'batches.start', {
      tool: 'upscaler-precision',
      inputs: [shoot],
      outDir: join(dir, 'budget-out'),
      budget: { credits: 10 },
    });
    const id = started.batch!.id;
    expect(started.batch!.budget).toEqual({ credits: 10, jobs: null });
    const held = await until(
      () => owner.engine.store.batch(id)!,
      (b) => b.budgetHold !== null && b.counts.done === 2,
    );
    expect(held.budgetHold).toBe(
      "Paused: the next job would go past this batch's budget of 10 credits (10 spent so far by the estimate).",
    );
    expect(held.counts.queued).toBe(3);
    await owner.engine.settled();
    expect((await charges('upscaler-precision')).uses - before.uses).toBe(2);
    // The Queue's batch list carries the hold.
    const listed = (await call(owner, 'batches.list', { limit: 5 })).find((b) => b.id === id)!;
    expect(listed.budgetHold).toBe(held.budgetHold);

    // Raised to three jobs' worth: one more goes, then it is held again at 15 spent.
    const raised = await call(owner, 'batches.setBudget', { id, budget: { credits: 15 } });
    expect([raised.budget, raised.budgetHold]).toEqual([{ credits: 15, jobs: null }, null]);
    const again = await until(
      () => owner.engine.store.batch(id)!,
      (b) => b.budgetHold !== null && b.counts.done === 3,
    );
    expect(again.budgetHold).toContain('budget of 15 credits (15 spent so far');

    // Without a budget it finishes.
    await call(owner, 'batches.setBudget', { id, budget: null });
    const done = await until(
      () => owner.engine.store.batch(id)!,
      (b) => b.finished,
    );
    expect([done.counts.done, done.budget, done.budgetHold]).toEqual([5, null, null]);
    expect((await charges('upscaler-precision')).uses - before.uses).toBe(5);
  });

  it('in jobs: the batch stops after that many creates, and another batch behind it is not held up', async () => {
    const shoot = join(dir, 'jobs-shoot');
    await makeImages(shoot, ['j1.png', 'j2.png', 'j3.png', 'j4.png']);
    await call(owner, 'jobs.pause', {});
    const capped = await call(owner, 'batches.start', {
      tool: 'image-to-prompt',
      inputs: [shoot],
      outDir: join(dir, 'jobs-out'),
      budget: { jobs: 1 },
    });
    const other = join(dir, 'other-shoot');
    await makeImages(other, ['o1.png']);
    const behind = await call(owner, 'batches.start', {
      tool: 'image-to-prompt',
      inputs: [other],
      outDir: join(dir, 'other-out'),
    });
    await call(owner, 'jobs.resume', {});
    const held = await until(
      () => owner.engine.store.batch(capped.batch!.id)!,
      (b) => b.budgetHold !== null && b.counts.done === 1,
    );
    expect(held.budgetHold).toBe("Paused: this batch's budget of 1 job is used.");
    await until(
      () => owner.engine.store.batch(behind.batch!.id)!,
      (b) => b.finished,
    );
    expect(owner.engine.store.batch(capped.batch!.id)!.counts.queued).toBe(3);
    await call(owner, 'batches.setBudget', { id: capped.batch!.id, budget: null });
    await until(
      () => owner.engine.store.batch(capped.batch!.id)!,
      (b) => b.finished,
    );
  });
});

describe('mediadesk run --check, --budget-jobs and jobs budget', () => {
  it('--check says the cost and what it leaves of the cap; a budget pauses the run and `jobs budget` lets it go on', async () => {
    const shoot = join(dir, 'cli-shoot');
    await makeImages(shoot, ['x.png', 'y.png']);
    const out = join(dir, 'cli-out');
    const env = cliEnv(join(dir, 'cli-home'), sb.url);
    const checked = await runCli(['run', 'upscaler-precision', shoot, '--check', '--out', out], { env });
    expect(checked.code, checked.err).toBe(0);
    // A fresh data folder, and a key that may not read the team's usage: the cost is known all the same.
    expect(checked.out).toBe(`2 ready\nSends 2 paid jobs · 10 credits (${UPSCALE_BASIS})\nresults go to ${out}\n`);
    const json = await runCli(['run', 'upscaler-precision', shoot, '--check', '--json', '--out', out], { env });
    expect(JSON.parse(json.out).estimate).toMatchObject({ creates: 2, credits: 10, creditsEach: 5 });
    const member = await runCli(['run', 'upscaler-precision', shoot, '--check', '--out', out], {
      env: cliEnv(join(dir, 'cli-member'), sb.url, 'sandbox-member'),
    });
    expect(member.out).toContain(`Sends 2 paid jobs · 10 credits (${UPSCALE_BASIS})`);

    const bad = await runCli(['run', 'upscaler-precision', shoot, '--budget-jobs', '0'], { env });
    expect([bad.code, bad.err.trim()]).toEqual([
      2,
      'mediadesk run: a budget in jobs must be a whole number above 0, got "0"',
    ]);

    const paused = await runCli(
      ['run', 'upscaler-precision', shoot, '--out', out, '--budget-jobs', '1', '--timeout', '4s'],
      {
        env,
      },
    );
    expect(paused.code).toBe(124);
    const batch = /batch ([0-9a-f]{8}): 2 queued/.exec(paused.out)![1];
    // Said as the Studio and the Queue say it, on every line while it lasts, and in the summary with
    // what lifts it: running the same command again would not.
    const hold = `Paused by budget: this batch's budget of 1 job is used. Raise or remove it with \`mediadesk jobs budget ${batch}\` (running the same command again does not).`;
    const lines = paused.err.trimEnd().split('\n');
    const progress = lines.filter((l) => l.startsWith('progress '));
    const from = progress.findIndex((l) => l.endsWith(`(${hold})`));
    expect(from, paused.err).toBeGreaterThanOrEqual(0);
    expect(progress.slice(from).every((l) => l.endsWith(`(${hold})`))).toBe(true);
    expect(lines.at(-1)).toMatch(/^gave up after 4s \(--timeout\): [01] of 2 done; Paused by budget: /);
    expect(lines.at(-1)!.endsWith(hold)).toBe(true);
    expect(paused.err).not.toContain('run the same command again to resume');
    const lifted = await runCli(['jobs', 'budget', batch, '--none'], { env });
    expect([lifted.code, lifted.out]).toEqual([
      0,
      `batch ${batch}: no budget; it goes on by itself while the queue runs (the app, or \`mediadesk run\` over its inputs)\n`,
    ]);
    const resumed = await runCli(['run', 'upscaler-precision', shoot, '--out', out], { env });
    expect(resumed.code, resumed.err).toBe(0);
    // The paused job is followed, the one done is not paid again.
    expect(resumed.out).toBe(
      `batch ${batch}: 0 queued, 1 resumed from an earlier run, 1 skipped\n1 of 1 done; results in ${out}\n`,
    );
  });
});

describe('a tool priced by output area', () => {
  it('scales the table price by the square of the scale factor', async () => {
    const params = { scale_factor: 4 };
    const estimate = await call(owner, 'batches.estimate', { tool: 'upscaler-precision', params, creates: 2 });
    expect(estimate).toMatchObject({ creditsEach: 20, credits: 40 });
    expect(estimate.basis).toBe(`20 ${UPSCALE_BASIS.slice(2)}; at ×4: 4 times the area of ×2`);
  });
});

describe('a workflow app before Run', () => {
  it("says its own price times the runs, and what they leave of the app's daily cap", async () => {
    const teamOwner = await coreAs('sandbox-owner', 'app-owner');
    const { apps } = await call(teamOwner, 'apps.list', {});
    const app = apps.find((a) => a.cost !== null)!;
    const estimate = await call(teamOwner, 'apps.estimate', { id: app.id, runs: 3 });
    expect(estimate).toMatchObject({ creates: 3, credits: 3 * app.cost!, creditsEach: app.cost, learnedFrom: null });
    // The service publishes no cap for a workflow app: none until the user sets one.
    expect(estimate.cap).toBeNull();
    await call(teamOwner, 'limits.setCap', { tool: `app:${app.id}`, cap: 2 });
    expect(costSentence(await call(teamOwner, 'apps.estimate', { id: app.id, runs: 3 }), 'run')).toBe(
      `Sends 3 paid runs · ${3 * app.cost!} credits (the app's price: ${app.cost} credits a run) · only 2 of today's 2 for ${app.name} are left: the rest wait until ${formatTime(0, { utc: true })} UTC`,
    );
    const unknown = await call(teamOwner, 'apps.estimate', { id: 'no-such-app', runs: 1 }).catch((e: DeskError) => e);
    expect(unknown).toBeInstanceOf(DeskError);
  });
});
