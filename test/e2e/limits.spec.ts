import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from './fixtures.ts';
import type { PricesList } from '../../shared/contract/prices.ts';
import { newHome, type HostHandle } from './host.ts';
import { desk, makeImages, watchErrors, type SandboxProcess } from './studio-helpers.ts';

let host: HostHandle;
let sandbox: SandboxProcess;

const sandboxStats = async (url: string) =>
  (await (await fetch(`${url}/__sandbox/stats`)).json()) as { limited: Record<string, number> };

test('a tool at its daily limit holds its jobs in the Queue, other work goes on, and raising the limit in Settings finishes the batch', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  // The service's rates; the account's own limit of 3 (the service publishes none for this tool) is reached by a batch of 6.
  sandbox = await sandboxAt(200, ['--limits', 'service']);
  host = await launch(newHome(), sandbox.env);
  await desk(host, 'limits.setCap', { tool: 'upscaler-precision', cap: 3 });
  const upscale = mkdtempSync(join(tmpdir(), 'md-limits-'));
  await makeImages(upscale, 6);
  await desk(host, 'batches.start', { tool: 'upscaler-precision', inputs: [upscale], params: {} });

  await page.goto(`${host.url}#queue`);
  const hold = page.getByTestId('queue-held-by');
  await expect(hold).toContainText(
    /^Held: the daily limit of 3 jobs for Precision upscaler is reached; 0 left today, resets at \d{1,2}:\d\d(\s[AP]M)? your time \(3 jobs wait\)\./,
    { timeout: 30_000 },
  );
  await expect(hold).toContainText('They go on by themselves when the limit resets, or once it is raised in Settings');
  const jobs = (state: string) => page.locator(`[data-testid=job-row][data-state=${state}]`);
  await expect(jobs('done')).toHaveCount(3);
  await expect(jobs('queued')).toHaveCount(3);
  for (const error of await jobs('queued').getByTestId('job-row-error').allTextContents())
    expect(error).toMatch(
      /^Waiting: the daily limit of 3 jobs for Precision upscaler is reached \(0 left today\); it resets at \d{1,2}:\d\d(\s[AP]M)? your time\.$/,
    );

  // Another tool's batch, started while the first is held, runs to its end.
  const describe = mkdtempSync(join(tmpdir(), 'md-limits-other-'));
  await makeImages(describe, 2);
  await desk(host, 'batches.start', { tool: 'image-to-prompt', inputs: [describe], params: {} });
  const otherRow = page.getByTestId('batch-row').filter({ hasText: 'Image to prompt' });
  await expect(otherRow.getByTestId('batch-count')).toHaveText('2/2', { timeout: 30_000 });
  await expect(otherRow.getByTestId('batch-summary')).toHaveText('finished');
  const heldRow = page.getByTestId('batch-row').filter({ hasText: 'Precision upscaler' });
  await expect(heldRow.getByTestId('batch-count')).toHaveText('3/6');
  await expect(hold).toContainText('(3 jobs wait)');

  // Settings, Daily limits: today's use beside the limit; raising it lets the held jobs go. A workflow
  // app's limit is named as the Workflow apps screen names the app.
  await desk(host, 'limits.setCap', { tool: 'app:jM4nX8sc', cap: 5 });
  await page.goto(`${host.url}#settings`);
  const limitsTable = page.getByTestId('limits-table');
  await expect(limitsTable.getByRole('row').filter({ hasText: 'Jingle maker' })).toHaveCount(1);
  await expect(page.getByLabel('Jobs a day for Jingle maker')).toHaveValue('5');
  await expect(limitsTable).not.toContainText('app:');
  const upscalerLine = limitsTable.getByRole('row').filter({ hasText: 'Precision upscaler' });
  await expect(upscalerLine.getByTestId('limits-from')).toHaveText('Yours');
  await expect(upscalerLine.getByRole('cell').nth(3)).toHaveText('3');
  // Only the caps the service publishes are the plan's, said with their source: no "every other tool".
  await expect(page.getByTestId('limits-row-hires').getByTestId('limits-from')).toHaveText('Published');
  await expect(page.getByTestId('limits-source')).toContainText('https://docs.freepik.com/ratelimits');
  await expect(limitsTable).not.toContainText('Every other tool');
  // Used today for every tool that sent jobs, capped or not (issue #42: "used today 0" for every other tool).
  await expect(page.getByTestId('limits-today-image-to-prompt').getByTestId('limits-used')).toHaveText('2');
  await expect(page.getByTestId('limits-today-image-to-prompt')).toContainText('no cap');
  await expect(page.getByTestId('limits-today-upscaler-precision').getByTestId('limits-used')).toHaveText('3');
  const limit = page.getByLabel('Jobs a day for Precision upscaler');
  await expect(limit).toHaveValue('3');
  await limit.fill('10');
  await limit.press('Tab');
  await expect(upscalerLine.getByRole('button', { name: "Back to the plan's" })).toBeVisible();

  await page.goto(`${host.url}#queue`);
  await page.getByTestId('batch-row').filter({ hasText: 'Precision upscaler' }).click();
  await expect(heldRow.getByTestId('batch-count')).toHaveText('6/6', { timeout: 30_000 });
  await expect(jobs('done')).toHaveCount(6);
  await expect(hold).toHaveCount(0);
  // Held by the app, never refused by the service.
  expect((await sandboxStats(sandbox.url)).limited).toEqual({ burst: 0, average: 0, daily_cap: 0 });
  expect(errors).toEqual([]);
});

test('Settings › Prices shows the published price per tool with its source, and your own price goes over it', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(200);
  host = await launch(newHome(), sandbox.env);
  await page.goto(`${host.url}#settings`);
  const upscaler = page.getByTestId('price-upscaler-precision');
  await expect(upscaler.getByTestId('price-effective')).toHaveText('5');
  await expect(upscaler.getByTestId('price-from')).toContainText('Published');
  await expect(upscaler.getByTestId('price-from')).toContainText('2026-12-05');
  const hires = page.getByTestId('price-hires');
  await expect(hires.getByTestId('price-effective')).toHaveText('unknown');
  await expect(hires.getByTestId('price-from')).toContainText('No published price');
  await expect(hires.getByTestId('price-from')).toContainText('€0.10 an image at 2K');

  const own = page.getByLabel('Your own price for Precision upscaler');
  await own.fill('8');
  await own.press('Tab');
  await expect(upscaler.getByTestId('price-effective')).toHaveText('8');
  await expect(upscaler.getByTestId('price-from')).toContainText('Yours');
  const listed = await desk<PricesList>(host, 'prices.list', {});
  expect(listed.prices.find((p) => p.tool === 'upscaler-precision')?.own).toBe(8);
  await own.fill('');
  await own.press('Tab');
  await expect(upscaler.getByTestId('price-effective')).toHaveText('5');
  expect(errors).toEqual([]);
});
