// Workflow apps in the Apps screen: the form, the cost asked before a run, runs, retries and results.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { expect, test, type Launch, type SandboxAt } from './fixtures.ts';
import { holdAnswers, newHome, watchErrors, watchLiveRegions, type HostHandle } from './host.ts';
import {
  appRunPosts,
  desk,
  setAppCost,
  setFaults,
  shot as shotOne,
  shotInBothThemes as shot,
  type SandboxProcess,
} from './studio-helpers.ts';

let launch: Launch;
let sandboxAt: SandboxAt;
// The helpers below start hosts and Sandboxes through the test's fixtures.
test.beforeEach(({ launch: l, sandboxAt: s }) => {
  launch = l;
  sandboxAt = s;
});

let host: HostHandle;
let sandbox: SandboxProcess | undefined;

/** A host on the Sandbox, the Apps screen open on the jingle maker with its cost shown. */
async function openJingleMaker(page: Page) {
  host = await launch(newHome());
  await page.goto(`${host.url}#apps`);
  await page.getByTestId('app-jM4nX8sc').click();
  await expect(page.getByTestId('app-cost')).toContainText('8 credits');
}

/** A host on a Sandbox of the test's own, whose controls `setup` may turn first, the Apps screen open. */
async function openAppsOnOwnSandbox(page: Page, setup?: (sandboxUrl: string) => Promise<void>) {
  sandbox = await sandboxAt();
  await setup?.(sandbox.url);
  host = await launch(newHome(), sandbox.env);
  await page.goto(`${host.url}#apps`);
  return sandbox.url;
}

test('workflow apps: a form from the app inputs, the cost confirmed, the run to its results', async ({ page }) => {
  const errors = watchErrors(page);
  await openJingleMaker(page);
  // Run… on an incomplete form: no cost to confirm, the input marked, until it is filled.
  await page.getByTestId('app-run').click();
  await expect(page.getByTestId('app-message')).toHaveText(
    /^Check the (highlighted input|\d+ highlighted inputs) first\.$/,
  );
  await expect(page.getByTestId('app-confirm')).toBeHidden();
  await expect(page.getByTestId('input-brief')).toHaveAttribute('aria-invalid', 'true');
  await page.getByTestId('input-brief').fill('A jingle for a coffee brand');
  await expect(page.getByTestId('input-brief')).not.toHaveAttribute('aria-invalid', 'true');
  // The select's choices and the number's bounds come from the inputs' `config`.
  await expect(page.getByTestId('input-mood').locator('option')).toHaveText([
    '(default: upbeat)',
    'upbeat',
    'calm',
    'epic',
  ]);
  await expect(page.getByTestId('input-length_seconds')).toHaveAttribute('min', '10');
  await expect(page.getByTestId('input-length_seconds')).toHaveAttribute('max', '60');
  await page.getByTestId('input-mood').selectOption('calm');
  await page.getByTestId('input-length_seconds').fill('20');
  await page.getByTestId('app-run').click();
  await page.getByTestId('app-confirm').click();
  await expect(page.getByTestId('app-run-row').first()).toHaveAttribute('data-state', 'done', { timeout: 30_000 });
  // "Run queued" does not outlive the run: it says how the run ended.
  await expect(page.getByTestId('app-message')).toHaveText('Run done: its result is in the runs below.');
  // Its result, from the run's `result.audios`, downloaded as an MP3.
  await expect(page.getByTestId('app-run-row').first().getByTestId('app-run-output')).toHaveAccessibleName(
    /^Open A-jingle-for-a-coffee-brand_jingle-maker(-\d+)?\.mp3$/,
  );
  await page.getByTestId('app-pS7kQ2xa').click();
  await expect(page.getByTestId('drop-product_image')).toBeVisible();
  await shot(page, 'apps');
  expect(errors).toEqual([]);
});

