import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { expect, test, type Launch, type SandboxAt } from './fixtures.ts';
import { newHome, watchLiveRegions, type HostHandle } from './host.ts';
import { desk, makeImages, sandboxPosts, setFaults, watchErrors, type SandboxProcess } from './studio-helpers.ts';
import { hugePng } from '../huge-png.ts';
import type { JobRecord } from '../../shared/contract/index.ts';
import { NO_ANSWER } from '../../shared/work-status.ts';
import { getTool } from '../../shared/catalogue/index.ts';
import { HOST_PROOF_PATH } from '../../shared/host-proof.ts';

let launch: Launch;
let sandboxAt: SandboxAt;
// The helpers below start hosts and Sandboxes through the test's fixtures.
test.beforeEach(({ launch: l, sandboxAt: s }) => {
  launch = l;
  sandboxAt = s;
});

let host: HostHandle;
let sandbox: SandboxProcess;

/** A batch of `count` images on a Sandbox slow enough that nothing finishes during the test. */
async function slowBatch(page: Page, count: number, dir?: string) {
  sandbox = await sandboxAt(120_000);
  host = await launch(newHome(), sandbox.env);
  await desk(host, 'settings.set', { concurrency: 1 });
  if (!dir) {
    dir = mkdtempSync(join(tmpdir(), 'md-queue-'));
    await makeImages(dir, count);
  }
  await desk(host, 'batches.start', { tool: 'upscaler-precision', inputs: [dir], params: {} });
  await page.goto(`${host.url}#queue`);
  await expect(page.getByTestId('job-row')).toHaveCount(count);
  return dir;
}

test('focus stays on the batch or the job when its button goes away or is disabled', async ({ page }) => {
  const errors = watchErrors(page);
  await slowBatch(page, 4);
  // A queued job's Cancel leaves with its state; focus goes to the job itself.
  const queued = page.locator('[data-testid=job-row][data-state=queued]').first();
  const cancel = queued.getByRole('button', { name: /^Cancel / });
  const name = (await cancel.getAttribute('aria-label'))!.replace(/^Cancel /, '');
  await cancel.focus();
  await page.keyboard.press('Enter');
  const canceled = page.locator('[data-testid=job-row][data-state=canceled]');
  await expect(canceled).toHaveCount(1);
  await expect(page.getByRole('button', { name: `Cancel ${name}` })).toHaveCount(0);
  await expect(canceled.locator('.jname')).toBeFocused();
  // Retry failed retries that one job and is then disabled; focus goes to the batch's row. (The
  // batch's counts arrive by event, after the job's own reply.)
  await expect(page.getByTestId('batch-retry')).toBeEnabled();
  await page.getByTestId('batch-retry').focus();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('batch-retry')).toBeDisabled();
  await expect(page.getByTestId('batch-row')).toBeFocused();
  // Same for Cancel batch, disabled once the batch is over: asked and confirmed from the keyboard.
  await expect(page.getByTestId('batch-cancel')).toBeEnabled();
  await page.getByTestId('batch-cancel').focus();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('batch-cancel-keep')).toBeFocused();
  await page.keyboard.press('Shift+Tab');
  await expect(page.getByTestId('batch-cancel-confirm')).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('batch-cancel')).toBeDisabled();
  await expect(page.getByTestId('batch-row')).toBeFocused();
  expect(errors).toEqual([]);
});

