import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import { newHome, type HostHandle } from './host.ts';
import { makeImages, watchErrors, type SandboxProcess } from './studio-helpers.ts';

let host: HostHandle;
let sandbox: SandboxProcess;

test('Studio says what a batch costs before Start, and the Queue shows its budget holding it until lifted', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(200);
  await fetch(`${sandbox.url}/__sandbox/limits`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ limits: 'service' }),
  });
  // A fresh data folder: the price is the table's, no usage is read.
  host = await launch(newHome(), sandbox.env);
  const dir = join(mkdtempSync(join(tmpdir(), 'md-estimate-')), 'shoot');
  await makeImages(dir, 3);

  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  await page.getByTestId('pick-folder').setInputFiles(dir);
  await expect(page.getByTestId('check-summary')).toHaveText('3 images ready');
  await expect(page.getByTestId('cost-estimate')).toHaveText(
    "Sends 3 paid jobs · 15 credits (5 each by the service's price as a review reports it, read 2026-12-05: 5 for an image at ×2 from about 1.2 MP)",
  );

  await page.getByTestId('budget-credits').fill('7');
  await page.getByTestId('start').click();
  // The pause is said as the Queue says it, in the Studio and the tab title too.
  await expect(page.getByTestId('batch-state')).toHaveText('Paused by budget');
  await expect(page.getByTestId('batch-state-why')).toHaveText(
    "the next job would go past this batch's budget of 7 credits (5 spent so far by the estimate).",
  );
  await expect(page).toHaveTitle('Paused by budget 1/3 · MediaDesk');
  await page.getByTestId('nav-queue').click();
  await expect(page.getByTestId('queue-state')).toHaveText('Paused by budget');
  await expect(page.getByTestId('budget-held')).toHaveText(
    "Paused: the next job would go past this batch's budget of 7 credits (5 spent so far by the estimate).",
  );
  await expect(page.getByTestId('batch-summary')).toHaveText('Paused by budget');
  await expect(page.getByTestId('batch-count')).toHaveText('1/3');

  await page.getByTestId('budget-remove').click();
  await expect(page.getByTestId('batch-count')).toHaveText('3/3');
  await expect(page.getByTestId('budget-hold')).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('a tool the service publishes no credit price for says so before Start, until you set your own', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(200);
  host = await launch(newHome(), sandbox.env);
  const dir = join(mkdtempSync(join(tmpdir(), 'md-unpriced-')), 'shoot');
  await makeImages(dir, 3);
  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('skin-creative');
  await page.getByTestId('pick-folder').setInputFiles(dir);
  await expect(page.getByTestId('cost-estimate')).toHaveText(
    "Sends 3 paid jobs · cost unknown: the service's pricing pages give no credit price for this tool that could be read; set a price in Settings › Prices or with mediadesk prices set",
  );
  await page.goto(`${host.url}#settings`);
  const own = page.getByLabel('Your own price for Skin enhancer: creative');
  await own.fill('12');
  await own.press('Tab');
  await expect(page.getByTestId('price-skin-creative').getByTestId('price-effective')).toHaveText('12');
  // Back in the Studio, the folder picked before is still there (kept by the page): the estimate has the new price.
  await page.goto(`${host.url}#studio`);
  await expect(page.getByTestId('check-summary')).toHaveText('3 images ready');
  await expect(page.getByTestId('cost-estimate')).toHaveText(
    'Sends 3 paid jobs · 36 credits (12 each by your own price: 12 for an image)',
  );
  expect(errors).toEqual([]);
});

// A button that moves between press and release under the pointer never gets the click: the
// estimate's line, which comes and goes as it asks, must not move the button it prices.
for (const [screen, button, complete] of [
  ['studio', 'start', (page: Page) => page.getByTestId('field-prompt').fill('a lighthouse at dusk')],
  ['music', 'submit', (page: Page) => page.getByTestId('field-prompt').fill('Warm synth pads, slow arpeggio')],
  ['video', 'submit', (page: Page) => page.getByTestId('field-prompt').fill('A paper boat down a rain gutter')],
  ['apps', 'app-run', async () => {}],
] as const)
  test(`${screen}: ${button} stays where it is while the cost is asked and told`, async ({ page, launch }) => {
    const errors = watchErrors(page);
    host = await launch(newHome());
    await page.goto(`${host.url}#${screen}`);
    if (screen === 'studio') await page.getByTestId('tool-select').selectOption('flex-image');
    if (screen === 'video') await page.getByTestId('family-picker').getByText('Lite', { exact: true }).click();
    if (screen === 'apps') await page.getByTestId('app-jM4nX8sc').click();
    const pressed = page.getByTestId(button);
    await expect(pressed).toBeVisible();
    const before = await pressed.boundingBox();
    await complete(page);
    await expect(page.getByTestId('cost-estimate')).toHaveText(/^(?!Estimating)./);
    expect(await pressed.boundingBox()).toEqual(before);
    expect(errors).toEqual([]);
  });
