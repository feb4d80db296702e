// A batch's report as `mediadesk report` gives it, against the Sandbox over HTTP with its limits on
// (so its creates are charged by its own prices): some tasks FAIL after create, one input is
// refused at create; only the former count as charged but failed, and still do after a Retry.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../cli.ts';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { cleanup, control, jobsIn, makeImages, tmp } from './helpers.ts';
import { hugePng } from '../huge-png.ts';
import type { BatchReport } from '../../shared/contract/report.ts';
import { formatDate } from '../../shared/dates.ts';
import { utcDay } from '../../shared/service-limits.ts';

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

/** The table's price of the precision upscaler at ×2 (shared/prices.ts), as the report says it. */
const EACH = 5;
const BASIS =
  "5 each by the service's price as a review reports it, read 2026-12-05: 5 for an image at ×2 from about 1.2 MP";

describe('mediadesk report', () => {
  it('counts the tasks that failed after create as charged, not the input refused at create, and reconciles with the usage by category', async () => {
    await control(sb.url, 'faults', { failureRate: 0.5 });
    const batch = await runBatch('admin');
    await control(sb.url, 'faults', { failureRate: 0 });

    const listed = jobsIn(join(dir, 'admin')).filter((j) => j.batchId.startsWith(batch));
    const failed = listed.filter((j) => j.state === 'failed' && j.taskId);
    const failedAfterCreate = failed.length;
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
    // Priced by the table, every job told before Start (the refused one too).
    expect(r.credits).toMatchObject({
      estimate: 9 * EACH,
      actual: 8 * EACH,
      actualBasis: `8 charged creates at ${BASIS}`,
    });
    // The service (the Sandbox with its own prices) reports one category, not the tool.
    const stats = await control(sb.url, 'stats');
    const charged = stats.charges['upscaler-precision'];
    expect(charged.uses).toBe(8);
    const today = new Date().toISOString().slice(0, 10);
    expect(r.credits.service).toEqual({
      days: [today],
      uses: 8,
      credits: charged.credits,
      categories: [{ name: 'AI Image Models', uses: 8, credits: charged.credits }],
      why: null,
    });
    const huge = r.jobs.find((j) => j.input?.endsWith('huge.png'))!;
    expect(huge).toMatchObject({ state: 'failed', taskId: null, charged: 'no', chargedCreates: 0, actualCredits: 0 });
    expect(huge.error).toContain('The server refused the task');

    const text = await cli(['report', batch.slice(0, 6), '--csv', join(dir, 'report.csv')], 'admin');
    expect(text.code, text.err).toBe(0);
    const day = formatDate(new Date().toISOString().slice(0, 10));
    expect(text.out).toContain(
      `Sent 8 · ${done} made results · ${failedAfterCreate} charged but failed · 1 refused, not charged · estimate 45 credits · charged about 40 credits\n`,
    );
    expect(text.out).toContain(`Charged about 40 credits: 8 charged creates at ${BASIS}.\n`);
    expect(text.out).toContain(
      `The service reports usage by category, not by tool: on ${day} your team used ${charged.credits} credits in 8 uses (AI Image Models ${charged.credits} credits in 8 uses); this batch's 8 charged creates are part of it.\n`,
    );
    expect(text.err).toBe(`wrote ${join(dir, 'report.csv')}: 9 rows, one per job\n`);
    const rows = readFileSync(join(dir, 'report.csv'), 'utf8').trimEnd().split('\r\n');
    expect(rows[0]).toBe('input,state,task_id,charged,charged_creates,estimate_credits,actual_credits,outputs,error');
    expect(rows).toHaveLength(10);
    for (const j of r.jobs.filter((x) => x.state === 'done'))
      expect(rows).toContain(`${j.input},done,${j.taskId},yes,1,${EACH},${EACH},${j.outputs[0]},`);
    for (const j of r.jobs.filter((x) => x.state === 'failed' && x.taskId))
      expect(rows).toContain(
        `${j.input},failed,${j.taskId},yes,1,${EACH},${EACH},,The task failed on the server (nothing to download). Retry submits it again (a new task).`,
      );
    expect(rows.find((l) => l.startsWith(`${huge.input},failed,,no,0,${EACH},0,,`))).toBeDefined();

    // Read again: the cached usage already holds the batch, so no request of the day's 100 is spent.
    const before = (await control(sb.url, 'stats')).requests['POST /v1/analytics/team-credit-usage'];
    expect((await cli(['report', batch], 'admin')).code).toBe(0);
    expect((await control(sb.url, 'stats')).requests['POST /v1/analytics/team-credit-usage']).toBe(before);

    // Retry failed: each failed task was charged, and its new task is charged again. The report
    // keeps counting the first attempts (issue #42: they vanished, "charged about 300" for 435).
    for (const j of failed) expect((await cli(['jobs', 'retry', j.id], 'admin')).code).toBe(0);
    const after = JSON.parse((await cli(['report', batch, '--json'], 'admin')).out) as BatchReport;
    const sent = 8 + failedAfterCreate;
    expect((await control(sb.url, 'stats')).charges['upscaler-precision'].uses).toBe(sent);
    expect(after.counts).toMatchObject({ sent, results: 8, chargedFailed: failedAfterCreate, notCharged: 1 });
    expect(after.credits).toMatchObject({ actual: sent * EACH, actualBasis: `${sent} charged creates at ${BASIS}` });
    expect(after.credits.service).toMatchObject({ uses: sent });
    for (const j of failed)
      expect(after.jobs.find((x) => x.id === j.id)).toMatchObject({
        state: 'done',
        charged: 'yes',
        chargedCreates: 2,
        actualCredits: 2 * EACH,
      });
    const again = await cli(['report', batch], 'admin');
    expect(again.out).toContain(` · ${failedAfterCreate} charged but failed · `);
    expect(again.out).toContain(`charged about ${sent * EACH} credits\n`);
  }, 240_000);

  it("says what the service reports is unknown when the key cannot read the team's usage", async () => {
    const batch = await runBatch('member', 'sandbox-member');
    const r = await cli(['report', batch], 'member', 'sandbox-member');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(' · estimate 45 credits · charged about 40 credits\n');
    const day = formatDate(`${utcDay(Date.now())}T00:00:00Z`, { utc: true });
    expect(r.out).toContain(
      `The service's usage on ${day} could not be read: this key cannot read the team's usage.\n`,
    );
  });

  it('refuses a batch it does not know, by name', async () => {
    const r = await cli(['report', 'ffffffff'], 'admin');
    expect(r.code).toBe(2);
    expect(r.err).toContain('no batch ffffffff');
    expect((await cli(['report'], 'admin')).err).toContain('report needs a batch id');
  });
});
