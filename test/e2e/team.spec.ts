// Team analytics and recent creations: charts, breakdowns and exports in UTC days, creations reused as inputs.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from './fixtures.ts';
import { makeOneCreation, newHome, watchErrors, watchLiveRegions, type HostHandle } from './host.ts';
import { desk, setFaults, shotInBothThemes as shot } from './studio-helpers.ts';

/** A file in place of the host's hand-over folder, so exports fail; retried while the host may still be clearing it. */
const blockHandOver = (folder: string) =>
  expect(() => {
    rmSync(folder, { recursive: true, force: true });
    writeFileSync(folder, 'not a folder');
  }).toPass();

let host: HostHandle;

test('team analytics: chart, budget, breakdown and tables', async ({ page, launch }) => {
  const errors = watchErrors(page);
  host = await launch(newHome());
  await page.goto(`${host.url}#analytics`);
  await expect(page.getByTestId('usage-budget')).toContainText('of 100 credit-usage requests left');
  await expect(page.getByTestId('usage-chart').locator('canvas')).toBeVisible();
  await expect(page.getByTestId('breakdown').locator('li').first()).toBeVisible();
  await expect(page.getByTestId('members-table')).toContainText('owner@sandbox.test');
  // Virtualized tables still say what they hold and how many rows there are, in view or not.
  const members = page.getByRole('table', { name: 'Members' });
  const heading = await page.getByRole('heading', { name: /^Members \(\d+\)$/ }).innerText();
  await expect(members).toHaveAttribute('aria-rowcount', String(Number(heading.replace(/\D/g, '')) + 1));
  await expect(members.getByRole('columnheader')).toHaveText(['Email', 'Role', 'Status']);
  await expect(page.getByRole('button', { name: 'Export API keys as CSV' })).toBeVisible();
  // An invalid range keeps the previous answer on screen only as stale, never as the new one's.
  const shown = await page.getByTestId('usage-range').innerText();
  const from = await page.getByLabel('From (UTC day)', { exact: true }).inputValue();
  await page.getByLabel('From (UTC day)', { exact: true }).fill('2099-01-01');
  await page.getByTestId('usage-load').click();
  await expect(page.getByTestId('usage-error')).toContainText('from must not be after to');
  await expect(page.getByTestId('usage-range')).toHaveCount(0);
  await expect(page.getByTestId('usage-stale')).toHaveText(
    `Not updated: the chart and breakdown below still show ${shown}, from the previous query.`,
  );
  await expect(page.getByTestId('usage-results')).toHaveAttribute('data-stale', 'true');
  // The same range again comes from the local cache: the budget below is not spent on it.
  await page.getByLabel('From (UTC day)', { exact: true }).fill(from);
  await page.getByTestId('usage-load').click();
  await expect(page.getByTestId('usage-stale')).toHaveCount(0);
  await expect(page.getByTestId('usage-range')).toHaveText(shown);
  await expect(page.getByTestId('usage-results')).not.toHaveAttribute('data-stale', 'true');
  await page.getByTestId('granularity').selectOption('week');
  await page.getByTestId('usage-load').click();
  await expect(page.getByTestId('usage-budget')).toContainText('98 of 100');
  await page.getByTestId('usage-load').click();
  await expect(page.getByTestId('usage-budget')).toContainText('local cache');
  await expect(page.getByTestId('usage-budget')).toContainText('98 of 100');
  await shot(page, 'analytics');
  expect(errors).toEqual([]);
});