test('Cancel batch asks first, counting the jobs it ends and those that may still be charged; Escape keeps them all, confirming cancels them', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(120_000);
  host = await launch(newHome(), sandbox.env);
  await desk(host, 'settings.set', { concurrency: 1 });
  // Paused first: nothing of the batch is submitted yet.
  await desk(host, 'jobs.pause', {});
  const dir = mkdtempSync(join(tmpdir(), 'md-askcancel-'));
  await makeImages(dir, 4);
  await desk(host, 'batches.start', { tool: 'upscaler-precision', inputs: [dir], params: {} });
  await page.goto(`${host.url}#queue`);
  await expect(page.locator('[data-testid=job-row][data-state=queued]')).toHaveCount(4);
  const states = () => page.getByTestId('job-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-state')));
  const counts = async () => (await desk<{ counts: Record<string, number> }[]>(host, 'batches.list', {}))[0].counts;

  const cancel = page.getByTestId('batch-cancel');
  const dialog = page.getByTestId('batch-cancel-dialog');
  await cancel.click();
  await expect(dialog).toBeVisible();
  await expect(dialog).toHaveAccessibleName('Cancel all 4 unfinished jobs of this Precision upscaler batch?');
  await expect(page.getByTestId('batch-cancel-charge')).toHaveText(
    'None has been submitted yet: nothing is charged for them.',
  );
  await expect(page.getByTestId('batch-cancel-confirm')).toHaveText('Cancel 4 jobs');
  await expect(page.getByTestId('batch-cancel-keep')).toBeFocused();
  // Escape: nothing sent, every job as it was, focus back on the button.
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await expect(cancel).toBeFocused();
  // Kept: a cancel that must not be sent has no event; 500 ms is ample for it to reach the host.
  await page.waitForTimeout(500);
  expect(await states()).toEqual(['queued', 'queued', 'queued', 'queued']);
  expect(await counts()).toMatchObject({ queued: 4 });

  // Running: one job submitted, one canceled on its own, two waiting.
  await desk(host, 'jobs.resume', {});
  await expect(page.locator('[data-testid=job-row][data-state=running]')).toHaveCount(1, { timeout: 30_000 });
  await page
    .locator('[data-testid=job-row][data-state=queued]')
    .first()
    .getByRole('button', { name: /^Cancel / })
    .click();
  await expect(page.locator('[data-testid=job-row][data-state=canceled]')).toHaveCount(1);
  await cancel.focus();
  await page.keyboard.press('Enter');
  await expect(dialog).toHaveAccessibleName('Cancel all 3 unfinished jobs of this Precision upscaler batch?');
  await expect(page.getByTestId('batch-cancel-charge')).toHaveText(
    '1 of them was already submitted or needs you, and may still be charged: the API cannot cancel a task, MediaDesk only stops waiting for it.',
  );
  await expect(dialog).toHaveAccessibleDescription(/^1 of them was already submitted/);
  // Keep them, by its button this time: still nothing sent.
  await page.keyboard.press('Enter');
  await expect(dialog).toBeHidden();
  await expect(cancel).toBeFocused();
  expect(await counts()).toMatchObject({ running: 1, queued: 2, canceled: 1 });

  await cancel.click();
  await page.getByTestId('batch-cancel-confirm').click();
  await expect(dialog).toBeHidden();
  await expect(page.locator('[data-testid=job-row][data-state=canceled]')).toHaveCount(4);
  await expect(cancel).toBeDisabled();
  expect(await counts()).toMatchObject({ canceled: 4 });
  expect(errors).toEqual([]);
});

test('a batch canceled part-way says how many were done and canceled, in the row, the bar and the title', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(1500);
  host = await launch(newHome(), sandbox.env);
  await desk(host, 'settings.set', { concurrency: 1 });
  const dir = mkdtempSync(join(tmpdir(), 'md-cancel-'));
  await makeImages(dir, 6);
  // Started from the Studio: only batches started in this window drive the title.
  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  await page.getByTestId('typed-path').fill(dir);
  await page.getByTestId('typed-path').press('Enter');
  await page.getByTestId('start').click();
  await page.getByTestId('last-batch').getByRole('button', { name: 'Open queue' }).click();
  await expect(page.getByTestId('job-row').filter({ has: page.getByText('Done', { exact: true }) })).toHaveCount(1, {
    timeout: 30_000,
  });
  await page.getByTestId('batch-cancel').click();
  await page.getByTestId('batch-cancel-confirm').click();
  await expect(page.getByTestId('batch-cancel')).toBeDisabled();

  const [b] = await desk<{ counts: Record<string, number>; finished: boolean }[]>(host, 'batches.list', {});
  const { done, canceled } = b.counts;
  expect(b.finished).toBe(true);
  expect(done).toBeGreaterThan(0);
  expect(canceled).toBeGreaterThan(0);
  expect(done + canceled).toBe(6);
  await expect(page.getByTestId('batch-count')).toHaveText(`${done}/6`);
  await expect(page.getByTestId('batch-summary')).toHaveText(`${done} done · ${canceled} canceled`);
  await expect(page.getByTestId('batch-row').getByRole('progressbar')).toHaveAttribute('aria-valuenow', String(done));
  await expect(page).toHaveTitle(`batch ended: ${done} done, ${canceled} canceled · MediaDesk`);
  expect(errors).toEqual([]);
});

