import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { expect, test, type Launch } from './fixtures.ts';
import { desk, watchErrors, type HostHandle } from './host.ts';
import { makeImages } from './studio-helpers.ts';

let launch: Launch;
// The helpers below start hosts and Sandboxes through the test's fixtures.
test.beforeEach(({ launch: l }) => {
  launch = l;
});

/**
 * The README's "first five minutes", step by step, in its own words: each step's action and what
 * the README says is seen, on the web host with its built-in Sandbox and no API key.
 */

const start = (): Promise<HostHandle> => launch();

const nav = (page: Page, label: string) =>
  page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: label, exact: true });

const auditCount = async (page: Page) =>
  Number((await page.getByTestId('audit-count').innerText()).replace(/[^\d]/g, ''));

/** Every file under a folder, subfolders included. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name);

test('a designer: a folder of images through the Image Studio, the Queue and Results', async ({ page }) => {
  const errors = watchErrors(page);
  const host = await start();
  // Not a README step: more jobs at once keeps the test short; the path is the same.
  await desk(host, 'settings.set', { concurrency: 10 });
  const shoot = join(mkdtempSync(join(tmpdir(), 'md-first-')), 'shoot');
  await makeImages(shoot, 20);
  writeFileSync(join(shoot, 'notes.txt'), 'not an image\n');

  await test.step('1. Start MediaDesk: with no API key it runs on the Sandbox', async () => {
    await page.goto(host.url);
    await expect(page.getByTestId('backend-badge')).toContainText('Sandbox');
  });

  await test.step('2. Image Studio opens; pick Precision upscaler, set Scale factor 4', async () => {
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Image Studio');
    await page.getByRole('combobox', { name: 'Tool' }).selectOption({ label: 'Precision upscaler' });
    await page.getByRole('spinbutton', { name: 'Scale factor' }).fill('4');
  });

  await test.step('3. Choose a folder…: "20 images ready", the skipped file named with the reason', async () => {
    await page.getByLabel('Choose a folder…').setInputFiles(shoot);
    await expect(page.getByTestId('check-summary')).toHaveText('20 images ready, 1 will be skipped');
    await expect(page.getByTestId('check-skipped')).toContainText('notes.txt: ');
  });

  await test.step('4. Read the line "Results go to": it names the folder', async () => {
    await expect(page.getByText(/^Results go to/)).toContainText(join('Precision upscaler', 'shoot'));
  });

  await test.step('5. Press Start batch (20 images)', async () => {
    await page.getByRole('button', { name: 'Start batch (20 images)' }).click();
  });

  await test.step('6. Open Queue: the batch counts up as each image is done', async () => {
    await nav(page, 'Queue').click();
    await expect(page.getByTestId('batch-row')).toHaveCount(1);
    await expect(page.getByTestId('batch-count')).toHaveText(/^\d+\/20$/);
    await expect(page.getByTestId('batch-count')).toHaveText('20/20', { timeout: 90_000 });
  });

  await test.step('7. Open Results: the gallery with a before/after slider, and Open folder', async () => {
    await nav(page, 'Results').click();
    await expect(page.getByTestId('gallery-count')).toHaveText('20 results');
    await page.getByTestId('gallery-item').first().click();
    await expect(page.getByTestId('before-after')).toBeVisible();
    await expect(page.getByRole('button', { name: 'Open folder' })).toBeVisible();
  });

  await test.step('Results are in the output folder, then the tool, then the folder dropped', async () => {
    const folder = join(host.home, 'results', 'Precision upscaler', 'shoot');
    expect(existsSync(folder)).toBe(true);
    expect(filesUnder(folder)).toHaveLength(20);
  });
  expect(errors).toEqual([]);
});

test('a team admin: sync, narrow, search, one event in detail, export, and the export imported offline', async ({
  page,
}) => {
  const errors = watchErrors(page);
  const host = await start();
  await page.goto(host.url);
  let all = 0;
  let exported = '';

  await test.step('1. Open Audit log', async () => {
    await nav(page, 'Audit log').click();
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Audit log');
  });

  await test.step("2. Press Sync: the team's events arrive (a few thousand on the Sandbox)", async () => {
    await page.getByRole('button', { name: 'Sync', exact: true }).click();
    await expect(page.getByTestId('audit-sync-report')).toContainText('Sync complete', { timeout: 60_000 });
    await expect.poll(() => auditCount(page)).toBeGreaterThan(1000);
    all = await auditCount(page);
  });

  await test.step('3. The table lists the events newest first under a timeline; narrow by event type', async () => {
    await expect(page.getByTestId('audit-timeline')).toBeVisible();
    // By each row's machine-readable time: the shown "9:56 PM" sorts after "10:21 PM" as text.
    const times = page.locator('[data-testid="audit-row"] [role="gridcell"]:nth-child(1) time');
    const dates = (await times.evaluateAll((els) => els.map((e) => e.getAttribute('datetime') ?? ''))).map(Date.parse);
    expect(dates.length).toBeGreaterThan(1);
    expect(dates.every((d) => !Number.isNaN(d))).toBe(true);
    expect([...dates].sort((a, b) => b - a)).toEqual(dates);
    await page.getByTestId('audit-event-type').selectOption('team.member.role_changed');
    await expect.poll(() => auditCount(page)).toBeLessThan(all);
    await expect.poll(() => auditCount(page)).toBeGreaterThan(0);
    await page.getByTestId('audit-event-type').selectOption('');
    await expect.poll(() => auditCount(page)).toBe(all);
  });

  await test.step('4. Type in the search box: words match inside names, e-mails and event types', async () => {
    const search = page.getByRole('searchbox');
    for (const words of ['folder', 'role_changed', 'novak']) {
      await search.fill(words);
      await expect.poll(() => auditCount(page), { message: words }).toBeGreaterThan(0);
      await expect.poll(() => auditCount(page), { message: words }).toBeLessThan(all);
    }

    await search.fill('');
    await expect.poll(() => auditCount(page)).toBe(all);
  });

  await test.step('5. Click an event: its details open beside the table', async () => {
    const row = page.getByTestId('audit-row').first();
    const type = await row.locator('[role="gridcell"]:nth-child(2)').innerText();
    await row.click();
    const drawer = page.getByRole('dialog', { name: type });
    await expect(drawer).toBeVisible();
    for (const part of ['Action', 'Member', 'Source'])
      await expect(drawer.getByRole('heading', { name: part, exact: true })).toBeVisible();
    await expect(row).toBeInViewport();
    await drawer.getByRole('button', { name: 'Close', exact: true }).click();
    await expect(drawer).toHaveCount(0);
  });

  await test.step('6. Export…, keep CSV, press Export N events: the events as a spreadsheet file', async () => {
    await page.getByRole('button', { name: 'Export…' }).click();
    await expect(page.getByRole('radio', { name: 'CSV' })).toBeChecked();
    // In a browser, Export is a download.
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: `Export ${all.toLocaleString('en')} events` }).click();
    exported = join(host.home, 'downloaded.csv');
    await (await download).saveAs(exported);

    expect(readFileSync(exported, 'utf8').split('\n')[0]).toMatch(/event_id/);
  });

  await test.step('2, offline: press Import…, then Choose files…, and pick the exported file', async () => {
    const offline = await start();
    await page.goto(`${offline.url}#audit`);
    await page.getByRole('button', { name: 'Import…' }).click();
    const chooser = page.waitForEvent('filechooser');
    await page.getByRole('button', { name: 'Choose files…' }).click();
    await (await chooser).setFiles(exported);
    await expect(page.getByTestId('audit-import-accepted')).toHaveText(`${all.toLocaleString('en')} accepted`, {
      timeout: 60_000,
    });
    await page.getByRole('button', { name: 'Import…' }).click();
    await expect.poll(() => auditCount(page)).toBe(all);
  });
  expect(errors).toEqual([]);
});
