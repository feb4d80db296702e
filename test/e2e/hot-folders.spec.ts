import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { axeViolations } from './axe.ts';
import { expect, test } from './fixtures.ts';
import type { Res } from '../../shared/contract/index.ts';
import { desk, newHome, watchErrors, type HostHandle } from './host.ts';
import { makeImages, shot, type SandboxProcess } from './studio-helpers.ts';

let host: HostHandle;
let sandbox: SandboxProcess;

test('a hot folder: added with a tool and its settings, an image dropped in is done, then paused and removed', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(200);
  host = await launch(newHome(), sandbox.env);
  // Inside the host's output folder: a page's results folders must lie there.
  const root = join(host.home, 'results', 'hot');
  const watched = join(root, 'drop here');
  const results = join(root, 'results');
  mkdirSync(watched, { recursive: true });

  await page.goto(`${host.url}#hot-folders`);
  await expect(page.getByRole('heading', { name: 'Hot folders' })).toBeVisible();
  await expect(page.getByTestId('hot-folders-empty')).toBeVisible();
  const form = page.getByTestId('hot-folder-form');
  // Results inside the watched folder would be processed again: refused, saying so.
  await form.getByTestId('hot-folder-path').fill(watched);
  await form.getByTestId('hot-folder-tool').selectOption('upscaler-precision');
  await form.getByTestId('field-scale_factor').fill('4');
  await form.getByTestId('hot-folder-out').fill(join(watched, 'out'));
  await form.getByTestId('hot-folder-add').click();
  await expect(form.getByTestId('hot-folder-error')).toContainText('is inside the watched folder');

  await form.getByTestId('hot-folder-out').fill(results);
  // The wait before a file is taken: 2 s unless chosen, 1 to 60 whole seconds.
  await expect(form.getByLabel('Wait until a file has stopped changing for')).toHaveValue('2');
  await form.getByTestId('hot-folder-settle').fill('90');
  await form.getByTestId('hot-folder-add').click();
  await expect(form.getByTestId('hot-folder-error')).toContainText(
    'the wait before a file is taken must be a whole number of seconds from 1 to 60; got 90',
  );
  await expect(form.getByTestId('hot-folder-settle')).toHaveAttribute('aria-invalid', 'true');
  await form.getByTestId('hot-folder-settle').fill('3');
  await form.getByTestId('hot-folder-add').click();
  const item = page.getByTestId('hot-folder');
  await expect(item).toHaveCount(1);
  await expect(item.getByTestId('hot-folder-settle')).toHaveValue('3');
  await expect(item.getByTestId('hot-folder-state')).toHaveText('Watching');
  await expect(item).toContainText('Precision upscaler');
  await expect(item.getByTestId('hot-folder-outdir')).toHaveText(results);
  await expect(item.getByTestId('hot-folder-settings')).toContainText('Scale factor 4');

  await makeImages(watched, 1);
  await expect(item.getByTestId('hot-folder-counts')).toHaveText('1 done', { timeout: 30_000 });
  await expect(item.getByTestId('hot-folder-last')).toContainText('done');
  expect(readdirSync(results)).toHaveLength(1);
  await page.getByRole('heading', { name: 'Hot folders' }).scrollIntoViewIfNeeded();
  await shot(page, 'hot-folders');
  // With a hot folder listed and a refusal shown before: axe's WCAG A/AA rules, as a11y.spec checks every screen empty.
  expect(await axeViolations(page)).toEqual([]);

  // Changed on the screen: refused outside the bounds, kept once saved (read again after a reload).
  await item.getByTestId('hot-folder-settle').fill('0');
  await item.getByTestId('hot-folder-settle-save').click();
  await expect(item.getByTestId('hot-folder-settle-error')).toContainText(
    'must be a whole number of seconds from 1 to 60; got 0',
  );
  await item.getByTestId('hot-folder-settle').fill('10');
  await item.getByTestId('hot-folder-settle-save').click();
  await expect(item.getByTestId('hot-folder-settle-save')).toBeHidden();
  await expect(item.getByTestId('hot-folder-settle-error')).toBeHidden();
  await page.reload();
  await expect(item.getByTestId('hot-folder-settle')).toHaveValue('10');
  expect((await desk<Res<'hotFolders.list'>>(host, 'hotFolders.list', {})).folders[0].settleSeconds).toBe(10);

  await item.getByTestId('hot-folder-pause').click();
  await expect(item.getByTestId('hot-folder-state')).toHaveText('Paused');
  await expect(item.getByTestId('hot-folder-resume')).toBeVisible();
  await item.getByTestId('hot-folder-remove').click();
  await expect(page.getByTestId('hot-folders-empty')).toBeVisible();
  expect(errors).toEqual([]);
});