test('workflow apps: the cost dialog takes focus, Escape cancels, and focus comes back to Run…', async ({ page }) => {
  const errors = watchErrors(page);
  await openJingleMaker(page);
  // An incomplete form sends the keyboard to the first input that needs fixing.
  await page.getByTestId('app-run').click();
  await expect(page.getByTestId('input-brief')).toBeFocused();
  await page.getByTestId('input-brief').fill('A jingle for a coffee brand');
  await page.getByTestId('input-mood').selectOption('calm');
  await page.getByTestId('input-length_seconds').fill('20');
  const dialog = page.getByRole('dialog', { name: /Run .* for 8 credits/ });
  await page.getByTestId('app-run').click();
  await expect(dialog).toBeVisible();
  await expect(page.getByTestId('app-confirm-cancel')).toBeFocused();
  // Modal: the page behind it is out of reach (Shift+Tab goes to the dialog's other button).
  await page.keyboard.press('Shift+Tab');
  await expect(page.getByTestId('app-confirm')).toBeFocused();
  await page.keyboard.press('Tab');
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId('app-run')).toBeFocused();
  await page.getByTestId('app-run').press('Enter');
  await expect(dialog).toBeVisible();
  await page.getByTestId('app-confirm-cancel').click();
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId('app-run')).toBeFocused();
  await expect(page.getByTestId('app-run-row')).toHaveCount(0);
  // Opened by a click that leaves focus where it was (Safari's way, in the web host): Escape still
  // gives it to Run…, not back to the input the browser would return it to.
  await page.getByTestId('input-brief').focus();
  await page.getByTestId('app-run').dispatchEvent('click');
  await expect(dialog).toBeVisible();
  await expect(page.getByTestId('app-confirm-cancel')).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId('app-run')).toBeFocused();
  await expect(page.getByTestId('app-run-row')).toHaveCount(0);
  await page.getByTestId('app-run').click();
  await page.getByTestId('app-confirm').click();
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId('app-run')).toBeFocused();
  await expect(page.getByTestId('app-message')).toHaveText('Run queued: 8 credits.');
  expect(errors).toEqual([]);
});

test('workflow apps: a pasted brief over the limit is kept whole and refused before the cost is asked; each error is read with its input', async ({
  page,
}) => {
  const errors = watchErrors(page);
  await openJingleMaker(page);
  const brief = page.getByTestId('input-brief');
  await page.getByTestId('app-run').click();
  await expect(brief).toBeFocused();
  await expect(brief).toHaveAccessibleDescription(/^Brief is required/);
  // 1001 characters where 1000 are allowed: nothing is cut without a word, the count says so.
  const long = 'x'.repeat(1001);
  await brief.fill(long);
  await expect(brief).toHaveValue(long);
  await expect(page.getByTestId('count-brief')).toHaveText('1001 of 1000 characters');
  await page.getByTestId('input-length_seconds').fill('5');
  await page.getByTestId('app-run').click();
  await expect(page.getByTestId('app-message')).toHaveText('Check the 2 highlighted inputs first.');
  await expect(page.getByTestId('app-confirm-dialog')).toBeHidden();
  await expect(brief).toHaveAccessibleDescription(/^Brief must be at most 1000 characters/);
  await expect(page.getByTestId('input-length_seconds')).toHaveAccessibleDescription(
    /^Length \(s\) must be at least 10 10 to 60$/,
  );
  await brief.fill('x'.repeat(1000));
  await page.getByTestId('input-length_seconds').fill('10');
  await page.getByTestId('app-run').click();
  await expect(page.getByTestId('app-confirm-dialog')).toBeVisible();
  expect(errors).toEqual([]);
});

