// A batch's report as `mediadesk report` gives it, against the Sandbox over HTTP with its limits on
// (so its creates are charged by its price table): some tasks FAIL after create, one input is
// refused at create; only the former count as charged but failed.
import Database from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../cli.ts';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { cleanup, control, makeImages, tmp } from './helpers.ts';
import { hugePng } from '../huge-png.ts';
import { creditsOf } from '../../shared/service-limits.ts';
import type { BatchReport } from '../../shared/contract/report.ts';
import { formatDate } from '../../shared/dates.ts';

let sb: RunningSandbox;
let dir: string;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, taskDurationMs: 50, limits: 'service', seed: 7 });
  dir = tmp('report');
});
afterAll(async () => {
  await sb?.close();
  if (dir) cleanup(dir);
});

/** sandbox-business: an admin (may read the team's usage) on a team with no usage history of its own. */
const cli = (args: string[], home: string, key = 'sandbox-business') =>
  runCli(args, { env: cliEnv(join(dir, home), sb.url, key) });

async function runBatch(home: string, key?: string): Promise<string> {
  const input = join(dir, `${home}-in`);
  await makeImages(input, ['a.png', 'b.png', 'c.png', 'd.png', 'e.png', 'f.png', 'g.png', 'h.png']);
  hugePng(join(input, 'huge.png'));
  const r = await cli(['run', 'upscaler-precision', input, '--out', join(dir, `${home}-out`)], home, key);
  expect(r.code, r.err).toBe(1);
  return /batch ([0-9a-f]{8}):/.exec(r.out)![1];
}

describe('mediadesk report', () => {
  it('counts the tasks that failed after create as charged, not the input refused at create, and reads the charges from usage', async () => {
    await control(sb.url, 'faults', { failureRate: 0.5 });
    const batch = await runBatch('admin');
    await control(sb.url, 'faults', { failureRate: 0 });

    const listed = JSON.parse((await cli(['jobs', 'list', '--batch', batch, '--json'], 'admin')).out).jobs as {
      state: string;
      taskId: string | null;
      input: string;
    }[];
    const failedAfterCreate = listed.filter((j) => j.state === 'failed' && j.taskId).length;
    const done = listed.filter((j) => j.state === 'done').length;
    // The seeded failure rate leaves some of each.
    expect(failedAfterCreate).toBeGreaterThan(0);
    expect(done).toBeGreaterThan(0);
    expect(failedAfterCreate + done).toBe(8);

    const json = await cli(['report', batch, '--json'], 'admin');
    expect(json.code, json.err).toBe(0);
    const r = JSON.parse(json.out) as BatchReport;
    expect(r.counts).toMatchObject({
      total: 9,
      sent: 8,
      results: done,
      chargedFailed: failedAfterCreate,
      notCharged: 1,
    });
    const stats = await control(sb.url, 'stats');
    const charged = stats.charges['upscaler-precision'];
    expect(charged).toEqual({ uses: 8, credits: 8 * creditsOf('upscaler-precision', {}) });
    expect(r.credits.actual).toBe(charged.credits);
    expect(r.credits.estimate).toBeNull();
    const huge = r.jobs.find((j) => j.input?.endsWith('huge.png'))!;
    expect(huge).toMatchObject({ state: 'failed', taskId: null, charged: 'no', actualCredits: 0 });
    expect(huge.error).toContain('The server refused the task');

    const text = await cli(['report', batch.slice(0, 6), '--csv', join(dir, 'report.csv')], 'admin');
    expect(text.code, text.err).toBe(0);
    const day = formatDate(new Date().toISOString().slice(0, 10));
    expect(text.out).toContain(
      `Sent 8 · ${done} made results · ${failedAfterCreate} charged but failed · 1 refused, not charged · no estimate · charged about ${charged.credits} credits\n`,
    );
    expect(text.out).toContain(
      `Charged about ${charged.credits} credits, by your team's usage of this tool on ${day}.\n`,
    );
    expect(text.err).toBe(`wrote ${join(dir, 'report.csv')}: 9 rows, one per job\n`);
    const rows = readFileSync(join(dir, 'report.csv'), 'utf8').trimEnd().split('\r\n');
    expect(rows[0]).toBe('input,state,task_id,charged,estimate_credits,actual_credits,outputs,error');
    expect(rows).toHaveLength(10);
    const price = creditsOf('upscaler-precision', {});
    for (const j of r.jobs.filter((x) => x.state === 'done'))
      expect(rows).toContain(`${j.input},done,${j.taskId},yes,,${price},${j.outputs[0]},`);
    for (const j of r.jobs.filter((x) => x.state === 'failed' && x.taskId))
      expect(rows).toContain(
        `${j.input},failed,${j.taskId},yes,,${price},,The task failed on the server (nothing to download). Retry submits it again (a new task).`,
      );
    expect(rows.find((l) => l.startsWith(`${huge.input},failed,,no,,0,,`))).toBeDefined();

    // Read again: the cached usage already holds the batch, so no request of the day's 100 is spent.
    const before = (await control(sb.url, 'stats')).requests['POST /v1/analytics/team-credit-usage'];
    expect((await cli(['report', batch], 'admin')).code).toBe(0);
    expect((await control(sb.url, 'stats')).requests['POST /v1/analytics/team-credit-usage']).toBe(before);

    // The estimate told before Start, as batches.start records it: said beside the charges, shared out per job.
    const db = new Database(join(dir, 'admin', 'mediadesk.db'));
    db.prepare("UPDATE batches SET estimate_credits = 180, estimate_basis = ? WHERE id LIKE ? || '%'").run(
      "by your team's usage of this tool over the last 7 days",
      batch,
    );
    db.close();
    const withEstimate = await cli(['report', batch], 'admin');
    expect(withEstimate.out).toContain(` · estimate 180 credits · charged about ${charged.credits} credits\n`);
    expect(withEstimate.out).toContain(
      "Estimated 180 credits before Start, by your team's usage of this tool over the last 7 days.\n",
    );
    const perJob = JSON.parse((await cli(['report', batch, '--json'], 'admin')).out) as BatchReport;
    expect(new Set(perJob.jobs.map((j) => j.estimateCredits))).toEqual(new Set([20]));
  });

  it("says the charges are unknown when the key cannot read the team's usage", async () => {
    const batch = await runBatch('member', 'sandbox-member');
    const r = await cli(['report', batch], 'member', 'sandbox-member');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(' · no estimate · charges unknown\n');
    expect(r.out).toContain("Charges unknown: this key cannot read the team's usage.\n");
  });

  it('refuses a batch it does not know, by name', async () => {
    const r = await cli(['report', 'ffffffff'], 'admin');
    expect(r.code).toBe(2);
    expect(r.err).toContain('no batch ffffffff');
    expect((await cli(['report'], 'admin')).err).toContain('report needs a batch id');
  });
});
