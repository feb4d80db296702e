import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type Core } from '../../electron/core/index.ts';
import { openLimiter, waitMessage, type GrantRequest } from '../../electron/core/limits/limiter.ts';
import { MemorySecretStore } from '../../electron/core/secrets.ts';
import { TeamServer } from '../../electron/core/team-server/connection.ts';
import { TeamPacing } from '../../electron/core/team-server/pacing.ts';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import type { TeamSpend } from '../../shared/contract/team-server.ts';
import { costSentence } from '../../shared/cost-words.ts';
import { cliEnv, interruptOnceHeld, runCli, startCli } from '../cli.ts';
import { callCore, cleanup, control, makeImages, tmp } from '../engine/helpers.ts';
import { pgMissing, startPg, type TestPg } from '../pg.ts';

/**
 * Budgets per project on one team server (a real PostgreSQL): CLI processes with data folders of
 * their own stop together at a project's budget, and the estimate and the report count what the
 * whole studio spent.
 */
const missing = pgMissing();
if (missing) console.log(`team server tests skipped: ${missing}`);

const TOOL = 'upscaler-precision';
const CREATE = 'POST /v1/ai/image-upscaler-precision-v2';

let pg: TestPg;
let sb: RunningSandbox;
let dir: string;
const cores: Core[] = [];

beforeAll(async () => {
  if (missing) return;
  pg = await startPg();
  sb = await startSandbox({ port: 0, taskDurationMs: 200 });
  dir = tmp('team-project');
});
afterAll(async () => {
  if (missing) return;
  for (const c of cores) await c.close();
  await sb?.close();
  await pg?.close();
  cleanup(dir);
});

const creates = async () => ((await control(sb.url, 'stats')).requests[CREATE] ?? 0) as number;

async function machine(name: string, db: string, images: number) {
  const home = join(dir, name, 'home');
  const shoot = join(dir, name, 'shoot');
  await makeImages(
    shoot,
    Array.from({ length: images }, (_, i) => `${name}-${i}.png`),
  );
  return {
    home,
    shoot,
    out: join(dir, name, 'out'),
    env: { ...cliEnv(home, sb.url), MEDIADESK_POLL_MIN_MS: '100', MEDIADESK_TEAM_DB: db },
  };
}
type Machine = Awaited<ReturnType<typeof machine>>;

const runArgs = (m: Machine, extra: string[]) => [
  'run',
  TOOL,
  m.shoot,
  '--out',
  m.out,
  '--param',
  'scale_factor=2',
  ...extra,
];

async function coreOn(db: string, name: string): Promise<Core> {
  const core = await createCore({
    home: join(dir, name),
    host: 'cli',
    env: { MEDIADESK_API_URL: sb.url, MEDIADESK_API_KEY: 'sandbox-owner', MEDIADESK_TEAM_DB: db },
    secrets: new MemorySecretStore(),
    teamSecrets: new MemorySecretStore(),
    startSandbox: async () => sb,
  });
  cores.push(core);
  return core;
}