test('workflow apps: the cost dialog asks for the cost the server has now; repriced after it opened, confirming sends nothing and asks again', async ({
  page,
}) => {
  const errors = watchErrors(page);
  const sandboxUrl = await openAppsOnOwnSandbox(page);
  await page.getByTestId('app-jM4nX8sc').click();
  await expect(page.getByTestId('app-cost')).toHaveText('Cost per run: 8 credits');
  await page.getByTestId('input-brief').fill('A jingle for a coffee brand');
  // Repriced while the form was open: the dialog has the figure read as it opens, and says it changed.
  await setAppCost(sandboxUrl, 'jM4nX8sc', 20);
  await page.getByTestId('app-run').click();
  await expect(page.getByRole('dialog', { name: 'Run Jingle maker for 20 credits?' })).toBeVisible();
  await expect(page.getByTestId('app-cost-changed')).toHaveText(
    'The cost changed: it was 8 credits, the server now says 20 credits.',
  );
  await expect(page.getByRole('dialog')).toHaveAccessibleDescription(
    'The cost changed: it was 8 credits, the server now says 20 credits.',
  );
  await expect(page.getByTestId('app-confirm')).toHaveText('Run for 20 credits');
  await expect(page.getByTestId('app-cost')).toHaveText('Cost per run: 20 credits');
  // Before Run: the price as now read; the service publishes no daily cap for an app, so none is said.
  await expect(page.getByTestId('cost-estimate')).toHaveText(
    "Sends 1 paid run · 20 credits (the app's price: 20 credits a run)",
  );
  // The service's list says no output kind: the cost alone.
  await expect(page.getByTestId('app-jM4nX8sc').locator('.muted')).toHaveText('20 credits');
  // Repriced again while the dialog is open: the 20 confirmed is not what the server charges, so
  // nothing is queued or sent, and 25 is asked for.
  await setAppCost(sandboxUrl, 'jM4nX8sc', 25);
  await page.getByTestId('app-confirm').click();
  await expect(page.getByRole('dialog', { name: 'Run Jingle maker for 25 credits?' })).toBeVisible();
  await expect(page.getByTestId('app-cost-changed')).toHaveText(
    'The cost changed: it was 20 credits, the server now says 25 credits.',
  );
  await expect(page.getByTestId('app-confirm-cancel')).toBeFocused();
  await expect(page.getByTestId('app-run-row')).toHaveCount(0);
  expect(await appRunPosts(sandboxUrl)).toBe(0);
  await page.getByTestId('app-confirm').click();
  await expect(page.getByTestId('app-message')).toHaveText('Run queued: 25 credits.');
  await expect(page.getByTestId('app-run-row')).toHaveCount(1);
  expect(
    (await desk<{ runs: { cost: number | null }[] }>(host, 'apps.runs', { limit: 5 })).runs.map((r) => r.cost),
  ).toEqual([25]);
  expect(errors).toEqual([]);
});

test('workflow apps: an app served without a cost says so, never "null", and still asks before it runs', async ({
  page,
}) => {
  const errors = watchErrors(page);
  await openAppsOnOwnSandbox(page, (url) => setAppCost(url, 'jM4nX8sc', null));
  await expect(page.getByTestId('app-jM4nX8sc').locator('.muted')).toHaveText('cost unknown');
  await page.getByTestId('app-jM4nX8sc').click();
  await expect(page.getByTestId('app-cost')).toHaveText('Cost unknown: the server will charge what this app costs.');
  await page.getByTestId('input-brief').fill('A jingle for a coffee brand');
  await page.getByTestId('app-run').click();
  const dialog = page.getByRole('dialog', {
    name: 'Run Jingle maker? Cost unknown: the server will charge what this app costs.',
  });
  await expect(dialog).toBeVisible();
  await expect(page.getByTestId('app-confirm')).toHaveText('Run (cost unknown)');
  await expect(dialog).not.toContainText('null');
  await expect(page.getByTestId('app-confirm-cancel')).toBeFocused();
  await expect(page.getByTestId('app-run-row')).toHaveCount(0);
  await page.getByTestId('app-confirm').click();
  await expect(page.getByTestId('app-message')).toHaveText('Run queued: cost unknown.');
  await expect(page.getByTestId('app-run-row')).toHaveCount(1);
  expect(errors).toEqual([]);
});