test('jobs are listed in folder order, and a file in a subfolder shows its folder', async ({ page }) => {
  const errors = watchErrors(page);
  const dir = mkdtempSync(join(tmpdir(), 'md-order-'));
  await makeImages(dir, 6);
  // Same name in the root and in sub/: only the folder tells them apart.
  copyFileSync(join(dir, 'img-00.png'), join(dir, 'sub', 'img-00.png'));
  await slowBatch(page, 7, dir);
  await expect(page.getByTestId('job-name')).toHaveText([
    'img-00.png',
    'img-02.png',
    'img-04.png',
    'sub/img-00.png',
    'sub/img-01.png',
    'sub/img-03.png',
    'sub/img-05.png',
  ]);
  await expect(page.getByRole('button', { name: 'Cancel sub/img-00.png' })).toHaveCount(1);
  expect(errors).toEqual([]);
});

test("a failed job shows its whole file name beside the server's reason, and a Done job its long name", async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(200);
  host = await launch(newHome(), sandbox.env);
  const dir = mkdtempSync(join(tmpdir(), 'md-names-'));
  await makeImages(dir, 2);
  copyFileSync(join(dir, 'img-00.png'), join(dir, 'client-shoot-portrait-0042.png'));
  await setFaults(sandbox.url, { failureRate: 1 });
  await desk(host, 'batches.start', { tool: 'upscaler-precision', inputs: [dir], params: {} });
  await page.goto(`${host.url}#queue`);
  const failed = page.locator('[data-testid=job-row][data-state=failed]');
  await expect(failed).toHaveCount(3, { timeout: 30_000 });
  // Which file failed is what the user needs first: its name is not cut to "client-sh…" by the reason beside it.
  const clipped = (l: typeof failed) =>
    l
      .getByTestId('job-name')
      .evaluateAll((els) => els.filter((e) => e.scrollWidth > e.clientWidth).map((e) => e.textContent));
  expect(await clipped(failed)).toEqual([]);
  for (const reason of await failed.getByTestId('job-row-error').all()) {
    await expect(reason).toContainText('The task failed on the server');
    expect((await reason.boundingBox())!.width).toBeGreaterThan(150);
  }
  // Retried with no faults: done rows have no reason, and the name has the row.
  await setFaults(sandbox.url, { failureRate: 0 });
  await page.getByTestId('batch-retry').click();
  const done = page.locator('[data-testid=job-row][data-state=done]');
  await expect(done).toHaveCount(3, { timeout: 30_000 });
  expect(await clipped(done)).toEqual([]);
  expect(errors).toEqual([]);
});

test('a running batch\'s row reads "1 canceled · 1 running", spaced', async ({ page }) => {
  const errors = watchErrors(page);
  await slowBatch(page, 3);
  await page
    .locator('[data-testid=job-row][data-state=queued]')
    .last()
    .getByRole('button', { name: /^Cancel / })
    .click();
  await expect(page.getByTestId('batch-summary')).toHaveText('1 canceled · 1 running');
  expect(errors).toEqual([]);
});

test('two batches of the skin enhancer read apart in the list, each with its progress bar, at 1024 wide', async ({
  page,
}) => {
  const errors = watchErrors(page);
  await page.setViewportSize({ width: 1024, height: 700 });
  const dir = await slowBatch(page, 2);
  await desk(host, 'batches.start', { tool: 'skin-creative', inputs: [dir], params: {} });
  await desk(host, 'batches.start', { tool: 'skin-faithful', inputs: [dir], params: {} });
  const titles = page.getByTestId('batch-row').locator('strong');
  await expect(titles).toHaveText(['Skin enhancer: faithful', 'Skin enhancer: creative', 'Precision upscaler']);
  // Not "Skin enhancer:…" twice: the whole title shows.
  expect(
    await titles.evaluateAll((els) => els.filter((e) => e.scrollWidth > e.clientWidth).map((e) => e.textContent)),
  ).toEqual([]);
  for (const bar of await page.getByTestId('batch-row').getByRole('progressbar').all())
    expect((await bar.boundingBox())!.height).toBeGreaterThanOrEqual(4);
  expect(errors).toEqual([]);
});

