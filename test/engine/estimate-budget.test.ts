import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type Core } from '../../electron/core/index.ts';
import { MemorySecretStore } from '../../electron/core/secrets.ts';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { DEFAULT_SLUGS, resolvePaths, getTool } from '../../shared/catalogue/index.ts';
import { DeskError, type CommandName, type Req, type Res } from '../../shared/contract/index.ts';
import { costSentence } from '../../shared/cost-words.ts';
import { formatTime } from '../../shared/dates.ts';
import { creditsOf, DEFAULT_DAILY_CAPS } from '../../shared/service-limits.ts';
import { cleanup, control, makeImages, tmp } from './helpers.ts';
import { cliEnv, runCli } from '../cli.ts';

/**
 * The cost told before Start, against a Sandbox with the service's limits over HTTP: learned from
 * the team's own usage (credits / uses), it matches what the Sandbox then charges; a key that may
 * not read the usage says "cost unknown"; a budget holds a batch at the right job until raised.
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
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until<T>(what: () => T | Promise<T>, ok: (v: T) => boolean): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = await what();
    if (ok(v)) return v;
    await sleep(25);
  }
  throw new Error('timed out');
}
const charges = async (tool: string) =>
  ((await control(sb.url, 'stats')).charges[tool] ?? { uses: 0, credits: 0 }) as { uses: number; credits: number };
const usageRequests = async () =>
  (await control(sb.url, 'stats')).requests['POST /v1/analytics/team-credit-usage'] ?? 0;

/** Uses of a tool by a teammate (another key of the team), so the team's last 7 days name it. */
async function teammateUses(toolId: string, body: Record<string, unknown>, n: number) {
  const path = resolvePaths(getTool(toolId), DEFAULT_SLUGS, {}).create;
  for (let i = 0; i < n; i++) {
    const res = await fetch(sb.url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-magnific-api-key': 'sandbox-admin' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
  }
}

let owner: Core;
let imageUrl: string;

describe('the estimate before Start', () => {
  beforeAll(async () => {
    const up = await fetch(`${sb.url}/__sandbox/uploads`, {
      method: 'POST',
      headers: { 'content-type': 'image/png' },
      body: new Uint8Array(await (await import('../sandbox/helpers.ts')).testPng()),
    });
    imageUrl = (await up.json()).url;
    await teammateUses('upscaler-precision', { image: imageUrl }, 2);
    await teammateUses('image-to-prompt', { image: imageUrl }, 2);
    owner = await coreAs('sandbox-owner', 'owner');
  });

  it("matches the credits the Sandbox charges, for the upscaler at the history's scale and for image-to-prompt", async () => {
    const sentToday: Record<string, number> = {};
    for (const [tool, names, params] of [
      ['upscaler-precision', ['a.png', 'b.png', 'c.png'], {}],
      ['image-to-prompt', ['d.png', 'e.png'], {}],
    ] as const) {
      const shoot = join(dir, `shoot-${tool}-${names[0]}`);
      await makeImages(shoot, [...names]);
      const check = await call(owner, 'batches.check', { tool, inputs: [shoot] });
      const estimate = await call(owner, 'batches.estimate', { tool, params, creates: check.ready });
      const each = creditsOf(tool, params);
      expect(estimate).toMatchObject({ creates: names.length, creditsEach: each, credits: each * names.length });
      expect(estimate.learnedFrom!.uses).toBeGreaterThanOrEqual(2);
      expect(estimate.basis).toMatch(
        new RegExp(
          `^about ${each} credits each, from your team's use of this tool in the last 7 days \\(\\d+ uses\\)${'scale_factor' in params ? ", at ×4: 4 times the area of ×2, taken as your team's usual" : ''}$`,
        ),
      );
      const cap = DEFAULT_DAILY_CAPS.enterprise[tool] ?? DEFAULT_DAILY_CAPS.enterprise['*'];
      expect(estimate.cap).toMatchObject({ limit: cap, left: cap - (sentToday[tool] ?? 0) });
      sentToday[tool] = (sentToday[tool] ?? 0) + names.length;

      const before = await charges(tool);
      const started = await call(owner, 'batches.start', {
        tool,
        inputs: [shoot],
        params,
        outDir: join(dir, `out-${tool}-${names[0]}`),
      });
      expect(started.batch!.estimate).toEqual({ credits: estimate.credits, basis: estimate.basis });
      await until(
        () => owner.engine.store.batch(started.batch!.id)!,
        (b) => b.finished,
      );
      const after = await charges(tool);
      expect([after.uses - before.uses, after.credits - before.credits]).toEqual([names.length, estimate.credits]);
    }
    // The three upscales just sent count against today's cap: 2,000 - 3 - 11.
    const words = costSentence(await call(owner, 'batches.estimate', { tool: 'upscaler-precision', creates: 11 }));
    expect(words).toMatch(
      /^Sends 11 paid jobs · about 220 credits \(20 each, from your team's use in the last 7 days\) · leaves 1,986 of today's 2,000 for Precision upscaler$/,
    );
  });

  it('a member key, which may not read the usage, says "cost unknown" plainly, and asks once', async () => {
    const member = await coreAs('sandbox-member', 'member');
    const asked = await usageRequests();
    const estimate = await call(member, 'batches.estimate', { tool: 'upscaler-precision', creates: 3 });
    expect(estimate).toMatchObject({
      credits: null,
      creditsEach: null,
      basis: "cost unknown: this key cannot read the team's usage",
    });
    expect(costSentence(estimate)).toBe(
      "Sends 3 paid jobs · cost unknown: this key cannot read the team's usage · leaves 1,997 of today's 2,000 for Precision upscaler",
    );
    await call(member, 'batches.estimate', { tool: 'image-to-prompt', creates: 1 });
    expect((await usageRequests()) - asked).toBe(1);
    // Without a known cost, a budget in credits cannot be kept: refused by name before anything is queued.
    const shoot = join(dir, 'member-shoot');
    await makeImages(shoot, ['m.png']);
    const refused = await call(member, 'batches.start', {
      tool: 'upscaler-precision',
      inputs: [shoot],
      outDir: join(dir, 'member-out'),
      budget: { credits: 100 },
    }).catch((e: DeskError) => e);
    expect(refused).toBeInstanceOf(DeskError);
    expect((refused as DeskError).message).toBe(
      "a budget in credits needs the batch's cost: cost unknown: this key cannot read the team's usage; set a budget in jobs instead",
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
      budget: { credits: 50 },
    });
    const id = started.batch!.id;
    expect(started.batch!.budget).toEqual({ credits: 50, jobs: null });
    const held = await until(
      () => owner.engine.store.batch(id)!,
      (b) => b.heldBy !== null && b.counts.done === 2,
    );
    expect(held.heldBy).toBe(
      "Paused: the next job would go past this batch's budget of 50 credits (40 spent so far by the estimate).",
    );
    expect(held.counts.queued).toBe(3);
    await sleep(300);
    expect((await charges('upscaler-precision')).uses - before.uses).toBe(2);
    // The Queue's batch list carries the hold.
    const listed = (await call(owner, 'batches.list', { limit: 5 })).find((b) => b.id === id)!;
    expect(listed.heldBy).toBe(held.heldBy);

    // Raised to three jobs' worth: one more goes, then it is held again at 60 spent.
    const raised = await call(owner, 'batches.setBudget', { id, budget: { credits: 60 } });
    expect([raised.budget, raised.heldBy]).toEqual([{ credits: 60, jobs: null }, null]);
    const again = await until(
      () => owner.engine.store.batch(id)!,
      (b) => b.heldBy !== null && b.counts.done === 3,
    );
    expect(again.heldBy).toContain('budget of 60 credits (60 spent so far');

    // Without a budget it finishes.
    await call(owner, 'batches.setBudget', { id, budget: null });
    const done = await until(
      () => owner.engine.store.batch(id)!,
      (b) => b.finished,
    );
    expect([done.counts.done, done.budget, done.heldBy]).toEqual([5, null, null]);
    expect((await charges('upscaler-precision')).credits - before.credits).toBe(100);
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
      (b) => b.heldBy !== null && b.counts.done === 1,
    );
    expect(held.heldBy).toBe("Paused: this batch's budget of 1 job is used.");
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
    expect(checked.out).toBe(
      `2 ready\nSends 2 paid jobs · about 40 credits (20 each, from your team's use in the last 7 days) · leaves 1,998 of today's 2,000 for Precision upscaler\nresults go to ${out}\n`,
    );
    const json = await runCli(['run', 'upscaler-precision', shoot, '--check', '--json', '--out', out], { env });
    expect(JSON.parse(json.out).estimate).toMatchObject({ creates: 2, credits: 40, creditsEach: 20 });
    const member = await runCli(['run', 'upscaler-precision', shoot, '--check', '--out', out], {
      env: cliEnv(join(dir, 'cli-member'), sb.url, 'sandbox-member'),
    });
    expect(member.out).toContain("Sends 2 paid jobs · cost unknown: this key cannot read the team's usage · leaves");

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
    expect(paused.err).toContain(
      `Paused: this batch's budget of 1 job is used. Change it with \`mediadesk jobs budget ${batch}\`.`,
    );
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
  it("scales the team's learned price by the square of the scale factor, and matches the charge at ×4", async () => {
    const shoot = join(dir, 'shoot-x4');
    await makeImages(shoot, ['f.png', 'g.png']);
    const params = { scale_factor: 4 };
    const estimate = await call(owner, 'batches.estimate', { tool: 'upscaler-precision', params, creates: 2 });
    const each = creditsOf('upscaler-precision', params);
    expect(estimate).toMatchObject({ creditsEach: each, credits: 2 * each });
    expect(estimate.basis).toMatch(/, at ×4: 4 times the area of ×2, taken as your team's usual$/);
    expect(costSentence(estimate)).toMatch(
      /^Sends 2 paid jobs · about 160 credits \(80 each at ×4 \(4 times the area of ×2\), from/,
    );

    const before = await charges('upscaler-precision');
    const started = await call(owner, 'batches.start', {
      tool: 'upscaler-precision',
      inputs: [shoot],
      params,
      outDir: join(dir, 'out-x4'),
    });
    await until(
      () => owner.engine.store.batch(started.batch!.id)!,
      (b) => b.finished,
    );
    const after = await charges('upscaler-precision');
    expect([after.uses - before.uses, after.credits - before.credits]).toEqual([2, estimate.credits]);
  });
});

describe('a workflow app before Run', () => {
  it("says its own price times the runs, and what they leave of the app's daily cap", async () => {
    const teamOwner = await coreAs('sandbox-owner', 'app-owner');
    const { apps } = await call(teamOwner, 'apps.list', {});
    const app = apps.find((a) => a.cost !== null)!;
    const estimate = await call(teamOwner, 'apps.estimate', { id: app.id, runs: 3 });
    expect(estimate).toMatchObject({ creates: 3, credits: 3 * app.cost!, creditsEach: app.cost, learnedFrom: null });
    expect(estimate.cap).toMatchObject({ limit: DEFAULT_DAILY_CAPS.enterprise['*'], used: 0 });
    await call(teamOwner, 'limits.setCap', { tool: `app:${app.id}`, cap: 2 });
    expect(costSentence(await call(teamOwner, 'apps.estimate', { id: app.id, runs: 3 }), 'run')).toBe(
      `Sends 3 paid runs · ${3 * app.cost!} credits (the app's price: ${app.cost} credits a run) · only 2 of today's 2 for ${app.name} are left: the rest wait until ${formatTime(0, { utc: true })} UTC`,
    );
    const unknown = await call(teamOwner, 'apps.estimate', { id: 'no-such-app', runs: 1 }).catch((e: DeskError) => e);
    expect(unknown).toBeInstanceOf(DeskError);
  });
});
