import { expect, test } from '@playwright/test';
import { newHome, startHost, type HostHandle } from './host.ts';
import { shot, watchErrors } from './studio-helpers.ts';

let host: HostHandle;
test.afterEach(async () => {
  await host?.stop();
});

test('change camera: a visual, keyboard-driven control; the studio fits 1024x700 in the dark theme', async ({ page }) => {
  const errors = watchErrors(page);
  host = await startHost(newHome());
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

test('Start with a field to fix takes the keyboard to that field', async ({ page }) => {
  const errors = watchErrors(page);
  host = await startHost(newHome());
  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('hires');
  await page.getByTestId('start').focus();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('error-prompt')).toContainText('is required');
  await expect(page.getByTestId('field-prompt')).toBeFocused();
  expect(errors).toEqual([]);
});
