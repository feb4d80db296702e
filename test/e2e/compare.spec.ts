import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { axeViolations } from './axe.ts';
import { expect, test } from './fixtures.ts';
import { desk, newHome, watchErrors, type HostHandle } from './host.ts';
import { makeImages, shot, type SandboxProcess } from './studio-helpers.ts';

let host: HostHandle;
let sandbox: SandboxProcess;

test('compare: one image, three variants side by side, then the chosen one applied to its folder in the Studio', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(200);
  host = await launch(newHome(), sandbox.env);
  const shoot = mkdtempSync(join(tmpdir(), 'md-compare-'));
  const [image] = await makeImages(shoot, 1);
  await desk(host, 'presets.save', { name: 'Four', tool: 'upscaler-precision', params: { scale_factor: 4 } });

  await page.goto(`${host.url}#compare`);
  await expect(page.getByRole('heading', { name: 'Compare', level: 1 })).toBeVisible();
  await page.getByTestId('compare-image').fill(image);
  const variants = page.getByTestId('compare-variant');
  await variants.nth(0).getByTestId('compare-variant-tool').selectOption('upscaler-precision');
  await variants.nth(1).getByTestId('compare-variant-tool').selectOption('upscaler-precision');
  await variants.nth(1).getByTestId('compare-variant-preset').selectOption('Four');
  await page.getByTestId('compare-add').click();
  await variants.nth(2).getByTestId('compare-variant-tool').selectOption('skin-creative');
  await expect(page.getByTestId('compare-cost')).toHaveText(
    'Run sends 3 jobs, one per variant, each charged as one image by the service.',
  );
  await page.getByTestId('compare-run').click();

  const results = page.getByTestId('compare-result');
  await expect(results).toHaveCount(3);
  await expect(results.getByTestId('compare-result-state')).toHaveText(['Done', 'Done', 'Done'], { timeout: 30_000 });
  await expect(results).toContainText([
    'Precision upscaler · Studio settings',
    'Precision upscaler · Four',
    /· Studio settings/,
  ]);
  await expect(results.locator('img')).toHaveCount(3);
  await expect
    .poll(() =>
      results.locator('img').evaluateAll((imgs) => imgs.every((i) => (i as HTMLImageElement).naturalWidth > 0)),
    )
    .toBe(true);
  // The variants above, their results side by side below.
  await results
    .last()
    .getByTestId('compare-result-state')
    .evaluate((el) => el.scrollIntoView({ block: 'end' }));
  await shot(page, 'compare');
  // One small batch per variant, each in its own folder under the output folder's Compare.
  const [run] = readdirSync(join(host.home, 'results', 'Compare'));
  expect(readdirSync(join(host.home, 'results', 'Compare', run))).toHaveLength(3);

  await results.nth(1).getByRole('button').click();
  const chosen = page.getByTestId('compare-chosen');
  await expect(chosen.getByRole('heading', { name: 'Precision upscaler · Four' })).toBeVisible();
  await expect(chosen.locator('img')).toHaveCount(2);
  await chosen.getByTestId('compare-apply').click();
  // In a browser it asks which folder, starting with the typed image's own.
  const ask = page.getByTestId('compare-apply-dialog');
  await expect(ask.getByTestId('compare-apply-folder')).toHaveValue(shoot);
  await ask.getByTestId('compare-apply-confirm').click();

  await expect(page.getByTestId('tool-select')).toHaveValue('upscaler-precision');
  await expect(page.getByTestId('field-scale_factor')).toHaveValue('4');
  await expect(page.getByRole('list', { name: 'Inputs' }).getByTitle(shoot, { exact: true })).toBeVisible();
  expect(errors).toEqual([]);
});

test('compare in a browser with a chosen (uploaded) image: Apply asks for the folder and the Studio holds that one, not the copy', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(200);
  host = await launch(newHome(), sandbox.env);
  const shoot = mkdtempSync(join(tmpdir(), 'md-compare-up-'));
  const [image] = await makeImages(shoot, 1);

  await page.goto(`${host.url}#compare`);
  await page.getByTestId('compare-image-file').setInputFiles(image);
  // The browser has no path: the image is the host's copy in its inbox, shown by the file's own name,
  // never by the copy's folder; the path field stays free for a typed path.
  await expect(page.getByTestId('compare-image-name')).toHaveText(
    `Chosen: ${basename(image)} (copied into MediaDesk to compare it)`,
  );
  await expect(page.getByTestId('compare-image')).toHaveValue('');
  await expect(page.getByTestId('compare-image')).toHaveAttribute(
    'placeholder',
    'or type the full path of another image',
  );
  await page.getByRole('button', { name: 'Remove variant 2' }).click();
  await page
    .getByTestId('compare-variant')
    .nth(0)
    .getByTestId('compare-variant-tool')
    .selectOption('upscaler-precision');
  await page.getByTestId('compare-run').click();
  const results = page.getByTestId('compare-result');
  await expect(results.getByTestId('compare-result-state')).toHaveText(['Done'], { timeout: 30_000 });
  await results.nth(0).getByRole('button').click();
  await page.getByTestId('compare-apply').click();

  const ask = page.getByTestId('compare-apply-dialog');
  await expect(ask).toBeVisible();
  await expect(ask).toContainText('The image was copied into MediaDesk to compare it');
  expect(await axeViolations(page)).toEqual([]);
  await expect(ask.getByTestId('compare-apply-folder')).toHaveValue('');
  await ask.getByTestId('compare-apply-confirm').click();
  await expect(ask.getByTestId('compare-apply-problem')).toHaveText(
    'Type the full path of the folder to apply these settings to.',
  );
  await ask.getByTestId('compare-apply-folder').fill('shoot');
  await ask.getByTestId('compare-apply-confirm').click();
  await expect(ask.getByTestId('compare-apply-problem')).toContainText('shoot is not a full path');
  // Canceled: nothing changes; asked again, the person's folder is opened in the Studio.
  await ask.getByTestId('compare-apply-cancel').click();
  await expect(ask).toBeHidden();
  await expect(page.getByRole('heading', { name: 'Compare', level: 1 })).toBeVisible();
  await page.getByTestId('compare-apply').click();
  await ask.getByTestId('compare-apply-folder').fill(shoot);
  await ask.getByTestId('compare-apply-confirm').click();

  await expect(page.getByTestId('tool-select')).toHaveValue('upscaler-precision');
  const inputs = page.getByRole('list', { name: 'Inputs' });
  await expect(inputs.getByTitle(shoot, { exact: true })).toBeVisible();
  await expect(inputs.getByTitle(/[\\/]inbox[\\/]/)).toHaveCount(0);
  await expect(page.getByTestId('check-summary')).toContainText('1 image', { timeout: 15_000 });

  // Back in Compare, the folder just applied is offered first.
  await page.getByTestId('nav-compare').click();
  await page.getByTestId('compare-result').nth(0).getByRole('button').click();
  await page.getByTestId('compare-apply').click();
  await expect(ask.getByTestId('compare-apply-folder')).toHaveValue(shoot);
  expect(errors).toEqual([]);
});
