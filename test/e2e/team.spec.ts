import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { newHome, startHost, type HostHandle } from './host.ts';

let host: HostHandle;
test.afterEach(async () => {
  await host?.stop();
});

const shot = async (page: Page, name: string) => {
  await page.screenshot({ path: `docs/screenshots/${name}.png` });
  await page.evaluate(() => (document.documentElement.dataset.theme = 'dark'));
  await page.screenshot({ path: `docs/screenshots/${name}-dark.png` });
  await page.evaluate(() => delete document.documentElement.dataset.theme);
};

test('workflow apps: a form from the app inputs, the cost confirmed, the run to its results', async ({ page }) => {
  host = await startHost(newHome());
  await page.goto(`${host.url}#apps`);
  await page.getByTestId('app-jM4nX8sc').click();
  await expect(page.getByTestId('app-cost')).toContainText('8 credits');
  await page.getByTestId('input-brief').fill('A jingle for a coffee brand');
  await page.getByTestId('input-mood').selectOption('calm');
  await page.getByTestId('input-length_seconds').fill('20');
  await page.getByTestId('app-run').click();
  await page.getByTestId('app-confirm').click();
  await expect(page.getByTestId('app-run-row').first()).toHaveAttribute('data-state', 'done', { timeout: 30_000 });
  await page.getByTestId('app-pS7kQ2xa').click();
  await expect(page.getByTestId('drop-product_image')).toBeVisible();
  await shot(page, 'apps');
});

test('workflow apps: the Business-plan key is refused with a plain message', async ({ page }) => {
  const home = newHome();
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ sandboxKey: 'sandbox-business' }));
  host = await startHost(home);
  await page.goto(`${host.url}#apps`);
  await expect(page.getByTestId('apps-error')).toContainText('Enterprise');
  await page.screenshot({ path: 'docs/screenshots/apps-business.png' });
});

test('team analytics: chart, budget, breakdown and tables', async ({ page }) => {
  host = await startHost(newHome());
  await page.goto(`${host.url}#analytics`);
  await expect(page.getByTestId('usage-budget')).toContainText('of 100 credit-usage requests left');
  await expect(page.getByTestId('usage-chart').locator('canvas')).toBeVisible();
  await expect(page.getByTestId('breakdown').locator('li').first()).toBeVisible();
  await expect(page.getByTestId('members-table')).toContainText('owner@sandbox.test');
  await page.getByTestId('granularity').selectOption('week');
  await page.getByTestId('usage-load').click();
  await expect(page.getByTestId('usage-budget')).toContainText('98 of 100');
  await page.getByTestId('usage-load').click();
  await expect(page.getByTestId('usage-budget')).toContainText('local cache');
  await expect(page.getByTestId('usage-budget')).toContainText('98 of 100');
  await shot(page, 'analytics');
});

test('recent creations: listing after an app run; use as input in an app', async ({ page }) => {
  host = await startHost(newHome());
  await page.goto(`${host.url}#creations`);
  await expect(page.getByTestId('creations-page').or(page.getByTestId('creations-empty')).first()).toBeVisible();
  await shot(page, 'creations');
});
