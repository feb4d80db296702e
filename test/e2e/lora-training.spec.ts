import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { axeViolations } from './axe.ts';
import { expect, test } from './fixtures.ts';
import { newHome, watchErrors } from './host.ts';

/** Distinct small PNGs, as a designer's folder of training images. */
async function trainingImages(dir: string, n: number): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const files: string[] = [];
  for (let i = 0; i < n; i++) {
    const f = join(dir, `look-${i}.png`);
    await sharp({ create: { width: 48, height: 48, channels: 3, background: { r: 30 * i, g: 90, b: 140 } } })
      .png()
      .toFile(f);
    files.push(f);
  }
  return files;
}

test('a style LoRA trained from the gallery: checked before Start, queued, and in the gallery once trained', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  const sandbox = await sandboxAt(1500);
  const home = newHome();
  const host = await launch(home, { ...sandbox.env, MEDIADESK_POLL_MIN_MS: '100' });
  const images = await trainingImages(join(home, 'looks'), 6);
  await page.goto(`${host.url}#loras`);
  await expect(page.getByTestId('lora-card').first()).toBeVisible();
  await page.getByTestId('lora-train-open').click();

  // Too few images and a name the service refuses: said before anything can be started.
  await page.getByTestId('lora-train-name').fill('studio look');
  await page.getByTestId('lora-train-files').setInputFiles(images.slice(0, 5));
  await expect(page.getByTestId('lora-train-count')).toHaveText('5 images ready (6 to 20 are taken)');
  await expect(page.getByTestId('lora-problem-images')).toContainText('must be 6 to 20 images');
  await expect(page.getByTestId('lora-problem-name')).toContainText('must match');
  await expect(page.getByTestId('lora-train-price')).toContainText('Price unknown');
  await expect(page.getByTestId('lora-train-start')).toBeDisabled();
  // The form with its problems said passes axe's WCAG rules, as every screen must.
  expect(await axeViolations(page)).toEqual([]);

  await page.getByTestId('lora-train-name').fill('studio-look');
  await page.getByTestId('lora-train-files').setInputFiles(images);
  await expect(page.getByTestId('lora-train-count')).toHaveText('6 images ready (6 to 20 are taken)');
  await page.getByTestId('lora-train-quality').selectOption('ultra');
  await expect(page.getByTestId('lora-train-start')).toBeEnabled();
  await page.getByTestId('lora-train-start').click();
  await expect(page.getByTestId('lora-train-queued')).toContainText('Training of studio-look queued: 6 images');
  await expect(page.getByTestId('lora-training').filter({ hasText: 'studio-look' })).toHaveAttribute(
    'data-state',
    'done',
    { timeout: 30_000 },
  );
  await expect(page.locator('[data-testid="lora-card"][data-lora="studio-look"]')).toBeVisible();
  await expect(page.locator('[data-testid="lora-card"][data-lora="studio-look"]')).toContainText('mine');
  expect(await axeViolations(page)).toEqual([]);
  expect(errors).toEqual([]);
});

test('My flows lists the user’s own flows with drafts marked', async ({ page, launch, sandboxAt }) => {
  const errors = watchErrors(page);
  const sandbox = await sandboxAt();
  const host = await launch(newHome(), sandbox.env);
  await page.goto(`${host.url}#apps`);
  const mine = page.getByTestId('my-flow');
  await expect(mine.filter({ hasText: 'My Custom Sketch to Image' })).toHaveAttribute('data-draft', 'true');
  await expect(mine.filter({ hasText: 'Product shot studio' })).toHaveAttribute('data-draft', 'false');
  await expect(mine.filter({ hasText: 'My Custom Sketch to Image' }).locator('.tag')).toHaveText('draft');
  expect(await axeViolations(page)).toEqual([]);
  expect(errors).toEqual([]);
});