test('a batch started on another backend waits for it and says so, in its row, above its jobs and in Settings', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const OWNER = createHash('sha256').update('sandbox-owner').digest('hex').slice(0, 8);
  const errors = watchErrors(page);
  sandbox = await sandboxAt(500);
  // Its own keychain entry: the key set here must not be seen by any other test.
  host = await launch(newHome(), { MEDIADESK_KEYCHAIN_SERVICE: `MediaDesk-e2e-${process.pid}-${Date.now()}` });
  const dir = mkdtempSync(join(tmpdir(), 'md-queue-live-'));
  await makeImages(dir, 2);
  try {
    // Started on the live service (a second Sandbox) while the queue is paused, then back to the built-in one.
    await desk(host, 'jobs.pause', {});
    await desk(host, 'settings.set', { backend: 'live', baseUrl: sandbox.url });
    await desk(host, 'key.set', { key: 'sandbox-owner' });
    await desk(host, 'batches.start', { tool: 'upscaler-precision', inputs: [dir], params: {} });
    await desk(host, 'settings.set', { backend: 'sandbox' });
    await desk(host, 'jobs.resume', {});
    await page.goto(`${host.url}#queue`);
    await expect(page.getByTestId('job-row')).toHaveCount(2);
    await expect(page.getByTestId('batch-summary')).toHaveText('waiting for the live service');
    await expect(page.getByTestId('batch-waiting')).toHaveText(
      `This batch is waiting for the live service at ${sandbox.url} (API key ${OWNER}), where it was queued: switch back to it to continue, or cancel it.`,
    );
    await expect(page.locator('[data-testid=job-row][data-state=queued]')).toHaveCount(2);
    // Settings, where the switch is made, says the same; switching to that backend lets the work go.
    await page.goto(`${host.url}#settings`);
    await expect(page.getByTestId('backend-waiting')).toHaveText(
      `2 jobs queued on the live service at ${sandbox.url} (API key ${OWNER}) wait until you switch back to it (the Queue lists them).`,
    );
    await page.getByRole('radio', { name: 'Live service' }).check();
    await expect(page.getByTestId('backend-waiting')).toBeHidden();
    await page.goto(`${host.url}#queue`);
    await expect(page.locator('[data-testid=job-row][data-state=done]')).toHaveCount(2);
    await expect(page.getByTestId('batch-waiting')).toBeHidden();

    // Another key on the same server is another account: the work queued with the first waits for it.
    await desk(host, 'jobs.pause', {});
    const more = mkdtempSync(join(tmpdir(), 'md-queue-key-'));
    await makeImages(more, 1);
    // Its own output folder: the same bytes upscaled into the first batch's folder already have a result there.
    await desk(host, 'batches.start', {
      tool: 'upscaler-precision',
      inputs: [more],
      params: {},
      outDir: join(host.home, 'results', 'second key'),
    });
    await desk(host, 'key.set', { key: 'sandbox-admin' });
    await desk(host, 'jobs.resume', {});
    const ADMIN = createHash('sha256').update('sandbox-admin').digest('hex').slice(0, 8);
    await page.goto(`${host.url}#settings`);
    await expect(page.getByTestId('key-fingerprint')).toHaveText(ADMIN);
    await expect(page.getByTestId('backend-waiting')).toHaveText(
      `1 job queued on the live service at ${sandbox.url} (API key ${OWNER}) waits until that key is set again (the Queue lists them).`,
    );
    await page.goto(`${host.url}#queue`);
    await expect(page.getByTestId('batch-summary').first()).toHaveText('waiting for another API key');
    await desk(host, 'key.set', { key: 'sandbox-owner' });
    await expect(page.locator('[data-testid=job-row][data-state=done]')).toHaveCount(1);
  } finally {
    await desk(host, 'key.clear', {}).catch(() => {});
  }
  expect(errors).toEqual([]);
});