test('team analytics: the usage CSV marks the weeks the From/To range cuts, as the chart does', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  host = await launch(newHome());
  await page.goto(`${host.url}#analytics`);
  await expect(page.getByTestId('usage-range')).toBeVisible();
  // 2025-01-01 is a Wednesday and 2025-01-31 a Friday: the first and last weeks count only some of their days.
  await page.getByTestId('granularity').selectOption('week');
  await page.getByLabel('From (UTC day)', { exact: true }).fill('2025-01-01');
  await page.getByLabel('To (UTC day)', { exact: true }).fill('2025-01-31');
  await page.getByTestId('usage-load').click();
  await expect(page.getByTestId('usage-range')).toHaveText('Jan 1, 2025 to Jan 31, 2025');
  // In the browser the CSV is a download: its content is what is checked.
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-usage').click()]);
  expect(download.suggestedFilename()).toBe('credit-usage-week-2025-01-01_2025-01-31.csv');
  await expect(page.getByTestId('usage-note')).toHaveText(
    /^Downloaded credit-usage-week-2025-01-01_2025-01-31\.csv \(\d+ rows\): find it in your browser's downloads\.$/,
  );
  const [header, ...rows] = readFileSync(await download.path(), 'utf8')
    .trim()
    .split('\r\n');
  expect(header).toBe('date,tool,uses,credits,days_from,days_to,partial');
  const cover = new Map(rows.map((r) => [r.split(',')[0], r.split(',').slice(-3).join(',')]));
  expect([...cover]).toEqual([
    ['2024-12-30', '2025-01-01,2025-01-05,true'],
    ['2025-01-06', '2025-01-06,2025-01-12,false'],
    ['2025-01-13', '2025-01-13,2025-01-19,false'],
    ['2025-01-20', '2025-01-20,2025-01-26,false'],
    ['2025-01-27', '2025-01-27,2025-01-31,true'],
  ]);
  expect(errors).toEqual([]);
});

test('team analytics: left open past UTC midnight, the UTC note and the From/To the user did not set move to the new day', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  host = await launch(newHome());
  await page.clock.install({ time: new Date('2026-03-10T23:58:00Z') });
  await page.goto(`${host.url}#analytics`);
  const note = page.getByTestId('utc-days');
  const from = page.getByLabel('From (UTC day)', { exact: true });
  const to = page.getByLabel('To (UTC day)', { exact: true });
  await expect(note).toContainText('today in UTC, Mar 10, 2026, began at');
  await expect(from).toHaveValue('2026-02-09');
  await expect(to).toHaveValue('2026-03-10');
  await expect(page.getByTestId('usage-range')).toHaveText('Feb 9, 2026 to Mar 10, 2026');

  await page.clock.fastForward('03:00');
  await expect(note).toContainText('today in UTC, Mar 11, 2026, began at');
  await expect(from).toHaveValue('2026-02-10');
  await expect(to).toHaveValue('2026-03-11');

  // A day the user chose stays; the one left alone follows today, and Show asks for what is in the fields.
  await from.fill('2026-03-01');
  await page.clock.fastForward('24:00:00');
  await expect(note).toContainText('today in UTC, Mar 12, 2026, began at');
  await expect(from).toHaveValue('2026-03-01');
  await expect(to).toHaveValue('2026-03-12');
  await page.getByTestId('usage-load').click();
  await expect(page.getByTestId('usage-range')).toHaveText('Mar 1, 2026 to Mar 12, 2026');
  expect(errors).toEqual([]);
});

