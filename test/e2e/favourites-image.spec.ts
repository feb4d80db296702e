import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import sharp from 'sharp';
import { expect, test, type Launch, type SandboxAt } from './fixtures.ts';
import { newHome, type HostHandle } from './host.ts';
import { desk, makeImages, watchErrors } from './studio-helpers.ts';

// The service's own image tools, each found by a word, filled and run on a folder of two images.
let launch: Launch;
let sandboxAt: SandboxAt;
test.beforeEach(({ launch: l, sandboxAt: s }) => {
  launch = l;
  sandboxAt = s;
});

interface Job {
  state: string;
  outputs: string[];
  params: Record<string, unknown>;
}

/** A host on the worker's Sandbox, the Studio on the tool found by `query`. */
let sandboxUrl: string;
async function openTool(page: Page, query: string, tool: string): Promise<HostHandle> {
  const sandbox = await sandboxAt(200);
  sandboxUrl = sandbox.url;
  const host = await launch(newHome(), sandbox.env);
  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-search').fill(query);
  await page.locator(`[data-testid="tool-result"][data-tool="${tool}"]`).getByTestId('tool-pick').click();
  await expect(page.getByTestId('tool-select')).toHaveValue(tool);
  return host;
}

/** Two images started as a batch; the Queue shows both done, each result on disk. */
async function runFolder(page: Page, host: HostHandle, title: string): Promise<Record<string, unknown>> {
  const dir = join(mkdtempSync(join(tmpdir(), 'md-fav-')), 'in');
  await makeImages(dir, 2);
  await page.getByTestId('pick-folder').setInputFiles(dir);
  await expect(page.getByTestId('input-status')).toContainText('2 files');
  await page.getByTestId('start').click();
  await page.getByTestId('nav-queue').click();
  const row = page.getByTestId('batch-row').filter({ hasText: title });
  await expect(row.getByTestId('batch-count')).toHaveText('2/2', { timeout: 30_000 });
  const [batch] = await desk<{ id: string }[]>(host, 'batches.list', {});
  const { jobs } = await desk<{ jobs: Job[] }>(host, 'jobs.list', { batchId: batch.id, limit: 10 });
  expect(jobs.map((j) => j.state)).toEqual(['done', 'done']);
  for (const j of jobs) expect(existsSync(j.outputs[0])).toBe(true);
  return jobs[0].params;
}

/** How many creates the Sandbox was sent on a path: the request passed its reference's schema. */
async function createsOn(path: string): Promise<number> {
  const stats = (await fetch(`${sandboxUrl}/__sandbox/stats`).then((r) => r.json())) as {
    requests: Record<string, number>;
  };
  return stats.requests[`POST ${path}`] ?? 0;
}

test('creative upscaler: scale, creativity, resemblance, HDR and engine go with each image', async ({ page }) => {
  const errors = watchErrors(page);
  const host = await openTool(page, 'magnific', 'upscaler-creative');
  await expect(page.getByTestId('field-scale_factor')).toHaveValue('2x');
  // A suggested starting point fills the form; the settings are then the person's to change.
  await page.getByTestId('preset-select').selectOption({ label: 'Portrait, true to the face' });
  await expect(page.getByTestId('field-engine')).toHaveValue('magnific_sharpy');
  await expect(page.getByTestId('field-resemblance')).toHaveValue('5');
  await page.getByTestId('field-scale_factor').selectOption('4x');
  await page.getByTestId('field-optimized_for').selectOption('films_n_photography');
  await page.getByTestId('field-creativity').fill('3');
  await page.getByTestId('field-resemblance').fill('-2');
  await page.getByTestId('field-hdr').fill('5');
  await page.getByTestId('field-engine').selectOption('magnific_sparkle');
  expect(await runFolder(page, host, 'Creative upscaler')).toMatchObject({
    scale_factor: '4x',
    optimized_for: 'films_n_photography',
    creativity: 3,
    resemblance: -2,
    hdr: 5,
    engine: 'magnific_sparkle',
  });
  expect(errors).toEqual([]);
});

