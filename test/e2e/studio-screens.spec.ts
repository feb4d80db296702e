import { join } from 'node:path';
import { expect, test } from './fixtures.ts';
import sharp from 'sharp';
import type { HostHandle } from './host.ts';
import { expectRefusalFocusesPrompt, shot, watchErrors } from './studio-helpers.ts';

// These tests change nothing the host keeps: they share the worker's host.
let host: HostHandle;

test('change camera: a visual, keyboard-driven control; the studio fits 1024x700 in the dark theme', async ({
  page,
  sharedHost,
}) => {
  const errors = watchErrors(page);
  host = sharedHost;
  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('change-camera');
  const dial = page.getByTestId('camera-horizontal');
  await dial.focus();
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('PageUp');
  await expect(dial).toHaveAttribute('aria-valuenow', '16');
  await expect(page.getByTestId('field-horizontal_angle')).toHaveValue('16');
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('Home');
  await page.keyboard.press('ArrowLeft');
  // A circle: below 0 comes 359.
  await expect(dial).toHaveAttribute('aria-valuenow', '359');
  const vertical = page.getByTestId('camera-vertical');
  await vertical.focus();
  await page.keyboard.press('End');
  await expect(vertical).toHaveAttribute('aria-valuenow', '90');
  await page.getByTestId('field-zoom').fill('12');
  await expect(page.getByTestId('field-zoom')).toHaveValue('10');
  await shot(page, 'studio-camera');

  await page.emulateMedia({ colorScheme: 'dark' });
  await page.setViewportSize({ width: 1024, height: 700 });
  await page.screenshot({ path: 'test-results/studio-camera-dark-1024.png' });
  // Nothing wider than the window.
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1024);
  expect(errors).toEqual([]);
});

test('Start with a field to fix takes the keyboard to that field', async ({ page, sharedHost }) => {
  const errors = watchErrors(page);
  host = sharedHost;
  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('hires');
  await expectRefusalFocusesPrompt(page, 'start');
  expect(errors).toEqual([]);
});

test('a LoRA style used beside a reference image is flagged: the service ignores it there', async ({
  page,
  sharedHost,
}) => {
  const errors = watchErrors(page);
  host = sharedHost;
  const ref = join(host.home, 'look.png');
  await sharp({ create: { width: 256, height: 256, channels: 3, background: '#8a5' } })
    .png()
    .toFile(ref);
  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('hires');
  await page.getByTestId('tool-form').locator('[data-field="style_reference"] input[type="file"]').setInputFiles(ref);
  await expect(page.getByTestId('field-style_reference')).toHaveValue(/encoded file/);

  await page.getByTestId('nav-loras').click();
  await page.getByRole('button', { name: 'Use Watercolor' }).click();
  await expect(page.getByTestId('styling-style')).toHaveText('Watercolor');
  await expect(page.getByTestId('warning-styling')).toContainText(
    'the LoRA style is ignored while a structure or style reference image is set',
  );

  await page.getByRole('button', { name: 'Clear Style reference' }).click();
  await expect(page.getByTestId('warning-styling')).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('each tool says beside its form how far its request is verified against the live service', async ({
  page,
  sharedHost,
}) => {
  const errors = watchErrors(page);
  host = sharedHost;
  await page.goto(`${host.url}#studio`);
  const basis = page.getByTestId('tool-basis');
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  await expect(basis).toHaveText("Checked against the service's official API description.");
  await page.getByTestId('tool-select').selectOption('quality-image');
  await expect(basis).toHaveText("Follows the service's public documentation; not in its official API description.");
  await page.goto(`${host.url}#video`);
  // Video 2.x is in the 2026-06-29 description; 2.5 follows the API spec alone.
  await expect(page.getByTestId('tool-basis')).toHaveAttribute('data-basis', 'official');
  await page.getByTestId('family-picker').getByText('2.5 multi-shot', { exact: true }).click();
  await expect(page.getByTestId('tool-basis')).toHaveAttribute('data-basis', 'spec');
  await expect(page.getByTestId('tool-basis')).toContainText('Follows the API spec alone');
  expect(errors).toEqual([]);
});