test('workflow apps: an app that cannot be loaded says so with a retry; the form of the app before does not stand in for it', async ({
  page,
}) => {
  const errors = watchErrors(page);
  const sandboxUrl = await openAppsOnOwnSandbox(page);
  await expect(page.getByRole('heading', { name: 'Product shot studio' })).toBeVisible();
  // Every answer a 503 (Retry-After 0, so the client's own retries give up quickly).
  await setFaults(sandboxUrl, { rate503: 1, retryAfterSec: 0 });
  await page.getByTestId('app-jM4nX8sc').click();
  const failure = page.getByTestId('app-load-error');
  await expect(failure).toContainText('Jingle maker could not be loaded: ', { timeout: 30_000 });
  await expect(failure).toContainText('Service Unavailable');
  await expect(page.getByRole('heading', { name: 'Product shot studio' })).toHaveCount(0);
  await expect(page.getByTestId('app-jM4nX8sc')).toHaveAttribute('aria-current', 'true');
  await setFaults(sandboxUrl, { rate503: 0 });
  await page.getByTestId('app-load-retry').click();
  await expect(page.getByRole('heading', { name: 'Jingle maker' })).toBeVisible();
  await expect(failure).toHaveCount(0);
  await expect(page.getByTestId('input-brief')).toBeVisible();
  expect(errors).toEqual([]);
});

test("workflow apps: while an app's form loads, a status says so; then the form takes its place", async ({ page }) => {
  const errors = watchErrors(page);
  // Every app definition answered 3 s late, as from a slow server.
  await openAppsOnOwnSandbox(page, (url) => setFaults(url, { appDetailDelayMs: 3000 }));
  // The first app opens with the screen: its name said in a status (announced), no form yet.
  const loadingFirst = page.getByRole('status').filter({ hasText: 'Loading Product shot studio…' });
  await expect(loadingFirst).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Product shot studio' })).toHaveCount(0);
  await expect(page.getByRole('heading', { name: 'Product shot studio' })).toBeVisible();
  await expect(loadingFirst).toHaveCount(0);
  await expect(page.getByTestId('app-loading')).toHaveCount(0);
  // Another app clicked: its own loading status, and the form before does not stand in for it.
  await page.getByTestId('app-jM4nX8sc').click();
  const loadingNext = page.getByRole('status').filter({ hasText: 'Loading Jingle maker…' });
  await expect(loadingNext).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Product shot studio' })).toHaveCount(0);
  await expect(page.getByRole('heading', { name: 'Jingle maker' })).toBeVisible();
  await expect(page.getByTestId('input-brief')).toBeVisible();
  await expect(loadingNext).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('loading statuses of Apps, Team analytics and Recent creations are announced: each status is in the page, empty, before its text comes', async ({
  page,
}) => {
  const errors = watchErrors(page);
  const live = await watchLiveRegions(page);
  const loadingSaid = async () => (await live()).bornFull.filter((t) => /^Loading/.test(t));
  // Team analytics' and Recent creations' answers are held back later, to see them load.
  let holding = true;
  const held = await holdAnswers(page, (cmd) => holding && (cmd === 'usage.query' || cmd === 'creations.list'));
  // Every app definition answered 3 s late: the first app loads as the screen opens.
  await openAppsOnOwnSandbox(page, (url) => setFaults(url, { appDetailDelayMs: 3000 }));
  await expect(page.getByRole('status').filter({ hasText: 'Loading Product shot studio…' })).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Product shot studio' })).toBeVisible();
  // Said into a status already in the page, not by one that appeared saying it.
  expect(await loadingSaid()).toEqual([]);
  expect((await live()).spoke).toContain('Loading Product shot studio…');
  const status = page.getByTestId('app-status');
  // Loaded: the same region stays, empty and out of sight, for the next load to speak into.
  await expect(status).toBeEmpty();
  await expect(status).toHaveAttribute('role', 'status');
  await status.evaluate((el) => (el.dataset.before = 'yes'));
  await page.getByTestId('app-jM4nX8sc').click();
  await expect(page.locator('[data-before="yes"]')).toHaveText('Loading Jingle maker…');
  await expect(page.getByRole('heading', { name: 'Jingle maker' })).toBeVisible();
  expect((await live()).spoke).toContain('Loading Jingle maker…');

  // Team analytics and Recent creations, their answers held back: the status says it loads.
  await page.getByTestId('nav-analytics').click();
  await expect(page.getByTestId('usage-status')).toHaveText('Loading credit usage…');
  const release = async () => {
    await expect.poll(() => held.length).toBeGreaterThan(0);
    holding = false;
    for (const go of held.splice(0)) go();
  };
  await release();
  await expect(page.getByTestId('usage-chart')).toBeVisible();
  await expect(page.getByTestId('usage-status')).toBeEmpty();
  holding = true;
  await page.getByTestId('nav-creations').click();
  await expect(page.getByTestId('creations-status')).toHaveText('Loading creations…');
  await release();
  await expect(page.getByTestId('creations-status')).toBeEmpty();
  expect((await live()).spoke).toEqual(expect.arrayContaining(['Loading credit usage…', 'Loading creations…']));
  // None of them appeared already saying it, where screen readers would often keep quiet.
  expect(await loadingSaid()).toEqual([]);
  expect(errors).toEqual([]);
});

test('workflow apps: a late answer for the app clicked before does not replace the form of the app clicked last', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  host = await launch(newHome());
  // The page's commands go over the host's WebSocket: the answer for the first app's definition
  // (Product shot studio, opened when the screen loads) is held back until the test lets it go.
  const held = await holdAnswers(page, (cmd, payload) => cmd === 'apps.get' && payload.id === 'pS7kQ2xa');
  await page.goto(`${host.url}#apps`);
  await expect.poll(() => held.length).toBe(1);
  await page.getByTestId('app-jM4nX8sc').click();
  await expect(page.getByRole('heading', { name: 'Jingle maker' })).toBeVisible();
  held.shift()!();
  // Answers arrive in order on the socket: once the check asked for after the release is
  // answered, the late definition has been read too.
  await page.getByTestId('input-brief').fill('A jingle for a coffee brand');
  await page.getByTestId('app-run').click();
  await expect(page.getByRole('dialog', { name: 'Run Jingle maker for 8 credits?' })).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Jingle maker' })).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Product shot studio' })).toHaveCount(0);
  await expect(page.getByTestId('app-jM4nX8sc')).toHaveAttribute('aria-current', 'true');
  expect(errors).toEqual([]);
});

