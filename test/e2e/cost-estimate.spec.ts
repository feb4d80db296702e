import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import sharp from 'sharp';
import { newHome, startHost, type HostHandle } from './host.ts';
import { makeImages, startSandboxProcess, watchErrors, type SandboxProcess } from './studio-helpers.ts';

let host: HostHandle;
let sandbox: SandboxProcess;
test.afterEach(async () => {
  await host?.stop();
  await sandbox?.stop();
});

/** A teammate's uses of the upscaler (another key of the team), so the team's last 7 days price it. */
async function teammateUpscales(url: string, n: number) {
  const png = await sharp({ create: { width: 32, height: 32, channels: 3, background: '#808080' } })
    .png()
    .toBuffer();
  const up = await fetch(`${url}/__sandbox/uploads`, {
    method: 'POST',
    headers: { 'content-type': 'image/png' },
    body: new Uint8Array(png),
  });
  const image = (await up.json()).url;
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${url}/v1/ai/image-upscaler-precision-v2`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-magnific-api-key': 'sandbox-admin' },
      body: JSON.stringify({ image }),
    });
    expect(res.status).toBe(200);
  }
}

test('Studio says what a batch costs before Start, and the Queue shows its budget holding it until lifted', async ({
  page,
}) => {
  const errors = watchErrors(page);
  sandbox = await startSandboxProcess(200);
  await fetch(`${sandbox.url}/__sandbox/limits`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ limits: 'service' }),
  });
  await teammateUpscales(sandbox.url, 2);
  host = await startHost(newHome(), sandbox.env);
  const dir = join(mkdtempSync(join(tmpdir(), 'md-estimate-')), 'shoot');
  await makeImages(dir, 3);

  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  await page.getByTestId('pick-folder').setInputFiles(dir);
  await expect(page.getByTestId('check-summary')).toHaveText('3 images ready');
  await expect(page.getByTestId('cost-estimate')).toHaveText(
    "Sends 3 paid jobs · about 60 credits (20 each, from your team's use in the last 7 days) · leaves 1,997 of today's 2,000 for Precision upscaler",
  );

  await page.getByTestId('budget-credits').fill('30');
  await page.getByTestId('start').click();
  // The pause is said as the Queue says it, in the Studio and the tab title too.
  await expect(page.getByTestId('batch-state')).toHaveText('Paused by budget');
  await expect(page.getByTestId('batch-state-why')).toHaveText(
    "the next job would go past this batch's budget of 30 credits (20 spent so far by the estimate).",
  );
  await expect(page).toHaveTitle('Paused by budget 1/3 · MediaDesk');
  await page.getByTestId('nav-queue').click();
  await expect(page.getByTestId('queue-state')).toHaveText('Paused by budget');
  await expect(page.getByTestId('budget-held')).toHaveText(
    "Paused: the next job would go past this batch's budget of 30 credits (20 spent so far by the estimate).",
  );
  await expect(page.getByTestId('batch-summary')).toHaveText('Paused by budget');
  await expect(page.getByTestId('batch-count')).toHaveText('1/3');

  await page.getByTestId('budget-remove').click();
  await expect(page.getByTestId('batch-count')).toHaveText('3/3');
  await expect(page.getByTestId('budget-hold')).toHaveCount(0);
  expect(errors).toEqual([]);
});