describe.skipIf(missing)('budgets per project on the team server', { timeout: 240_000 }, () => {
  it('two processes with two data folders stop together at the project budget; other work goes on', async () => {
    await control(sb.url, 'reset', { tasks: true });
    const db = await pg.createDb('project');
    const [a, b] = await Promise.all([machine('pa', db, 3), machine('pb', db, 3)]);
    // 5 credits a create (the price table's precision upscaler): 17 credits buy three for Acme.
    const set = await runCli(['team', 'budget', '--project', 'Acme', '17'], { env: a.env });
    expect(set.code, set.err).toBe(0);
    expect(set.out).toContain('Project "Acme": 17 credits a day; 0 spent today by the team');
    // Three of the six are held at the budget (till tomorrow), where each run is stopped.
    const runs = await interruptOnceHeld(
      [a, b].map((m) => startCli(runArgs(m, ['--project', 'Acme']), { env: m.env })),
      /project "Acme" has spent its team budget of 17 credits a day/,
      async () => (await creates()) >= 3,
    );
    // Load on a shared machine may slow a process's start: the count says which stopped where.
    expect(await creates(), runs.map((r) => `${r.code}: ${r.err}`).join('\n---\n')).toBe(3);
    expect(
      runs.some((r) => /project "Acme" has spent its team budget of 17 credits a day/.test(r.err)),
      runs.map((r) => r.err).join('\n---\n'),
    ).toBe(true);
    // The same tool in another project is not held by Acme's budget, on the machine whose Acme jobs wait.
    const beta = { ...a, shoot: join(dir, 'pa', 'beta'), out: join(dir, 'pa', 'beta-out') };
    await makeImages(beta.shoot, ['beta-0.png', 'beta-1.png']);
    const other = await runCli(runArgs(beta, ['--project', 'Beta', '--timeout', '30s']), { env: a.env });
    expect(other.code, other.err).toBe(0);
    expect(await creates()).toBe(5);

    const spend = await runCli(['team', 'spend', '--json'], { env: b.env });
    expect(spend.code, spend.err).toBe(0);
    const t = JSON.parse(spend.out) as TeamSpend;
    expect(t.byProject.find((p) => p.name === 'Acme')).toMatchObject({ creates: 3, credits: 15 });
    // Per machine (host and data folder): a ran Beta, b spent only if it took an Acme create first.
    expect(t.byMachine.some((m) => m.name.endsWith(` ${a.home}`))).toBe(true);
    for (const m of t.byMachine)
      expect(
        [a.home, b.home].some((h) => m.name.endsWith(` ${h}`)),
        m.name,
      ).toBe(true);
    expect(t.creates, spend.out).toBe(await creates());
  });

  it("the estimate over the contract counts another machine's spend, and the report the team's", async () => {
    await control(sb.url, 'reset', { tasks: true });
    const db = await pg.createDb('estimate');
    const a = await machine('ea', db, 2);
    expect((await runCli(['team', 'budget', '100'], { env: a.env })).code).toBe(0);
    expect((await runCli(['team', 'budget', '--project', 'Acme', '12'], { env: a.env })).code).toBe(0);
    const run = await runCli(runArgs(a, ['--project', 'Acme']), { env: a.env });
    expect(run.code, run.err).toBe(0);
    expect(await creates()).toBe(2);

    // Another machine (its own data folder, nothing spent by it) asks before Start.
    const core = await coreOn(db, 'eb');
    const e = await callCore(core, 'batches.estimate', {
      tool: TOOL,
      params: { scale_factor: 2 },
      creates: 3,
      project: 'Acme',
    });
    expect(e.team).toEqual({
      reachable: true,
      why: null,
      spentToday: 10,
      budget: 100,
      left: 90,
      project: { name: 'Acme', budget: 12, spentToday: 10, left: 2 },
    });
    expect(costSentence(e)).toContain(
      `the studio has spent 10 credits today; 90 of the team's 100 a day left; 2 of project "Acme"'s 12 a day left; this batch would go past project "Acme"'s budget: only 0 jobs fit today`,
    );

    // The batch report of the first machine names the team's spend per machine and per project.
    const list = JSON.parse((await runCli(['jobs', 'list', '--json', '--all'], { env: a.env })).out) as {
      jobs: { batchId: string }[];
    };
    const report = await runCli(['report', list.jobs[0].batchId], { env: a.env });
    expect(report.code, report.err).toBe(0);
    expect(report.out).toMatch(
      /Team spend \(team server, every machine\) on .*: 10 credits in 2 creates; by machine: /,
    );
    expect(report.out).toContain('by project: Acme 10 credits (2 creates)');

    // The server gone: the estimate and the report say so and count this machine alone.
    await pg.stop();
    try {
      const gone = await callCore(core, 'batches.estimate', { tool: TOOL, params: { scale_factor: 2 }, creates: 1 });
      expect(costSentence(gone)).toMatch(
        /the team server cannot be reached \(.+\): the studio's spend today is not counted here/,
      );
      const alone = await runCli(['report', list.jobs[0].batchId], { env: a.env });
      expect(alone.out).toMatch(
        /Team spend \(team server\) on .* could not be read \(.+\): this report counts this machine's batch alone/,
      );
    } finally {
      await pg.start();
    }
  });

  it('with the server gone, a machine takes 1/N of what was left of the project budget, and names the project', async () => {
    const db = await pg.createDb('fallback');
    const server = new TeamServer({ target: async () => ({ connect: db, shown: db, from: 'env' }) });
    const { limiter, close } = openLimiter(join(dir, 'fallback'));
    const pacing = new TeamPacing({ server, local: limiter, priceOf: () => 5, retryMs: 60_000 });
    try {
      const req: GrantRequest = { scope: 's', kind: 'create', tool: TOOL, plan: 'business', project: 'Acme' };
      await server.with(async (c) => {
        await c.query(
          `INSERT INTO mediadesk.project_budgets (project, credits, set_at, set_by) VALUES ('Acme', 25, 0, 'test')`,
        );
        // Another machine seen lately: two share what is left when the server goes.
        await c.query(
          `INSERT INTO mediadesk.machines (id, name, first_seen, last_seen) VALUES ('other', 'b', $1, $1)`,
          [Date.now()],
        );
      });
      expect(await pacing.acquire(req)).toMatchObject({ go: true });
      await pg.stop();
      // 20 left, half of it this machine's: two creates of 5, then the project holds.
      expect(await pacing.acquire(req)).toMatchObject({ go: true });
      expect(await pacing.acquire(req)).toMatchObject({ go: true });
      const held = await pacing.acquire(req);
      expect(held).toMatchObject({ go: false, reason: 'project_budget', project: 'Acme', limit: 25, left: 0 });
      if (held.go) throw new Error('held');
      expect(waitMessage(held)).toContain('the project "Acme" has spent its team budget of 25 credits a day');
      expect(pacing.note).toMatch(/team server cannot be reached/);
      // Without a project the team has no budget here: it goes on within its share of the windows.
      expect(await pacing.acquire({ ...req, project: null })).toMatchObject({ go: true });
    } finally {
      await pg.start();
      await server.close();
      close();
    }
  });
});