test('Retry failed leaves a job that may already be charged alone, canceled or not; the notice says so and offers its own retry', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(120_000);
  host = await launch(newHome(), sandbox.env);
  // A 500 on create may have reached the server: both jobs need the user.
  await setFaults(sandbox.url, { rate500: 1 });
  const dir = mkdtempSync(join(tmpdir(), 'md-attention-'));
  await makeImages(dir, 2);
  await desk(host, 'batches.start', { tool: 'upscaler-precision', inputs: [dir], params: {} });
  await page.goto(`${host.url}#queue`);
  const needs = page.locator('[data-testid=job-row][data-state=needs_attention]');
  await expect(needs).toHaveCount(2);
  await setFaults(sandbox.url, { rate500: 0 });
  await page.getByRole('button', { name: 'Cancel img-00.png' }).click();
  await expect(page.locator('[data-testid=job-row][data-state=canceled]')).toHaveCount(1);
  await expect(page.getByTestId('batch-attention')).toContainText(
    '1 job needs you: its task may already have been created and charged.',
  );

  const creates = () => sandboxPosts(sandbox!.url);
  const sent = await creates();
  await page.getByTestId('batch-retry').click();
  // The canceled job's create may have reached the server too: it is back to needing the user, not
  // sent; the one that needed the user still does.
  await expect(page.locator('[data-testid=job-row][data-state=canceled]')).toHaveCount(0);
  await expect(page.getByTestId('batch-retry')).toBeDisabled();
  await expect(needs).toHaveCount(2);
  await expect(page.getByTestId('batch-attention')).toContainText(
    '2 jobs need you: their tasks may already have been created and charged.',
  );
  await page.getByTestId('job-row').filter({ hasText: 'img-00.png' }).click();
  await expect(page.getByTestId('attention')).toContainText(
    'Canceled after its submission may have reached the server',
  );
  expect(await creates()).toBe(sent);

  // Their own button, which names the charge, does submit them.
  await page.getByTestId('batch-retry-attention').click();
  await expect(needs).toHaveCount(0);
  await expect(page.getByTestId('batch-attention')).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('the header counts the jobs that need you across the queue and leads to their batch', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(120_000);
  host = await launch(newHome(), sandbox.env);
  await desk(host, 'settings.set', { concurrency: 1 });
  // The first batch's creates meet a 500: they may have reached the server, so they need the user.
  await setFaults(sandbox.url, { rate500: 1 });
  const first = mkdtempSync(join(tmpdir(), 'md-needs-'));
  await makeImages(first, 2);
  await desk(host, 'batches.start', { tool: 'upscaler-precision', inputs: [first], params: {} });
  await expect
    .poll(
      async () =>
        ((await desk(host, 'jobs.status', {})) as { counts: Record<string, number> }).counts.needs_attention ?? 0,
    )
    .toBe(2);
  await setFaults(sandbox.url, { rate500: 0 });
  // A later batch is the one the Queue opens on.
  const second = mkdtempSync(join(tmpdir(), 'md-later-'));
  await makeImages(second, 3);
  await desk(host, 'batches.start', { tool: 'upscaler-precision', inputs: [second], params: {} });

  await page.goto(`${host.url}#queue`);
  await expect(page.getByTestId('job-row')).toHaveCount(3);
  await expect(page.getByTestId('queue-needs-count')).toHaveText('2 need you');
  await page.getByTestId('queue-needs-show').click();
  await expect(page.locator('[data-testid=job-row][data-state=needs_attention]')).toHaveCount(2);
  // Shown: the way there is no longer offered.
  await expect(page.getByTestId('queue-needs-show')).toHaveCount(0);

  // Decided: the count goes.
  await page.getByRole('button', { name: 'Cancel img-00.png' }).click();
  await expect(page.getByTestId('queue-needs-count')).toHaveText('1 needs you');
  await page.getByRole('button', { name: 'Cancel sub/img-01.png' }).click();
  await expect(page.getByTestId('queue-needs-count')).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('a create the server refuses for now: the header says the queue waits, the job says why and that nothing was charged', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(200);
  host = await launch(newHome(), sandbox.env);
  // Longer than the client waits out by itself, so the refusal reaches the queue at once.
  await setFaults(sandbox.url, { rate429: 1, retryAfterSec: 100 });
  const dir = mkdtempSync(join(tmpdir(), 'md-429-'));
  await makeImages(dir, 1);
  await desk(host, 'batches.start', { tool: 'upscaler-precision', inputs: [dir], params: {} });
  await page.goto(`${host.url}#queue`);
  const why =
    "Waiting: the server's rate limit was reached (HTTP 429 Too many requests). It is sent again by itself; nothing was charged.";
  await expect(page.getByTestId('job-row').locator('.err')).toHaveText(why, { timeout: 30_000 });
  await expect(page.getByTestId('queue-held-back')).toHaveText(
    'Waiting to submit again: the server is busy or could not be reached',
  );
  await page.getByTestId('job-name').click();
  await expect(page.getByTestId('job-error')).toHaveText(why);
  expect(errors).toEqual([]);
});

test('a service that takes a create and never answers is shown as waiting for it, not as running, in the Studio, the title and the Queue', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(200);
  host = await launch(newHome(), sandbox.env, 0, [], { ownProcess: true });
  await setFaults(sandbox.url, { neverAnswer: ['/v1/ai/'] });
  const dir = join(mkdtempSync(join(tmpdir(), 'md-silent-')), 'shoot');
  await makeImages(dir, 1);
  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  await page.getByTestId('pick-folder').setInputFiles(dir);
  await expect(page.getByTestId('check-summary')).toHaveText('1 image ready');
  await page.getByTestId('start').click();
  // Past NO_ANSWER_MS, well before the client gives up on the create (30 s).
  await expect(page.getByTestId('batch-state')).toHaveText('Waiting for the service', { timeout: 25_000 });
  await expect(page.getByTestId('batch-state-why')).toHaveText(NO_ANSWER);
  await expect(page).toHaveTitle('Waiting for the service 0/1 · MediaDesk');
  await page.getByTestId('nav-queue').click();
  await expect(page.getByTestId('queue-state')).toHaveText('Waiting for the service');
  await expect(page.getByTestId('queue-held-back')).toHaveText(NO_ANSWER[0].toUpperCase() + NO_ANSWER.slice(1));
  await expect(page.getByTestId('batch-summary')).toHaveText('Waiting for the service');
  expect(errors).toEqual([]);
  // A graceful stop would wait out the create the Sandbox never answers (about 20 s): nothing here checks it.
  await host.stop('SIGKILL');
});