test('workflow apps: a creation input naming a missing file is refused before the cost is asked, not after', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  const home = newHome();
  host = await launch(home);
  await page.goto(`${host.url}#apps`);
  await expect(page.getByRole('heading', { name: 'Product shot studio' })).toBeVisible();
  const photo = join(home, 'product.png');
  await page.getByTestId('input-product_image').fill(photo);
  await page.getByTestId('input-scene').fill('A kitchen table at dawn');
  await page.getByTestId('app-run').click();
  await expect(page.getByTestId('error-product_image')).toHaveText('Product photo names a file that does not exist');
  await expect(page.getByTestId('app-message')).toHaveText(`product_image names a file that does not exist: ${photo}`);
  await expect(page.getByTestId('input-product_image')).toBeFocused();
  await expect(page.getByTestId('app-confirm-dialog')).toBeHidden();
  // The file is there now: the cost is the next and last step, and the old error is gone.
  writeFileSync(
    photo,
    Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
      'base64',
    ),
  );
  await page.getByTestId('app-run').click();
  await expect(page.getByRole('dialog', { name: 'Run Product shot studio for 12 credits?' })).toBeVisible();
  await expect(page.getByTestId('error-product_image')).toHaveCount(0);
  await expect(page.getByTestId('app-run-row')).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('workflow apps: the Business-plan key is refused with a plain message', async ({ page, launch }) => {
  const errors = watchErrors(page);
  const home = newHome();
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ sandboxKey: 'sandbox-business' }));
  host = await launch(home);
  await page.goto(`${host.url}#apps`);
  await expect(page.getByTestId('apps-error')).toContainText('Enterprise');
  await shotOne(page, 'apps-business');
  expect(errors).toEqual([]);
});