test('team analytics: a breakdown or export that works clears an earlier error, and an error clears the saved note', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  const sandbox = await sandboxAt(100);
  const home = newHome();
  host = await launch(home, sandbox.env);
  await page.goto(`${host.url}#analytics`);
  await expect(page.getByTestId('breakdown').locator('li').first()).toBeVisible();
  const error = page.getByTestId('usage-error');
  const note = page.getByTestId('usage-note');
  const per = (b: string) => page.getByRole('button', { name: `per ${b}`, exact: true });

  // The folder the web host hands files over from is taken by a file: the export fails and says so.
  const exports = join(home, 'hand-over');
  const blockExports = () => blockHandOver(exports);
  await blockExports();
  await page.getByTestId('export-usage').click();
  await expect(error).toBeVisible();
  // A breakdown that works (from the local cache) leaves no old error behind.
  await per('tool').click();
  await expect(per('tool')).toHaveAttribute('aria-pressed', 'true');
  await expect(error).toHaveCount(0);

  // An export that works after one that failed: the note, and no error.
  await page.getByTestId('export-usage').click();
  await expect(error).toBeVisible();
  rmSync(exports);
  await page.getByTestId('export-usage').click();
  await expect(note).toHaveText(
    /^Downloaded credit-usage-[^ ]+\.csv \(\d+ rows\): find it in your browser's downloads\.$/,
  );
  await expect(error).toHaveCount(0);

  // A breakdown that fails (the service refuses the team listing per project needs; per group comes
  // from the usage in the cache): the error, and the saved note is gone. A Retry-After longer than
  // the client waits surfaces at once, never retried away, so the 429 arrives deterministically.
  await setFaults(sandbox.url, { rate429: 1, retryAfterSec: 3600 });
  page.once('dialog', (d) => void d.accept());
  await per('project').click();
  await expect(error).toContainText('429 Too many requests');
  await expect(note).toHaveCount(0);
  await expect(per('tool')).toHaveAttribute('aria-pressed', 'true');
  await setFaults(sandbox.url, { rate429: 0 });
  await per('group').click();
  await expect(per('group')).toHaveAttribute('aria-pressed', 'true');
  await expect(error).toHaveCount(0);

  // An export that fails after one that worked: the error alone.
  await page.getByTestId('export-usage').click();
  await expect(note).toBeVisible();
  await blockExports();
  await page.getByTestId('export-usage').click();
  await expect(error).toBeVisible();
  await expect(note).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('recent creations: a generated image is listed and filtered, then used as input in an app and in a tool', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  const home = newHome();
  host = await launch(home);
  const started = await desk<any>(host, 'batches.start', {
    tool: 'hires',
    inputs: [],
    params: { prompt: 'a red chair in a white room', resolution: '1k' },
    outDir: join(home, 'results', 'out'),
  });
  await expect
    .poll(async () => (await desk<any>(host, 'batches.list', {}))[0].counts.done, { timeout: 30_000 })
    .toBe(1);
  expect(started.queued).toBe(1);

  await page.goto(`${host.url}#creations`);
  const cards = page.getByTestId('creation-card');
  await expect(cards.first()).toBeVisible();
  await expect(cards.first()).toHaveAttribute('data-tool', /hires|premium|generator/);
  // The filter offers the catalogue's tools by the names the cards show; the API gets the id.
  const toolFilter = page.getByRole('combobox', { name: 'Tool' });
  await expect(toolFilter).toHaveValue('');
  await expect(toolFilter.locator('option:checked')).toHaveText('All tools');
  await expect(cards.first()).toContainText('High-resolution generator ·');
  await toolFilter.selectOption({ label: 'Precision upscaler' });
  await expect(page.getByTestId('creations-empty')).toHaveText(
    "No creations of the tool “Precision upscaler”: choose All tools to see every tool's.",
  );
  await toolFilter.selectOption({ label: 'High-resolution generator' });
  await expect(cards).toHaveCount(1);
  await toolFilter.selectOption({ label: 'All tools' });
  await expect(cards.first()).toBeVisible();
  // Each card's buttons name the creation they act on.
  const name = await cards.first().getByTestId('creation-name').innerText();
  for (const label of ['Open', 'Download', 'Use in app:', 'Use in tool:'])
    await expect(cards.first().getByRole('button', { name: `${label} ${name}`, exact: true })).toBeVisible();
  await shot(page, 'creations');

  // Use in app: the creation fills the first app's creation input, shown by its name and picture, not its id.
  await cards.first().getByTestId('use-in-app').click();
  await expect(page.getByTestId('screen-apps')).toBeVisible();
  await expect(page.getByTestId('chosen-name-product_image')).toHaveText(name);
  await expect(page.getByTestId('chosen-product_image').locator('img')).toBeVisible();
  await expect(page.getByTestId('input-product_image')).toHaveCount(0);
  // The inputs say what they take in words, without type tags.
  const form = page.getByTestId('screen-apps');
  await expect(form).toContainText('an image from your recent creations');
  for (const tag of ['(creation)', '(text)', '(number)', '(select)']) await expect(form).not.toContainText(tag);
  // Changed, then picked from the recent creations: the name again, never the id.
  await page.getByRole('button', { name: 'Choose another image for Product photo' }).click();
  await expect(page.getByTestId('input-product_image')).toHaveValue('');
  await page.getByTestId('pick-creation').first().click();
  await expect(page.getByTestId('chosen-name-product_image')).toHaveText(name);
  const { items } = await desk<any>(host, 'creations.list', { page: 1, perPage: 24 });
  await expect(form).not.toContainText(items[0].id);

  // Use in tool: the creation is downloaded and joins the Studio's inputs.
  await page.getByTestId('nav-creations').click();
  await cards.first().getByTestId('use-in-tool').click();
  await expect(page.getByTestId('screen-studio')).toBeVisible();
  await expect(page.getByTestId('input-status')).toContainText('1 input');
  expect(errors).toEqual([]);
});

