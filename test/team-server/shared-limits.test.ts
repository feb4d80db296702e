import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { openLimiter } from '../../electron/core/limits/limiter.ts';
import { PLAN_TIERS } from '../../shared/service-limits.ts';
import { cliEnv, interruptOnceHeld, runCli, startCli } from '../cli.ts';
import { cleanup, control, makeImages, tmp } from '../engine/helpers.ts';
import { until as waitUntil } from '../wait.ts';
import { pgMissing, startPg, type TestPg } from '../pg.ts';
import { pgRelay } from './relay.ts';

/**
 * Three CLI processes, three data folders, one team server (a real PostgreSQL) and one Sandbox
 * whose limits are on: together they keep to the service's windows and caps, and to the team budget.
 */
const missing = pgMissing();
if (missing) console.log(`team server tests skipped: ${missing}`);

const TOOL = 'upscaler-precision';
const until = (what: () => boolean | Promise<boolean>) => waitUntil(what, { interval: 50 });
const CREATE = 'POST /v1/ai/image-upscaler-precision-v2';
/** Small windows, so three processes fill them in seconds: the Sandbox refuses past them, the app paces to them. */
const RATES = { burstPerSec: 4, burstWindowSec: 3, averagePerSec: 3, averageWindowSec: 10 };
const CAP = 10;
const caps = { '*': 1000, [TOOL]: CAP };

let pg: TestPg;
let sb: RunningSandbox;
let dir: string;

beforeAll(async () => {
  if (missing) return;
  pg = await startPg();
  sb = await startSandbox({ port: 0, taskDurationMs: 300 });
  dir = tmp('team');
});
afterAll(async () => {
  if (missing) return;
  await sb?.close();
  await pg?.close();
  cleanup(dir);
});

/** Fresh counts and the small windows on the Sandbox; a database of its own on the team server. */
async function fresh(name: string): Promise<string> {
  await control(sb.url, 'reset', { tasks: true });
  await control(sb.url, 'limits', { limits: { ...RATES, caps: { business: caps, enterprise: caps } } });
  return pg.createDb(name);
}

const envOf = (home: string, teamDb: string | null): NodeJS.ProcessEnv => ({
  ...cliEnv(home, sb.url),
  MEDIADESK_PACING_RATES: JSON.stringify(RATES),
  MEDIADESK_POLL_MIN_MS: '200',
  ...(teamDb ? { MEDIADESK_TEAM_DB: teamDb } : { MEDIADESK_TEAM_DB: '' }),
});

/** A data folder with the cap the Sandbox keeps (the plan's own cap, as a studio would set it). */
async function machine(name: string, teamDb: string | null, images: number) {
  const home = join(dir, name, 'home');
  const shoot = join(dir, name, 'shoot');
  await makeImages(
    shoot,
    Array.from({ length: images }, (_, i) => `${name}-${i}.png`),
  );
  // Set through the limiter's own store, as `mediadesk limits set` does (test/engine covers that command).
  const { limiter, close } = openLimiter(home);
  try {
    for (const plan of PLAN_TIERS) limiter.setCap(plan, TOOL, CAP);
  } finally {
    close();
  }
  return { home, shoot, env: envOf(home, teamDb), out: join(dir, name, 'out') };
}

const runArgs = (m: { shoot: string; out: string }, extra: string[] = []) => [
  'run',
  TOOL,
  m.shoot,
  '--out',
  m.out,
  '--param',
  'scale_factor=2',
  ...extra,
];

/** The tool's creates today as the team server counts them (its daily uses), every machine's. */
async function teamUses(db: string): Promise<number> {
  const { default: pgLib } = await import('pg');
  const c = new pgLib.Client(db);
  await c.connect();
  try {
    const used = await c.query('SELECT sum(uses)::int AS n FROM mediadesk.daily_uses WHERE tool = $1', [TOOL]);
    return used.rows[0].n;
  } finally {
    await c.end();
  }
}

async function stats() {
  const s = await control(sb.url, 'stats');
  return { creates: (s.requests[CREATE] ?? 0) as number, limited: s.limited as Record<string, number> };
}