test('workflow apps: retrying a failed run sends it anew only after its cost is confirmed again', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(100);
  host = await launch(newHome(), sandbox.env);
  await setFaults(sandbox.url, { failureRate: 1 });
  await desk(host, 'apps.run', {
    appId: 'jM4nX8sc',
    confirmedCost: 8,
    inputs: { brief: 'A jingle for a coffee brand' },
  });
  await page.goto(`${host.url}#apps`);
  const row = page.getByTestId('app-run-row');
  await expect(row).toHaveAttribute('data-state', 'failed', { timeout: 30_000 });
  await setFaults(sandbox.url, { failureRate: 0 });
  const posts = () => appRunPosts(sandbox!.url);
  const sent = await posts();

  // The cost asked again; Cancel holds the focus, Escape sends nothing and gives the focus back.
  const retry = row.getByTestId('app-run-retry');
  await retry.click();
  const dialog = page.getByRole('dialog', { name: 'Send Jingle maker again as a new run for 8 credits?' });
  await expect(dialog).toBeVisible();
  await expect(page.getByTestId('app-retry-cancel')).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await expect(retry).toBeFocused();
  await expect(row).toHaveAttribute('data-state', 'failed');
  expect(await posts()).toBe(sent);

  await retry.click();
  await page.getByTestId('app-retry-confirm').click();
  await expect(row).toHaveAttribute('data-state', 'done', { timeout: 30_000 });
  expect(await posts()).toBe(sent + 1);
  expect(errors).toEqual([]);
});

test('workflow apps: retrying a failed run of an app served without a cost asks with "Cost unknown", never "null", before it sends it anew', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(100);
  await setAppCost(sandbox.url, 'jM4nX8sc', null);
  host = await launch(newHome(), sandbox.env);
  await setFaults(sandbox.url, { failureRate: 1 });
  await desk(host, 'apps.run', {
    appId: 'jM4nX8sc',
    confirmedCost: null,
    inputs: { brief: 'A jingle for a coffee brand' },
  });
  await page.goto(`${host.url}#apps`);
  const row = page.getByTestId('app-run-row');
  await expect(row).toHaveAttribute('data-state', 'failed', { timeout: 30_000 });
  await setFaults(sandbox.url, { failureRate: 0 });
  const sent = await appRunPosts(sandbox.url);

  await row.getByTestId('app-run-retry').click();
  const dialog = page.getByRole('dialog', {
    name: 'Send Jingle maker again as a new run? Cost unknown: the server will charge what this app costs.',
  });
  await expect(dialog).toBeVisible();
  await expect(page.getByTestId('app-retry-confirm')).toHaveText('Send again (cost unknown)');
  await expect(dialog).not.toContainText('null');
  await expect(page.getByTestId('app-retry-cancel')).toBeFocused();
  expect(await appRunPosts(sandbox.url)).toBe(sent);

  await page.getByTestId('app-retry-confirm').click();
  await expect(row).toHaveAttribute('data-state', 'done', { timeout: 30_000 });
  expect(await appRunPosts(sandbox.url)).toBe(sent + 1);
  expect(errors).toEqual([]);
});

test('workflow apps: cancelling a run the server already has says it may still be charged; each Cancel names its run', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  // Long enough that the run is still going on the server when it is canceled.
  sandbox = await sandboxAt(60_000);
  host = await launch(newHome(), sandbox.env);
  for (const brief of ['A jingle for a coffee brand', 'A jingle for a tea brand'])
    await desk(host, 'apps.run', { appId: 'jM4nX8sc', confirmedCost: 8, inputs: { brief } });
  await page.goto(`${host.url}#apps`);
  await expect(page.locator('[data-testid=app-run-row][data-state=running]')).toHaveCount(2, { timeout: 30_000 });
  // Two rows, two Cancel buttons a screen reader tells apart, by the run id each row shows.
  const names = await page
    .getByTestId('app-run-cancel')
    .evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));
  expect(names).toHaveLength(2);
  expect(new Set(names).size).toBe(2);
  for (const n of names) {
    const id = /^Cancel Jingle maker run ([0-9a-z-]{8})$/.exec(n ?? '')?.[1];
    expect(id, n ?? '').toBeDefined();
    await expect(page.getByTestId('app-run-row').filter({ hasText: `run ${id}` })).toHaveCount(1);
  }
  await page.getByTestId('app-run-cancel').first().click();
  await expect(page.getByTestId('app-runs-note')).toHaveText(
    'Jingle maker canceled: it had already been submitted, so the server may still charge it.',
  );
  await expect(page.locator('[data-testid=app-run-row][data-state=canceled]')).toHaveCount(1);
  expect(errors).toEqual([]);
});