test('a queue waiting for the server says so once, with why, however often it retries, and once when it goes on', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  const live = await watchLiveRegions(page);
  sandbox = await sandboxAt(300);
  host = await launch(newHome(), sandbox.env);
  await page.goto(`${host.url}#queue`);
  await expect(page.getByTestId('pause-toggle')).toBeEnabled();
  // Kept: lets the live regions settle empty before what is counted begins.
  await page.waitForTimeout(300);
  // Every create refused, with Retry-After 0: the queue sends it again and again, each retry a
  // change of the job and of the header's counts.
  await setFaults(sandbox.url, { rate429: 1, retryAfterSec: 0 });
  const dir = mkdtempSync(join(tmpdir(), 'md-wait-'));
  await makeImages(dir, 1);
  await desk(host, 'batches.start', { tool: 'upscaler-precision', inputs: [dir], params: {} });
  const waiting =
    "Queue waiting: the server's rate limit was reached. Nothing was charged; the jobs are sent again by themselves.";
  await expect.poll(async () => (await live()).spoke.join(' '), { timeout: 30_000 }).toContain(waiting);
  await expect(page.getByTestId('queue-held-back')).toBeVisible();
  const attempts = async () => (await desk<{ jobs: { attempts: number }[] }>(host, 'jobs.list', {})).jobs[0].attempts;
  await expect.poll(attempts, { timeout: 30_000 }).toBeGreaterThanOrEqual(4);
  await setFaults(sandbox.url, { rate429: 0 });
  await expect(page.getByTestId('batch-count')).toHaveText('1/1', { timeout: 30_000 });
  await expect
    .poll(async () => (await live()).spoke.join(' '))
    .toContain('Queue going on: the server takes jobs again.');
  // Kept: proves nothing more is said after the end; a late sentence would come within 2 s.
  await page.waitForTimeout(2000);
  const log = await live();
  const all = log.spoke.join(' ');
  expect(all.split(waiting).length - 1, all).toBe(1);
  expect(all.split('Queue going on').length - 1, all).toBe(1);
  expect(all.indexOf(waiting)).toBeLessThan(all.indexOf('Queue going on'));
  expect(log.bornFull).toEqual([]);
  expect(errors).toEqual([]);
});

