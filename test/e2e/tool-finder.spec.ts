import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from './fixtures.ts';
import { newHome } from './host.ts';
import { desk, makeImages, watchErrors } from './studio-helpers.ts';

const results = (page: import('@playwright/test').Page) => page.getByTestId('tool-results').getByTestId('tool-result');

test('the Studio finds the creative upscaler by "upscale" and by "magnific", by mouse and by keyboard', async ({
  page,
  sharedHost,
}) => {
  const errors = watchErrors(page);
  await page.goto(`${sharedHost.url}#studio`);
  const search = page.getByTestId('tool-search');
  await search.fill('upscale');
  await expect(results(page).first()).toHaveAttribute('data-tool', /upscaler/);
  await expect(page.locator('[data-testid="tool-result"][data-tool="upscaler-creative"]')).toBeVisible();
  await expect(page.locator('[data-testid="tool-result"][data-tool="relight"]')).toHaveCount(0);

  // The model's own name: only the Magnific engines' tool.
  await search.fill('magnific');
  await expect(results(page)).toHaveCount(1);
  await expect(results(page).first()).toHaveAttribute('data-tool', 'upscaler-creative');
  // Keyboard: down into the list, Enter picks; the form is the creative upscaler's.
  await search.press('ArrowDown');
  await expect(results(page).first().getByTestId('tool-pick')).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('tool-select')).toHaveValue('upscaler-creative');
  await expect(page.getByTestId('field-creativity')).toHaveValue('0');
  await expect(page.getByTestId('field-engine')).toHaveValue('automatic');

  // What it makes and what it takes, on the Video builder: image-to-video tools, no text-to-video.
  await page.goto(`${sharedHost.url}#video`);
  await page.getByTestId('tool-search').fill('takes image makes video');
  await expect(page.locator('[data-testid="tool-result"][data-tool="lite-t2v"]')).toHaveCount(0);
  await page.locator('[data-testid="tool-result"][data-tool="kling-i2v"]').getByTestId('tool-pick').click();
  await expect(page.getByTestId('video-form')).toHaveAttribute('data-tool', 'kling-i2v');
  expect(errors).toEqual([]);
});

test('a starred tool comes first and stays so after a reload; then the recently used, newest first', async ({
  page,
  sandboxAt,
  launch,
}) => {
  const errors = watchErrors(page);
  const sandbox = await sandboxAt(200);
  const host = await launch(newHome(), sandbox.env);
  await page.goto(`${host.url}#studio`);
  await expect(page.getByTestId('tool-select').locator('option').first()).toHaveAttribute('value', 'skin-creative');

  await page.getByTestId('tool-search').fill('relight');
  const star = page.locator('[data-testid="tool-result"][data-tool="relight"]').getByTestId('tool-star');
  await expect(star).toHaveAttribute('aria-pressed', 'false');
  await star.click();
  await expect(star).toHaveAttribute('aria-pressed', 'true');
  await page.getByTestId('tool-search').fill('');
  await expect(results(page).first()).toHaveAttribute('data-tool', 'relight');
  await expect(page.getByTestId('tool-select').locator('option').first()).toHaveAttribute('value', 'relight');

  await page.reload();
  await expect(results(page).first()).toHaveAttribute('data-tool', 'relight');
  await expect(results(page).first().getByTestId('tool-star')).toHaveAttribute('aria-pressed', 'true');
  expect((await desk<{ favouriteTools: string[] }>(host, 'settings.get')).favouriteTools).toEqual(['relight']);

  // Two tools used, one after the other: the later one comes first after the favourite.
  const [img] = await makeImages(join(mkdtempSync(join(tmpdir(), 'md-find-')), 'in'), 1);
  for (const tool of ['change-camera', 'image-to-prompt'])
    await desk(host, 'batches.start', { tool, inputs: [img], params: {} });
  await expect
    .poll(async () => results(page).evaluateAll((els) => els.map((e) => e.getAttribute('data-tool'))))
    .toEqual(['relight', 'image-to-prompt', 'change-camera']);
  await expect(page.getByTestId('tool-select').locator('optgroup').first()).toHaveAttribute('label', 'Favourites');
  await expect(page.getByTestId('tool-select').locator('optgroup').nth(1)).toHaveAttribute('label', 'Recently used');
  expect(errors).toEqual([]);
});