test('workflow apps: a picture result opens from the keyboard, and a result that cannot be opened says why', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  host = await launch(newHome());
  const png =
    'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
  await desk(host, 'apps.run', {
    appId: 'pS7kQ2xa',
    confirmedCost: 12,
    inputs: { product_image: png, scene: 'A kitchen table at dawn' },
  });
  await page.goto(`${host.url}#apps`);
  await expect(page.getByTestId('app-run-row')).toHaveAttribute('data-state', 'done', { timeout: 30_000 });
  const { runs } = await desk<{ runs: { outputs: string[] }[] }>(host, 'apps.runs', { limit: 1 });
  const file = runs[0]!.outputs[0]!;
  const name = file.split(/[\\/]/).pop()!;
  const open = page.getByRole('button', { name: `Open ${name}`, exact: true });
  await expect(open.locator('img')).toBeVisible();
  // Gone from disk since: opening it says so instead of nothing happening.
  rmSync(file);
  await open.focus();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('app-runs-error')).toContainText(`${name} does not exist`);
  expect(errors).toEqual([]);
});

test('what a workflow app run came to is said: queued and its end politely, a refused Run… and a failed cost check as alerts, in regions already in the page', async ({
  page,
}) => {
  const errors = watchErrors(page);
  const live = await watchLiveRegions(page);
  const sandboxUrl = await openAppsOnOwnSandbox(page);
  await page.getByTestId('app-jM4nX8sc').click();
  await expect(page.getByTestId('app-cost')).toHaveText('Cost per run: 8 credits');
  const said = async () => (await live()).spoke.join(' ');
  const alerted = async () => (await live()).alerted;

  // Run… on an empty form, twice: refused, and said each time.
  await page.getByTestId('app-run').click();
  await expect
    .poll(alerted)
    .toEqual([expect.stringMatching(/^Check the (highlighted input|\d+ highlighted inputs) first\.$/)]);
  await page.getByTestId('app-run').click();
  await expect.poll(async () => (await alerted()).length).toBe(2);

  // Queued, then done: two sentences, none for the states on the way.
  await page.getByTestId('input-brief').fill('A jingle for a coffee brand');
  await page.getByTestId('app-run').click();
  await page.getByTestId('app-confirm').click();
  await expect.poll(said).toContain('Run queued: 8 credits.');
  await expect(page.getByTestId('app-run-row')).toHaveAttribute('data-state', 'done', { timeout: 30_000 });
  await expect.poll(said).toContain('Jingle maker run: done.');

  // The cost cannot be read before the dialog: an alert, and no dialog.
  await setFaults(sandboxUrl, { rate503: 1 });
  await page.getByTestId('app-run').click();
  await expect.poll(async () => (await alerted()).join(' '), { timeout: 30_000 }).toContain('Service Unavailable');
  await expect(page.getByTestId('app-confirm-dialog')).toBeHidden();

  // A run the server fails: its end said with why.
  await setFaults(sandboxUrl, { rate503: 0, failureRate: 1 });
  await page.getByTestId('app-run').click();
  await page.getByTestId('app-confirm').click();
  await expect(page.locator('[data-testid=app-run-row][data-state=failed]')).toHaveCount(1, { timeout: 30_000 });
  await expect.poll(said).toMatch(/Jingle maker run: failed: .+\.$/);
  // Kept: proves nothing more is said after the end; a late sentence would come within 2 s.
  await page.waitForTimeout(2000);
  const log = await live();
  expect(log.spoke.join(' '), log.spoke.join(' | ')).not.toMatch(/running|submitting|downloading/);
  expect(log.bornFull).toEqual([]);
  expect(log.alertBornFull).toEqual([]);
  // The runs table changes all the time: nothing in it is live.
  await expect(page.getByTestId('app-runs').locator('[role=status], [role=alert], [aria-live]')).toHaveCount(0);
  expect(errors).toEqual([]);
});
