import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from './fixtures.ts';
import { newHome, watchErrors, type HostHandle } from './host.ts';
import { shot, type SandboxProcess } from './studio-helpers.ts';

let host: HostHandle;
let sandbox: SandboxProcess;

test('a preset: saved from the Studio, picked to fill the form, there after a reload, exported and imported into a fresh data folder', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(200);
  host = await launch(newHome(), sandbox.env);
  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  const picker = page.getByTestId('preset-picker');
  await page.getByTestId('field-scale_factor').fill('4');
  await picker.getByRole('button', { name: 'Save as preset…' }).click();
  await picker.getByLabel('Preset name').fill('Big and sharp');
  await picker.getByRole('button', { name: 'Save preset' }).click();
  await expect(picker.getByTestId('preset-status')).toHaveText('Saved as “Big and sharp”.');
  // The same name again, in another case: refused, saying why.
  await picker.getByRole('button', { name: 'Save as preset…' }).click();
  await picker.getByLabel('Preset name').fill('big AND sharp');
  await picker.getByLabel('Preset name').press('Enter');
  await expect(picker.getByTestId('preset-status')).toHaveText(
    'a preset named "Big and sharp" exists already; choose another name',
  );
  await picker.getByRole('button', { name: 'Cancel' }).click();

  await page.getByTestId('field-scale_factor').fill('2');
  await page.reload();
  await expect(page.getByTestId('field-scale_factor')).toHaveValue('2');
  await picker.getByTestId('preset-select').selectOption('Big and sharp');
  await expect(page.getByTestId('field-scale_factor')).toHaveValue('4');
  await expect(picker.getByTestId('preset-status')).toHaveText('Settings of “Big and sharp” filled in.');
  await shot(page, 'presets');

  const download = page.waitForEvent('download');
  await picker.getByRole('button', { name: 'Export presets' }).click();
  const file = join(host.home, 'exported.json');
  await (await download).saveAs(file);
  await expect(picker.getByTestId('preset-status')).toContainText('Downloaded MediaDesk presets');
  const exported = JSON.parse(readFileSync(file, 'utf8'));
  exported.presets.push({ name: 'Too big', tool: 'upscaler-precision', params: { scale_factor: 64 } });
  writeFileSync(file, JSON.stringify(exported));

  await host.stop();
  host = await launch(newHome(), sandbox.env);
  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  await expect(picker.getByTestId('preset-select').locator('option')).toHaveText(['No presets for this tool yet']);
  await picker.getByTestId('preset-import-file').setInputFiles(file);
  await expect(picker.getByTestId('preset-status')).toHaveText(
    /^Added “Big and sharp”\. “Too big” not added: scale_factor .*16.*\.$/,
  );
  await picker.getByTestId('preset-select').selectOption('Big and sharp');
  await expect(page.getByTestId('field-scale_factor')).toHaveValue('4');
  expect(errors).toEqual([]);
});
