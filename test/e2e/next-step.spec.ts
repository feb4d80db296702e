import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Route } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import { newHome, type HostHandle } from './host.ts';
import { desk, makeImages, sandboxPosts, setFaults, watchErrors, type SandboxProcess } from './studio-helpers.ts';

interface Job {
  id: string;
  state: string;
}

let host: HostHandle;
let sandbox: SandboxProcess;

test('after a batch with failures, Studio offers Retry and Review first, Start says it is a new batch, and the Queue carries a badge', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(200);
  host = await launch(newHome(), sandbox.env);
  await setFaults(sandbox.url, { failureRate: 1 });
  const dir = join(mkdtempSync(join(tmpdir(), 'md-next-')), 'shoot');
  await makeImages(dir, 3);

  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  await page.getByTestId('typed-path').fill(dir);
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await expect(page.getByTestId('start')).toHaveText('Start batch (3 images)');
  await expect(page.getByTestId('next-step')).toHaveCount(0);
  await page.getByTestId('start').click();

  // Every task fails on the server; then one is sent again while the server answers 500: it may
  // have reached the server, so it needs the user.
  await expect(page.getByTestId('last-batch')).not.toBeEmpty();
  const [batch] = await desk<{ id: string }[]>(host, 'batches.list', {});
  const jobs = async () => (await desk<{ jobs: Job[] }>(host, 'jobs.list', { batchId: batch.id })).jobs;
  const inState = async (s: string) => (await jobs()).filter((j) => j.state === s).length;
  await expect.poll(() => inState('failed'), { timeout: 30_000 }).toBe(3);
  await setFaults(sandbox.url, { failureRate: 0, rate500: 1 });
  await desk(host, 'jobs.retry', { id: (await jobs())[0].id });
  await expect.poll(() => inState('needs_attention'), { timeout: 30_000 }).toBe(1);
  await setFaults(sandbox.url, { rate500: 0 });

  // The next step comes first; Start says plainly it is another batch, paid again.
  const last = page.getByTestId('last-batch');
  await expect(last).toContainText('Batch done');
  await expect(last).toContainText('2 failed · 1 need you');
  await expect(page.getByTestId('retry-failed')).toHaveText('Retry 2 failed');
  await expect(page.getByTestId('review-needs')).toHaveText('Review 1 that needs you');
  await expect(page.getByTestId('start')).toHaveText(/^Start a new batch \(\d+ images?\)$/);
  await expect(page.getByTestId('start')).not.toHaveClass(/primary/);
  await expect(page.getByTestId('retry-failed')).toHaveClass(/primary/);
  await expect(page.getByTestId('new-batch-note')).toHaveText(
    'Retry sends only the jobs that failed, in the same batch. Start a new batch sends the ready images again as new jobs, paid again.',
  );
  // The Queue's menu item counts the jobs that need the user, for every screen and screen reader.
  await expect(page.getByTestId('nav-badge-queue')).toHaveText('1');
  await expect(page.getByRole('button', { name: 'Queue, 1 needs you' })).toBeVisible();

  // Retry: the failed jobs of the same batch go again, and no new batch is made.
  const sent = await sandboxPosts(sandbox.url);
  await page.getByTestId('retry-failed').click();
  await expect.poll(() => inState('done'), { timeout: 30_000 }).toBe(2);
  expect(await sandboxPosts(sandbox.url)).toBe(sent + 2);
  expect(await desk<unknown[]>(host, 'batches.list', {})).toHaveLength(1);
  await expect(last).toContainText('2 done · 1 need you');
  await expect(page.getByTestId('retry-failed')).toHaveCount(0);
  await expect(page.getByTestId('review-needs')).toHaveClass(/primary/);

  // Review: the Queue opens on that batch with the job that needs the user selected.
  await page.getByTestId('review-needs').click();
  await expect(page.getByTestId('screen-queue')).toBeVisible();
  const needs = page.locator('[data-testid=job-row][data-state=needs_attention]');
  await expect(needs.locator('.jname')).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByTestId('attention')).toBeVisible();

  // Decided: the badge goes, live.
  await needs.getByRole('button', { name: /^Cancel / }).click();
  await expect(page.getByTestId('nav-badge-queue')).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Queue', exact: true })).toBeVisible();
  expect(errors).toEqual([]);
});