test.describe('west of UTC', () => {
  // Los Angeles in March 2025 is UTC-8: a UTC midnight drawn in the viewer's zone lands on the day before.
  test.use({ timezoneId: 'America/Los_Angeles', locale: 'en-US' });

  test('team analytics: usage buckets keep their UTC days in the chart and its table; a long breakdown says it is cut; an empty range says so', async ({
    page,
    launch,
  }) => {
    const errors = watchErrors(page);
    host = await launch(newHome());
    await page.goto(`${host.url}#analytics`);
    await expect(page.getByTestId('usage-chart').locator('canvas')).toBeVisible();
    await page.getByLabel('From (UTC day)', { exact: true }).fill('2025-03-03');
    await page.getByLabel('To (UTC day)', { exact: true }).fill('2025-03-09');
    await page.getByTestId('usage-load').click();
    await expect(page.getByTestId('usage-range')).toHaveText('Mar 3, 2025 to Mar 9, 2025');

    // The same numbers as text, for the keyboard and screen readers the canvas says nothing to.
    await page.getByText('Show as a table').click();
    // Days in the one date format (shared/dates.ts), as UTC days.
    const days = [3, 4, 5, 6, 7, 8, 9].map((d) => `Mar ${d}, 2025`);
    await expect(page.getByTestId('usage-table').locator('tbody th')).toHaveText(days);
    // The legend names the bucket under the cursor: the first one at the plot's left edge.
    await page
      .getByTestId('usage-chart')
      .locator('.u-over')
      .hover({ position: { x: 1, y: 20 } });
    await expect(page.getByTestId('usage-chart').locator('.u-legend .u-series').first().locator('.u-value')).toHaveText(
      'Mar 3, 2025',
    );
    await page.getByTestId('granularity').selectOption('week');
    await page.getByTestId('usage-load').click();
    // Weeks start on Monday (the service's buckets), named by their first day.
    await expect(page.getByTestId('usage-table').locator('tbody th')).toHaveText(['week of Mar 3, 2025']);

    // 60 members over a month: more users than the 25 bars, and the screen says so.
    await page.getByTestId('granularity').selectOption('day');
    await page.getByLabel('From (UTC day)', { exact: true }).fill('2025-02-01');
    await page.getByLabel('To (UTC day)', { exact: true }).fill('2025-03-09');
    await page.getByTestId('usage-load').click();
    await expect(page.getByTestId('usage-range')).toHaveText('Feb 1, 2025 to Mar 9, 2025');
    const users = await desk<any>(host, 'usage.breakdown', {
      granularity: 'day',
      from: '2025-02-01',
      to: '2025-03-09',
      by: 'user',
    });
    expect(users.rows.length).toBeGreaterThan(25);
    await expect(page.getByTestId('breakdown').locator('li')).toHaveCount(25);
    await expect(page.getByTestId('breakdown-count')).toHaveText(`The top 25 of ${users.rows.length} are shown.`);
    await page.getByTestId('breakdown-all').click();
    await expect(page.getByTestId('breakdown').locator('li')).toHaveCount(users.rows.length);
    await expect(page.getByTestId('breakdown-count')).toHaveText(`All ${users.rows.length} shown.`);

    // A team with no usage: said in words, not a flat line and an empty box.
    await desk<any>(host, 'settings.set', { sandboxKey: 'sandbox-business' });
    await page.reload();
    await expect(page.getByTestId('usage-empty')).toContainText('No credits were used from');
    await expect(page.getByTestId('breakdown-empty')).toHaveText(
      'Nothing to break down: no credits were used in this range.',
    );
    expect(errors).toEqual([]);
  });

  test('team analytics: From and To are labelled as UTC days, and in the evening the note says when today in UTC began here', async ({
    page,
    launch,
  }) => {
    const errors = watchErrors(page);
    // 18:30 on 5 March in Los Angeles: already 6 March in UTC, the day the service counts it in.
    await page.clock.setFixedTime(new Date('2025-03-06T02:30:00Z'));
    host = await launch(newHome());
    await page.goto(`${host.url}#analytics`);
    const from = page.getByLabel('From (UTC day)', { exact: true });
    const to = page.getByLabel('To (UTC day)', { exact: true });
    const why =
      'Days are UTC days, as the service counts them: today in UTC, Mar 6, 2025, began at Mar 5, 2025, 4:00 PM your time.';
    await expect(page.getByTestId('utc-days')).toHaveText(why);
    await expect(to).toHaveAccessibleDescription(why);
    // The last 30 UTC days, up to and including the one now under way.
    await expect(to).toHaveValue('2025-03-06');
    await expect(from).toHaveValue('2025-02-05');
    await expect(page.getByTestId('usage-range')).toHaveText('Feb 5, 2025 to Mar 6, 2025');
    expect(errors).toEqual([]);
  });

  test('team analytics: a first or last week or month the range cuts is marked partial, with the days it counts', async ({
    page,
    launch,
  }) => {
    const errors = watchErrors(page);
    host = await launch(newHome());
    await page.goto(`${host.url}#analytics`);
    await expect(page.getByTestId('usage-range')).toBeVisible();
    await page.getByLabel('From (UTC day)', { exact: true }).fill('2025-03-05');
    await page.getByLabel('To (UTC day)', { exact: true }).fill('2025-03-20');
    await page.getByTestId('granularity').selectOption('week');
    await page.getByTestId('usage-load').click();
    await expect(page.getByTestId('usage-range')).toHaveText('Mar 5, 2025 to Mar 20, 2025');
    await page.getByText('Show as a table').click();
    const rows = page.getByTestId('usage-table').locator('tbody th');
    await expect(rows).toHaveText([
      'week of Mar 3, 2025 (partial: Mar 5 – 9, 2025 only)',
      'week of Mar 10, 2025',
      'week of Mar 17, 2025 (partial: Mar 17 – 20, 2025 only)',
    ]);
    await expect(page.getByTestId('usage-partial')).toHaveText(
      'Partial weeks: week of Mar 3, 2025 counts Mar 5 – 9, 2025 only; week of Mar 17, 2025 counts Mar 17 – 20, 2025 only. Their totals cover only those days, since the range starts or ends inside them.',
    );
    // The legend names the bucket under the cursor the same way: the first one at the plot's left edge.
    await page
      .getByTestId('usage-chart')
      .locator('.u-over')
      .hover({ position: { x: 1, y: 20 } });
    await expect(page.getByTestId('usage-chart').locator('.u-legend .u-series').first().locator('.u-value')).toHaveText(
      'week of Mar 3, 2025 (partial: Mar 5 – 9, 2025 only)',
    );

    await page.getByLabel('From (UTC day)', { exact: true }).fill('2025-02-10');
    await page.getByLabel('To (UTC day)', { exact: true }).fill('2025-03-31');
    await page.getByTestId('granularity').selectOption('month');
    await page.getByTestId('usage-load').click();
    await expect(page.getByTestId('usage-range')).toHaveText('Feb 10, 2025 to Mar 31, 2025');
    await expect(rows).toHaveText(['Feb 2025 (partial: Feb 10 – 28, 2025 only)', 'Mar 2025']);
    await expect(page.getByTestId('usage-partial')).toHaveText(
      'Partial month: Feb 2025 counts Feb 10 – 28, 2025 only. Its total covers only those days, since the range starts or ends inside it.',
    );

    // Whole buckets only: nothing to say.
    await page.getByLabel('From (UTC day)', { exact: true }).fill('2025-03-01');
    await page.getByTestId('usage-load').click();
    await expect(page.getByTestId('usage-range')).toHaveText('Mar 1, 2025 to Mar 31, 2025');
    await expect(rows).toHaveText(['Mar 2025']);
    await expect(page.getByTestId('usage-partial')).toHaveCount(0);
    expect(errors).toEqual([]);
  });

  test("recent creations: the time a creation was made is shown in the viewer's time zone", async ({
    page,
    launch,
  }) => {
    const home = newHome();
    host = await launch(home);
    await desk<any>(host, 'batches.start', {
      tool: 'hires',
      inputs: [],
      params: { prompt: 'a blue lamp', resolution: '1k' },
      outDir: join(home, 'results', 'out'),
    });
    await expect
      .poll(async () => (await desk<any>(host, 'batches.list', {}))[0].counts.done, { timeout: 30_000 })
      .toBe(1);
    const { items } = await desk<any>(host, 'creations.list', { page: 1, perPage: 24 });
    const made: string = items[0].createdAt;
    expect(made).toMatch(/Z$/);
    const local = new Date(made).toLocaleString('en-US', {
      timeZone: 'America/Los_Angeles',
      dateStyle: 'medium',
      timeStyle: 'short',
    });
    await page.goto(`${host.url}#creations`);
    const meta = page.getByTestId('creation-card').first().getByTestId('creation-meta');
    await expect(meta).toHaveText(`High-resolution generator · ${local}`);
    await expect(meta.locator('time')).toHaveAttribute('datetime', made);
  });
});