test('a busy queue is said in a few sentences, not job by job: the batch finishing, what each action did, and a failed action as an alert', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  const live = await watchLiveRegions(page);
  sandbox = await sandboxAt(300);
  host = await launch(newHome(), sandbox.env);
  await desk(host, 'settings.set', { concurrency: 2 });
  await page.goto(`${host.url}#queue`);
  await expect(page.getByTestId('pause-toggle')).toBeEnabled();
  // The regions are in the page, empty, before anything is said.
  await expect(page.getByTestId('queue-said')).toBeEmpty();
  // Kept: lets the live regions settle empty before what is counted begins.
  await page.waitForTimeout(300);

  // Eight jobs run through the queue while it is open, two at a time: each changes state three or
  // four times, and the header's counts with it. One sentence says how it ended.
  const dir = mkdtempSync(join(tmpdir(), 'md-busy-'));
  await makeImages(dir, 8);
  await desk(host, 'batches.start', { tool: 'upscaler-precision', inputs: [dir], params: {} });
  await expect(page.getByTestId('batch-count')).toHaveText('8/8', { timeout: 60_000 });
  await expect.poll(async () => (await live()).spoke).toContain('Precision upscaler: batch done, 8 of 8.');
  // Kept: proves nothing more is said after the end; a late sentence would come within 2 s.
  await page.waitForTimeout(2000);
  let log = await live();
  expect(log.spoke, log.spoke.join(' | ')).toEqual(['Precision upscaler: batch done, 8 of 8.']);
  expect(log.bornFull).toEqual([]);

  // The user's own actions: said politely once done.
  await page.getByTestId('pause-toggle').click();
  await expect.poll(async () => (await live()).spoke.at(-1)).toBe('Queue paused.');
  const later = mkdtempSync(join(tmpdir(), 'md-later-'));
  await makeImages(later, 2);
  await desk(host, 'batches.start', {
    tool: 'upscaler-precision',
    inputs: [later],
    params: {},
    outDir: join(host.home, 'results', 'later'),
  });
  await expect(page.getByTestId('job-row')).toHaveCount(2);
  await page.getByRole('button', { name: 'Cancel img-00.png' }).click();
  await expect.poll(async () => (await live()).spoke.at(-1)).toBe('img-00.png: canceled.');
  await page.getByTestId('batch-cancel').click();
  await page.getByTestId('batch-cancel-confirm').click();
  await expect.poll(async () => (await live()).spoke.at(-1)).toBe('Precision upscaler: batch ended, 2 canceled.');
  await page.getByTestId('batch-retry').click();
  await expect.poll(async () => (await live()).spoke.at(-1)).toBe('Precision upscaler: 2 jobs queued again.');

  // An action that fails says why at once, in an alert that was there before. Clicked once the tab's
  // first check of who answers has failed (so the reason is the same however fast the host stops).
  const checked = page.waitForEvent('requestfailed', (r) => r.url().includes(HOST_PROOF_PATH));
  await host.stop();
  await checked;
  await page.getByTestId('pause-toggle').click();
  await expect
    .poll(async () => (await live()).alerted)
    .toContainEqual(expect.stringContaining('cannot reach the MediaDesk host'));
  log = await live();
  expect(log.alertBornFull.filter((t) => !/^The MediaDesk host/.test(t))).toEqual([]);
  expect(errors.filter((e) => !/not answering|cannot reach|closed|ERR_CONNECTION_REFUSED|WebSocket/.test(e))).toEqual(
    [],
  );
});