test('Studio keeps its tool, settings, inputs and output folder across a reload; an input gone since is taken out, saying so', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(200);
  host = await launch(newHome(), sandbox.env);
  const root = mkdtempSync(join(tmpdir(), 'md-keep-'));
  const kept = join(root, 'kept');
  const gone = join(root, 'gone');
  await makeImages(kept, 2);
  await makeImages(gone, 1);
  // Inside the host's output folder: a page's results folders must lie there.
  const out = join(host.home, 'results', 'kept-out');

  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  await page.getByTestId('field-scale_factor').fill('4');
  for (const p of [kept, gone]) {
    await page.getByTestId('typed-path').fill(p);
    await page.getByRole('button', { name: 'Add', exact: true }).click();
  }
  await page.getByTestId('out-dir').fill(out);
  await expect(page.getByTestId('start')).toHaveText('Start batch (3 images)');

  await page.reload();
  await expect(page.getByTestId('tool-select')).toHaveValue('upscaler-precision');
  await expect(page.getByTestId('field-scale_factor')).toHaveValue('4');
  await expect(page.getByTestId('out-dir')).toHaveValue(out);
  const inputs = page.getByRole('list', { name: 'Inputs' }).getByRole('listitem');
  await expect(inputs).toHaveText([kept, gone].map((p) => new RegExp(`^${p}`)));
  await expect(page.getByTestId('start')).toHaveText('Start batch (3 images)');

  // A setting typed saves the choices alone: the inputs' file lists are not written again each keystroke.
  await page.evaluate(() => {
    const setItem = Storage.prototype.setItem;
    const writes: string[] = ((window as unknown as { storageWrites: string[] }).storageWrites = []);
    Storage.prototype.setItem = function (key: string, value: string) {
      writes.push(value);
      setItem.call(this, key, value);
    };
  });
  await page.getByTestId('field-scale_factor').fill('3');
  await page.getByTestId('field-scale_factor').fill('4');
  const writes = () => page.evaluate(() => (window as unknown as { storageWrites: string[] }).storageWrites);
  await expect.poll(async () => (await writes()).some((w) => w.includes('"scale_factor":4'))).toBe(true);
  expect((await writes()).filter((w) => w.includes(kept))).toEqual([]);

  // A folder deleted meanwhile: checked again after the reload, it leaves the list.
  rmSync(gone, { recursive: true });
  await page.reload();
  await expect(inputs).toHaveText([new RegExp(`^${kept}`)]);
  await expect(page.getByTestId('input-error')).toHaveText(`${gone} no longer exists: taken out of the inputs`);
  await expect(page.getByTestId('start')).toHaveText('Start batch (2 images)');
  expect(errors).toEqual([]);
});

test('"Copying … files" does not stay once the copy is over, even when no file arrived', async ({ page, launch }) => {
  const errors = watchErrors(page);
  host = await launch(newHome());
  const dir = join(mkdtempSync(join(tmpdir(), 'md-lost-')), 'shoot');
  await makeImages(dir, 3);
  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  // The uploads are held past the second after which the copy is said, then refused.
  const held: Route[] = [];
  let holding = true;
  await page.route('**/upload?**', (route) => (holding ? void held.push(route) : route.abort()));
  await page.getByTestId('pick-folder').setInputFiles(dir);
  const said = page.getByTestId('studio-said');
  await expect(said).toHaveText('Copying 3 files to MediaDesk…');
  holding = false;
  for (const r of held) await r.abort();
  await expect(page.getByTestId('input-error')).not.toBeEmpty();
  await expect(said).not.toContainText('Copying');
  await expect(page.getByTestId('input-status')).not.toContainText('Copying');
  expect(errors).toEqual([]);
});