test('what an export or a download came to is said each time: downloaded politely, a failure as an alert, in regions already in the page', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  const live = await watchLiveRegions(page);
  const home = newHome();
  host = await launch(home);
  await page.goto(`${host.url}#analytics`);
  await expect(page.getByTestId('usage-range')).toBeVisible();
  const saved = async () => (await live()).spoke.filter((t) => /^Downloaded /.test(t)).length;
  const alerted = async () => (await live()).alerted;

  // Team analytics: the same export twice is said twice; a failed one is an alert, twice too.
  await page.getByTestId('export-usage').click();
  await expect.poll(saved).toBe(1);
  await page.getByTestId('export-usage').click();
  await expect.poll(saved).toBe(2);
  // In a browser the file is handed over from the data folder's hand-over/ and kept nowhere else.
  const exports = join(home, 'hand-over');
  const blockExports = () => blockHandOver(exports);
  await blockExports();
  await page.getByTestId('export-usage').click();
  await expect.poll(async () => (await alerted()).length).toBe(1);
  await page.getByTestId('export-usage').click();
  await expect.poll(async () => (await alerted()).length).toBe(2);
  let log = await live();
  expect(log.bornFull).toEqual([]);
  expect(log.alertBornFull).toEqual([]);
  rmSync(exports);

  // Recent creations: a download said where it went; one that cannot be saved, an alert.
  await makeOneCreation(host);
  await page.goto(`${host.url}#creations`);
  const card = page.getByTestId('creation-card').first();
  await expect(card).toBeVisible();
  const name = await card.getByTestId('creation-name').innerText();
  await card.getByRole('button', { name: `Download ${name}`, exact: true }).click();
  await expect
    .poll(async () => (await live()).spoke.join(' '))
    .toMatch(/Downloaded .+: find it in your browser's downloads\./);
  rmSync(exports, { recursive: true, force: true });
  writeFileSync(exports, 'not a folder');
  await card.getByRole('button', { name: `Download ${name}`, exact: true }).click();
  await expect.poll(async () => (await alerted()).length).toBe(1);
  await expect(page.getByTestId('creations-error')).toBeVisible();
  log = await live();
  expect(log.bornFull).toEqual([]);
  expect(log.alertBornFull).toEqual([]);
  expect(errors).toEqual([]);
});
