import { chmodSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from './fixtures.ts';
import { desk, newHome, type HostHandle } from './host.ts';
import { makeImages, watchErrors, type SandboxProcess } from './studio-helpers.ts';

let host: HostHandle;
let sandbox: SandboxProcess;

/** A computer with no file manager (as this container): its xdg-open answers 3, as the real one does here. */
function noFileManager(): string {
  const bin = mkdtempSync(join(tmpdir(), 'md-no-opener-'));
  writeFileSync(
    join(bin, 'xdg-open'),
    '#!/bin/sh\necho "xdg-open: no method available for opening \'$1\'" >&2\nexit 3\n',
  );
  chmodSync(join(bin, 'xdg-open'), 0o755);
  return `${bin}:${process.env.PATH}`;
}

test('a dropped folder: "Results go to" its tool and folder before Start, the same folder with Open folder after', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(300);
  const home = newHome();
  host = await launch(home, { ...sandbox.env, PATH: noFileManager() });
  const shoot = join(mkdtempSync(join(tmpdir(), 'md-drop-')), 'shoot');
  await makeImages(shoot, 3);
  // The output folder of Settings (the host's test default); the rule adds the tool, then the folder dropped.
  const results = join(home, 'results', 'Precision upscaler', 'shoot');

  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  await expect(page.getByTestId('results-folder')).toContainText('Results go to');
  await expect(page.getByTestId('results-folder-path')).toHaveText(join(home, 'results', 'Precision upscaler'));
  await page.getByTestId('pick-folder').setInputFiles(shoot);
  await expect(page.getByTestId('input-status')).toContainText('3 files');
  // Not the browser drop's copy in the data folder: the folder's own name.
  await expect(page.getByTestId('results-folder-path')).toHaveText(results);
  const open = page.getByTestId('results-folder-open');
  await expect(open).toHaveText('Open folder');
  await expect(open).toHaveAttribute('title', 'Opens in the file manager of the computer running MediaDesk');

  await page.getByTestId('start').click();
  await expect(page).toHaveTitle('batch done · MediaDesk', { timeout: 60_000 });
  await expect(page.getByTestId('batch-folder')).toContainText('Results are in');
  await expect(page.getByTestId('batch-folder-path')).toHaveText(results);
  expect(readdirSync(results).sort()).toEqual([
    'img-00_upscaler-precision.png',
    'img-02_upscaler-precision.png',
    'sub',
  ]);
  expect(readdirSync(join(results, 'sub'))).toEqual(['img-01_upscaler-precision.png']);

  // No file manager on this computer: said plainly, with the folder to go to; never an exit code.
  await page.getByTestId('batch-folder-open').click();
  await expect(page.getByTestId('batch-folder-error')).toHaveText(
    `Could not open a file manager here. The folder is: ${results}`,
  );

  // The Results screen and the Queue name the same folder, each with Open folder.
  await page.getByTestId('nav-results').click();
  await expect(page.getByTestId('batch-folder-path')).toHaveText(results);
  await expect(page.getByTestId('batch-folder-open')).toBeVisible();
  await page.getByTestId('nav-queue').click();
  await expect(page.getByTestId('batch-folder-path')).toHaveText(results);
  expect(errors).toEqual([]);
});

test('Open folder opens only folders results go to; one not made yet in the output folder is made', async ({
  launch,
}) => {
  const home = newHome();
  host = await launch(home, { PATH: noFileManager() });
  const tool = join(home, 'results', 'Music generation');
  await expect(desk(host, 'shell.openFolder', { path: tool })).rejects.toThrow(
    `Could not open a file manager here. The folder is: ${tool}`,
  );
  expect(readdirSync(join(home, 'results'))).toEqual(['Music generation']);
  mkdirSync(join(home, 'elsewhere'));
  await expect(desk(host, 'shell.openFolder', { path: join(home, 'elsewhere') })).rejects.toThrow(
    'is not a folder MediaDesk puts results in, so it is not opened',
  );
});