// Three processes and their batches on a shared machine: minutes, not seconds, under load.
describe.skipIf(missing)('a studio on one team server', { timeout: 240_000 }, () => {
  it('three processes at once draw no 429 and stay within the daily cap together', async () => {
    const db = await fresh('limits');
    const ms = await Promise.all([0, 1, 2].map((i) => machine(`limits${i}`, db, 5)));
    // 15 images for a cap of 10: the last five are held at the cap (till tomorrow), where each run is stopped.
    const runs = await interruptOnceHeld(
      ms.map((m) => startCli(runArgs(m), { env: m.env })),
      /daily limit of 10 jobs/,
      async () => (await stats()).creates >= CAP,
    );
    const s = await stats();
    expect(s.limited).toEqual({ burst: 0, average: 0, daily_cap: 0 });
    expect(s.creates).toBe(CAP);
    const held = runs.filter((r) => /daily limit of 10 jobs/.test(r.err));
    expect(held.length, runs.map((r) => r.err).join('\n---\n')).toBeGreaterThan(0);
  });

  it('without the team server the same three draw 429s (what the shared windows prevent)', async () => {
    await fresh('alone');
    const ms = await Promise.all([0, 1, 2].map((i) => machine(`alone${i}`, null, 5)));
    const limited = async () => {
      const { burst, average, daily_cap } = (await stats()).limited;
      return burst + average + daily_cap > 0;
    };
    // The first 429 is what this test waits for: the runs are stopped then, not at a timeout.
    const runs = ms.map((m) => startCli(runArgs(m), { env: m.env }));
    await until(async () => (await limited()) || runs.every((r) => r.child.exitCode !== null));
    for (const r of runs) if (r.child.exitCode === null) r.child.kill('SIGINT');
    await Promise.all(runs.map((r) => r.exit));
    expect(await limited()).toBe(true);
  });

  it('a team budget holds across the three', async () => {
    const db = await fresh('budget');
    const ms = await Promise.all([0, 1, 2].map((i) => machine(`budget${i}`, db, 3)));
    // 5 credits a create (the price table's precision upscaler): 22 credits buy four.
    const set = await runCli(['team', 'budget', '22'], { env: ms[0].env });
    expect(set.out).toContain('Team budget: 22 credits a day');
    const runs = await interruptOnceHeld(
      ms.map((m) => startCli(runArgs(m), { env: m.env })),
      /team's budget of 22 credits a day is spent/,
      async () => (await stats()).creates >= 4,
    );
    expect((await stats()).creates).toBe(4);
    expect(
      runs.some((r) => /team's budget of 22 credits a day is spent/.test(r.err)),
      runs[0].err,
    ).toBe(true);
    const status = await runCli(['team', 'status'], { env: ms[1].env });
    expect(status.out).toContain('20 spent today by the team');
  });

  it('one killed mid-batch: nothing is sent twice, and its rerun finishes the rest', async () => {
    const db = await fresh('kill');
    const ms = await Promise.all([0, 1, 2].map((i) => machine(`kill${i}`, db, 3)));
    const victim = startCli(runArgs(ms[0]), { env: ms[0].env });
    const others = ms.slice(1).map((m) => runCli(runArgs(m), { env: m.env }));
    await until(() => /progress [1-9]/.test(victim.err) || victim.child.exitCode !== null);
    victim.child.kill('SIGKILL');
    await victim.exit;
    for (const r of await Promise.all(others)) expect(r.code, r.err).toBe(0);
    const again = await runCli(runArgs(ms[0]), { env: ms[0].env });
    const list = await runCli(['jobs', 'list', '--json', '--all'], { env: ms[0].env });
    const { jobs } = JSON.parse(list.out) as { jobs: { state: string }[] };
    const unsure = jobs.filter((j) => j.state === 'needs_attention').length;
    // A create in flight at the kill is put to the person, never sent again: every other image once.
    expect(again.code === 0 || unsure > 0, again.err).toBe(true);
    const s = await stats();
    expect(s.creates).toBe(9 - unsure);
    expect(s.limited).toEqual({ burst: 0, average: 0, daily_cap: 0 });
  });

  it('over a slow line to the server, each grant taken is a create sent: no job is picked twice', async () => {
    const db = await fresh('slow');
    // Every answer of the server 40 ms late: a tick still asking about a job when another begins.
    const relay = await pgRelay(pg.port, { delayMs: 40 });
    const m = await machine('slow0', relay.through(db), 8);
    const done = await runCli(runArgs(m, ['--concurrency', '4']), { env: m.env });
    expect(done.code, done.err).toBe(0);
    expect((await stats()).creates).toBe(8);
    await relay.close();
    expect(await teamUses(db)).toBe(8);
  });

  it('with the server stopped mid-batch, work goes on within the fallback share and says why; counts reconcile', async () => {
    const db = await fresh('down');
    const m = await machine('down0', db, 8);
    await control(sb.url, 'faults', { taskDurationMs: 1500 });
    const run = startCli(runArgs(m, ['--concurrency', '2']), { env: m.env });
    await until(async () => (await stats()).creates >= 2);
    await pg.stop();
    await until(() => /team server cannot be reached/.test(run.err) || run.child.exitCode !== null);
    expect(run.err).toMatch(/team server cannot be reached since .*within 1\/1 of the service's limits/);
    await pg.start();
    const done = await run.exit;
    expect(done.code, done.err).toBe(0);
    const s = await stats();
    expect(s.limited).toEqual({ burst: 0, average: 0, daily_cap: 0 });
    expect(s.creates).toBe(8);
    // The creates made alone were sent to the server when it came back.
    const status = await runCli(['team', 'status', '--json'], { env: m.env });
    expect(status.code, status.err).toBe(0);
    expect(await teamUses(db)).toBe(8);
  });
});