test('relight: a light prompt and a style, over a folder', async ({ page }) => {
  const errors = watchErrors(page);
  const host = await openTool(page, 'relight', 'relight');
  await page.getByTestId('field-prompt').fill('golden hour from the left');
  await page.getByTestId('field-style').selectOption('brighter');
  expect(await runFolder(page, host, 'Relight')).toMatchObject({ style: 'brighter', change_background: true });
  expect(errors).toEqual([]);
});

test('relight: a lightmap and advanced settings go with each image; a lightmap and a light reference do not mix', async ({
  page,
}) => {
  const errors = watchErrors(page);
  const host = await openTool(page, 'relight', 'relight');
  const light = join(host.home, 'lightmap.png');
  await sharp({ create: { width: 256, height: 256, channels: 3, background: '#fc8' } })
    .png()
    .toFile(light);
  const pick = (field: string) =>
    page.getByTestId('tool-form').locator(`[data-field="${field}"] input[type="file"]`).setInputFiles(light);
  // The advanced settings are a form of their own, showing the service's defaults until changed.
  await expect(page.getByTestId('field-advanced_settings.contrast')).toHaveValue('50');
  await expect(page.getByTestId('field-advanced_settings.engine')).toHaveValue('automatic');
  await pick('transfer_light_from_lightmap');
  await pick('transfer_light_from_reference_image');
  await expect(page.getByTestId('error-transfer_light_from_lightmap')).toContainText('incompatible');
  await page.getByRole('button', { name: 'Clear Light reference' }).click();
  await expect(page.getByTestId('error-transfer_light_from_lightmap')).toHaveCount(0);
  await page.getByTestId('field-advanced_settings.contrast').fill('70');
  await page.getByTestId('field-advanced_settings.engine').selectOption('cool');
  await page.getByTestId('field-advanced_settings.fixed_generation').check();
  const params = await runFolder(page, host, 'Relight');
  expect(params).toMatchObject({ advanced_settings: { contrast: 70, engine: 'cool', fixed_generation: true } });
  expect(Object.keys(params.advanced_settings as object).sort()).toEqual(['contrast', 'engine', 'fixed_generation']);
  expect(String(params.transfer_light_from_lightmap).length).toBeGreaterThan(100);
  expect(params).not.toHaveProperty('transfer_light_from_reference_image');
  expect(await createsOn('/v1/ai/image-relight')).toBe(2);
  expect(errors).toEqual([]);
});

test('style transfer: one style reference applied to every image of a folder', async ({ page }) => {
  const errors = watchErrors(page);
  const host = await openTool(page, 'style', 'style-transfer');
  const ref = join(host.home, 'style.png');
  await sharp({ create: { width: 128, height: 128, channels: 3, background: '#a35' } })
    .png()
    .toFile(ref);
  await page.getByTestId('tool-form').locator('[data-field="reference_image"] input[type="file"]').setInputFiles(ref);
  await expect(page.getByTestId('field-reference_image')).toHaveValue(/encoded file/);
  await page.getByTestId('field-flavor').selectOption('gen_z');
  expect(await runFolder(page, host, 'Style transfer')).toMatchObject({ flavor: 'gen_z' });
  expect(errors).toEqual([]);
});

test('image expand: the model is a choice, each going to its own path', async ({ page }) => {
  const errors = watchErrors(page);
  const host = await openTool(page, 'outpaint', 'image-expand');
  await page.getByTestId('field-model').selectOption('ideogram');
  await page.getByTestId('field-top').fill('128');
  expect(await runFolder(page, host, 'Image expand')).toMatchObject({ left: 256, right: 256, top: 128 });
  expect(await createsOn('/v1/ai/image-expand/ideogram')).toBe(2);
  expect(errors).toEqual([]);
});