test("a finished batch's Report says what was sent, made results and charged but failed, and Export CSV downloads it", async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(200, ['--limits', 'service', '--seed', '7']);
  host = await launch(newHome(), sandbox.env);
  const dir = mkdtempSync(join(tmpdir(), 'md-report-'));
  await makeImages(dir, 6);
  hugePng(join(dir, 'huge.png'));
  await setFaults(sandbox.url, { failureRate: 0.5 });
  const started = await desk<{ batch: { id: string } }>(host, 'batches.start', {
    tool: 'upscaler-precision',
    inputs: [dir],
    params: {},
  });
  await page.goto(`${host.url}#queue`);
  await expect(page.getByTestId('job-row')).toHaveCount(7);
  await expect(
    page.locator('[data-testid=job-row][data-state=done], [data-testid=job-row][data-state=failed]'),
  ).toHaveCount(7, { timeout: 30_000 });
  const { jobs } = await desk<{ jobs: JobRecord[] }>(host, 'jobs.list', { batchId: started.batch.id });
  const done = jobs.filter((j) => j.state === 'done').length;
  const failedAfterCreate = jobs.filter((j) => j.state === 'failed' && j.taskId).length;
  expect(done).toBeGreaterThan(0);
  expect(failedAfterCreate).toBeGreaterThan(0);

  await page.getByTestId('batch-report-toggle').click();
  await expect(page.getByTestId('batch-report-toggle')).toHaveAttribute('aria-expanded', 'true');
  // Estimated before Start for the 7 queued at the price table's 5 each; the huge one was refused unpaid.
  const each = 5;
  const credits = 6 * each;
  await expect(page.getByTestId('batch-report-summary')).toHaveText(
    `Sent 6 · ${done} made results · ${failedAfterCreate} charged but failed · 1 refused, not charged · estimate ${7 * each} credits · charged about ${credits} credits`,
  );
  await expect(page.getByTestId('batch-report-credits')).toContainText(
    `Charged about ${credits} credits: 6 charged creates at ${each} each`,
  );

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByTestId('batch-report-export').click(),
  ]);
  expect(download.suggestedFilename()).toMatch(/^Precision upscaler report \d{4}-\d{2}-\d{2} \d{2}-\d{2}-\d{2}\.csv$/);
  await expect(page.getByTestId('batch-report-status')).toHaveText(
    `Downloaded ${download.suggestedFilename()} (7 rows): find it in your browser's downloads.`,
  );
  const rows = readFileSync(await download.path(), 'utf8')
    .trimEnd()
    .split('\r\n');
  expect(rows[0]).toBe('input,state,task_id,charged,charged_creates,estimate_credits,actual_credits,outputs,error');
  expect(rows).toHaveLength(8);
  expect(rows.filter((r) => /,failed,[0-9a-f-]{36},yes,1,5,5,,/.test(r))).toHaveLength(failedAfterCreate);
  expect(rows.filter((r) => r.startsWith(`${join(dir, 'huge.png')},failed,,no,0,5,0,,`))).toHaveLength(1);
  expect(errors).toEqual([]);
});

test("a job's details name its input, tool and state; its ids are labelled, for support, and out of the way", async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(200);
  host = await launch(newHome(), sandbox.env);
  const dir = mkdtempSync(join(tmpdir(), 'md-detail-'));
  await makeImages(dir, 1);
  await desk(host, 'batches.start', { tool: 'context-t2i', params: { prompt: 'a lighthouse at dusk' } });
  await desk(host, 'batches.start', { tool: 'upscaler-precision', inputs: [dir], params: { scale_factor: 4 } });
  await page.goto(`${host.url}#queue`);
  const done = page.locator('[data-testid=job-row][data-state=done]');
  await expect(done).toHaveCount(1, { timeout: 30_000 });
  await done.getByTestId('job-name').click();
  const detail = page.getByTestId('job-detail');
  await expect(detail.getByTestId('job-detail-title')).toHaveText('img-00.png · Done');
  await expect(detail.getByTestId('job-detail-tool')).toHaveText('Precision upscaler');
  // Settings by their labels in the Studio, the key as a tooltip.
  await expect(detail.locator('dt[title=scale_factor]')).toHaveText('Scale factor');
  // The task's id (a UUID) is not in the reading: it waits, labelled, behind "For support".
  const taskId = detail.getByTestId('job-task-id');
  await expect(taskId).toBeHidden();
  await detail.getByText('For support').click();
  await expect(taskId).toHaveText(/^[0-9a-f-]{36}$/);

  // A job without an input file is named by its prompt.
  await page
    .getByTestId('batch-row')
    .filter({ hasText: getTool('context-t2i').title })
    .click();
  await expect(done).toHaveCount(1, { timeout: 30_000 });
  await done.getByTestId('job-name').click();
  await expect(detail.getByTestId('job-detail-title')).toHaveText('“a lighthouse at dusk” · Done');
  expect(errors).toEqual([]);
});
