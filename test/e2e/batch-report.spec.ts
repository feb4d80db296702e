import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { newHome, startHost, type HostHandle } from './host.ts';
import {
  desk,
  makeImages,
  setFaults,
  startSandboxProcess,
  watchErrors,
  type SandboxProcess,
} from './studio-helpers.ts';
import { hugePng } from '../huge-png.ts';
import type { JobRecord } from '../../shared/contract/index.ts';

let host: HostHandle;
let sandbox: SandboxProcess;
test.afterEach(async () => {
  await host?.stop();
  await sandbox?.stop();
});

test("a finished batch's Report says what was sent, made results and charged but failed, and Export CSV downloads it", async ({
  page,
}) => {
  const errors = watchErrors(page);
  sandbox = await startSandboxProcess(200, ['--limits', 'service', '--seed', '7']);
  host = await startHost(newHome(), sandbox.env);
  const dir = mkdtempSync(join(tmpdir(), 'md-report-'));
  await makeImages(dir, 6);
  hugePng(join(dir, 'huge.png'));
  await setFaults(sandbox.url, { failureRate: 0.5 });
  const started = await desk<{ batch: { id: string } }>(host, 'batches.start', {
    tool: 'upscaler-precision',
    inputs: [dir],
    params: {},
  });
  await page.goto(`${host.url}#queue`);
  await expect(page.getByTestId('job-row')).toHaveCount(7);
  await expect(
    page.locator('[data-testid=job-row][data-state=done], [data-testid=job-row][data-state=failed]'),
  ).toHaveCount(7, { timeout: 30_000 });
  const { jobs } = await desk<{ jobs: JobRecord[] }>(host, 'jobs.list', { batchId: started.batch.id });
  const done = jobs.filter((j) => j.state === 'done').length;
  const failedAfterCreate = jobs.filter((j) => j.state === 'failed' && j.taskId).length;
  expect(done).toBeGreaterThan(0);
  expect(failedAfterCreate).toBeGreaterThan(0);

  await page.getByTestId('batch-report-toggle').click();
  await expect(page.getByTestId('batch-report-toggle')).toHaveAttribute('aria-expanded', 'true');
  const credits = 6 * 20;
  await expect(page.getByTestId('batch-report-summary')).toHaveText(
    `Sent 6 · ${done} made results · ${failedAfterCreate} charged but failed · 1 refused, not charged · no estimate · charged about ${credits} credits`,
  );
  const day = new Date().toLocaleDateString('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });
  await expect(page.getByTestId('batch-report-credits')).toContainText(
    `Charged about ${credits} credits, by your team's usage of this tool on ${day}.`,
  );

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByTestId('batch-report-export').click(),
  ]);
  expect(download.suggestedFilename()).toMatch(/^Precision upscaler report \d{4}-\d{2}-\d{2} \d{2}-\d{2}-\d{2}\.csv$/);
  await expect(page.getByTestId('batch-report-status')).toHaveText(
    `Downloaded ${download.suggestedFilename()} (7 rows): find it in your browser's downloads.`,
  );
  const rows = readFileSync(await download.path(), 'utf8')
    .trimEnd()
    .split('\r\n');
  expect(rows[0]).toBe('input,state,task_id,charged,estimate_credits,actual_credits,outputs,error');
  expect(rows).toHaveLength(8);
  expect(rows.filter((r) => /,failed,[0-9a-f-]{36},yes,,20,,/.test(r))).toHaveLength(failedAfterCreate);
  expect(rows.filter((r) => r.startsWith(`${join(dir, 'huge.png')},failed,,no,,0,,`))).toHaveLength(1);
  expect(errors).toEqual([]);
});
