import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { axeViolations } from './axe.ts';
import { expect, test, type Launch, type SandboxAt } from './fixtures.ts';
import { desk, dropFiles, holdAnswers, newHome, type HostHandle, watchErrors, watchLiveRegions } from './host.ts';
import { setFaults, shot, type SandboxProcess } from './studio-helpers.ts';
import { writeNdjson, type BenchOrder } from '../../bench/audit-data.ts';
import { BIN, runCli } from '../cli.ts';

let launch: Launch;
let sandboxAt: SandboxAt;
// The helpers below start hosts and Sandboxes through the test's fixtures.
test.beforeEach(({ launch: l, sandboxAt: s }) => {
  launch = l;
  sandboxAt = s;
});

/**
 * The audit viewer end to end: the web host as a real process on the in-process Sandbox
 * (`sandbox-owner`: about 6,000 seeded events), Chromium driving the real UI.
 */

let host: HostHandle | undefined;
/** A Sandbox of the test's own, for tests that turn its controls (a slow audit search). */
let sandbox: SandboxProcess | undefined;

const countOf = async (page: Page) => Number((await page.getByTestId('audit-count').innerText()).replace(/[^\d]/g, ''));

/** The text of one column (1-based) of every row in the DOM. */
const column = (page: Page, n: number) =>
  page.locator(`[data-testid="audit-row"] [role="gridcell"]:nth-child(${n})`).allInnerTexts();
/** The rows' instants (ISO, UTC), as their Date cells carry them in `<time datetime>`. */
const instants = (page: Page) =>
  page
    .locator('[data-testid="audit-row"] [role="gridcell"]:nth-child(1) time')
    .evaluateAll((els) => els.map((e) => e.getAttribute('datetime') ?? ''));

/** The timeline's x axis as drawn, in ms. */
async function drawnAxis(page: Page): Promise<[number, number]> {
  const chart = page.getByTestId('audit-timeline');
  return [
    Date.parse((await chart.getAttribute('data-axis-from')) ?? ''),
    Date.parse((await chart.getAttribute('data-axis-to')) ?? ''),
  ];
}

/** CSV records in a file (quote-aware: a quoted cell may hold a newline). */
function csvRecords(text: string): number {
  let n = 0;
  let quoted = false;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    else if (ch === '\n' && !quoted) n++;
  }
  return n;
}

const HOSTILE = '<img src=x onerror="window.__pwned=1">';
const REQ = 'req_e2e_zebracorn';

function ev(i: number, extra: { action?: Record<string, unknown>; [k: string]: unknown } = {}) {
  return {
    event_id: `evt_e2e_${i}`,
    date: new Date(Date.now() - 3_600_000 - i * 1000).toISOString(),
    member: { type: 'user', user_id: 9001, email: 'auditor@e2e.test' },
    category: 'team',
    source: { project: 'Zebracorn launch', platform: 'web', referer: null },
    ...extra,
    action: {
      event_type: 'team.member.role_changed',
      verb: 'update',
      status: 'succeeded',
      resource_id: `usr_${i}`,
      request_id: REQ,
      correlation_id: 'cor_e2e_1',
      old_state: null,
      new_state: null,
      duration_ms: 12,
      data: { target_user_id: 42, role: 'admin' },
      context: null,
      project_name: 'Zebracorn launch',
      folder_name: 'Drafts',
      ...extra.action,
    },
  };
}

/** A fresh host whose cache holds just these events, imported through the Import panel, the table showing them. */
/** From the keyboard, as a user without a mouse does: the table focused, the next row selected and opened in the drawer. */
async function openNextRow(page: Page): Promise<void> {
  await page.getByTestId('audit-table').focus();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
}

async function hostWith(page: Page, events: ReturnType<typeof ev>[]): Promise<void> {
  const home = newHome();
  host = await launch(home);
  const file = join(home, 'events.ndjson');
  writeFileSync(file, events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  await page.goto(`${host.url}#audit`);
  await page.getByTestId('audit-open-import').click();
  await page.getByTestId('audit-import-input').setInputFiles(file);
  await expect(page.getByTestId('audit-import-accepted')).toHaveText(`${events.length} accepted`);
  await page.getByTestId('audit-open-import').click();
  await expect.poll(() => countOf(page)).toBe(events.length);
}

test('sync, filters, search, detail with diff, related events, import report, hostile text, export', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  const home = newHome();
  host = await launch(home);
  await page.goto(`${host.url}#audit`);
  await expect(page.getByTestId('screen-audit')).toBeVisible();

  // Sync: live progress, then the report and the freshness line.
  await page.getByTestId('audit-sync').click();
  await expect(page.getByTestId('audit-sync-report')).toContainText('Sync complete', { timeout: 60_000 });
  await expect(page.getByTestId('audit-freshness')).toContainText('just now');
  await expect(page.getByTestId('audit-budget')).toContainText('of 500 requests left');
  // The count follows the sync report by one query: read it once it has arrived.
  await expect.poll(() => countOf(page)).toBeGreaterThanOrEqual(6000);
  const all = await countOf(page);
  // Virtualized: a screenful of rows in the DOM, not thousands.
  await expect(page.getByTestId('audit-row').first()).toBeVisible();
  expect(await page.getByTestId('audit-row').count()).toBeLessThan(80);
  // Newest first by default.
  const dates = await instants(page);
  expect([...dates].sort().reverse()).toEqual(dates);

  // Event type filter.
  await page.getByTestId('audit-event-type').selectOption('team.member.role_changed');
  await expect.poll(() => countOf(page)).toBeLessThan(all);
  await expect.poll(async () => new Set(await column(page, 2))).toEqual(new Set(['team.member.role_changed']));

  // Member filter (the first member the facets offer), combined with the type. The facets come after
  // the table: once in, the members listed count no more events than the type has (the whole cache's
  // count thousands). Value and label are read at once, so a list replaced meanwhile cannot pair one
  // member's value with another's label.
  const ofType = await countOf(page);
  const memberOptions = page.getByTestId('audit-member').locator('option:not([disabled])');
  const counted = (labels: string[]) => labels.reduce((n, t) => n + Number(/\((\d+)\)$/.exec(t)?.[1] ?? 0), 0);
  await expect.poll(async () => counted(await memberOptions.allInnerTexts())).toBeLessThanOrEqual(ofType);
  const [memberValue, memberLabel] = await memberOptions.nth(1).evaluate((o: HTMLOptionElement) => [o.value, o.text]);
  const memberEmail = memberLabel.replace(/ \(\d+\)$/, '');
  await page.getByTestId('audit-member').selectOption(memberValue);
  // Some events of a member carry no e-mail (the API's field is nullable, an API key's use): those
  // show the member's name from the team's directory, never a bare id.
  // The official directory gives no user ids, so such an event says "member <id>" unless it does.
  const { members } = await desk<{ members: { id: number | null; name: string }[] }>(host!, 'team.directory', {});
  const name = members.find((m) => String(m.id) === memberValue)?.name ?? `member ${memberValue}`;
  await expect
    .poll(async () =>
      (await column(page, 3)).every((m) => m === memberEmail || m === name || m === `${name} (API key)`),
    )
    .toBe(true);
  expect((await column(page, 3)).some((m) => /^#\d+$/.test(m))).toBe(false);

  // Date range: one UTC day.
  await page.getByTestId('audit-clear').click();
  await expect.poll(() => countOf(page)).toBe(all);
  const day = dates[0].slice(0, 10);
  await page.getByTestId('audit-from').fill(day);
  await page.getByTestId('audit-to').fill(day);
  await expect.poll(() => countOf(page)).toBeLessThan(all);
  await expect.poll(async () => (await instants(page)).every((d) => d.startsWith(day))).toBe(true);
  // The timeline's axis follows the buckets: one day is one bar in a week of days, and its hours
  // fill the width (uPlot's own guess for a single bar spanned 1,000 days).
  const DAY_MS = 86_400_000;
  const dayStart = Date.parse(`${day}T00:00:00Z`);
  await expect.poll(() => drawnAxis(page)).toEqual([dayStart - 3.5 * DAY_MS, dayStart + 3.5 * DAY_MS]);
  await page.getByTestId('audit-bucket-hour').click();
  await expect
    .poll(async () => {
      const [from, to] = await drawnAxis(page);
      return to - from;
    })
    .toBe(DAY_MS);
  const [hourFrom, hourTo] = await drawnAxis(page);
  expect(hourFrom).toBeGreaterThanOrEqual(dayStart - DAY_MS / 2);
  expect(hourTo).toBeLessThanOrEqual(dayStart + 1.5 * DAY_MS);
  await page.getByTestId('audit-bucket-day').click();
  await page.getByTestId('audit-clear').click();
  await expect.poll(() => countOf(page)).toBe(all);
  // Over every day: half a day beyond the first and the last. A click on a bar narrows to its day.
  // The chart's buckets arrive after the table's count: wait for the redraw, not the count.
  await expect.poll(async () => (await drawnAxis(page))[1]).toBe(dayStart + DAY_MS / 2);
  const [allFrom, allTo] = await drawnAxis(page);
  expect((allTo - allFrom) / DAY_MS).toBeGreaterThanOrEqual(7);
  await page.getByTestId('audit-timeline').click();
  await expect(page.getByTestId('audit-from')).toHaveValue(/^\d{4}-\d{2}-\d{2}$/);
  const picked = await page.getByTestId('audit-from').inputValue();
  await expect(page.getByTestId('audit-to')).toHaveValue(picked);
  expect(Date.parse(picked)).toBeGreaterThan(allFrom);
  expect(Date.parse(picked)).toBeLessThan(allTo);
  await expect
    .poll(async () => {
      const d = await instants(page);
      return d.length > 0 && d.every((x) => x.startsWith(picked));
    })
    .toBe(true);
  await page.getByTestId('audit-clear').click();

  // What cannot filter says so: group IDs that are not IDs stay in the box and filter nothing,
  // and dates the wrong way round are named.
  await page.getByTestId('audit-group').fill('abc, -1, 104');
  await page.getByTestId('audit-group').press('Enter');
  await expect(page.getByTestId('audit-filter-problem')).toHaveText(
    'Group IDs are whole numbers from 1: “abc”, “-1” are not.',
  );
  await expect(page.getByTestId('audit-group')).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByTestId('audit-group')).toHaveValue('abc, -1, 104');
  expect(await countOf(page)).toBe(all);
  await page.getByTestId('audit-clear').click();
  await expect(page.getByTestId('audit-group')).toHaveValue('');
  await expect(page.getByTestId('audit-filter-problem')).toBeHidden();
  await page.getByTestId('audit-from').fill('2026-03-10');
  await page.getByTestId('audit-to').fill('2026-03-02');
  await expect(page.getByTestId('audit-filter-problem')).toHaveText(
    'From is after To: no event can fall between them.',
  );
  // The table says no event matches (not a refusal from the contract), and the chart is empty.
  await expect(page.getByTestId('audit-empty')).toContainText('No events match these filters in the ');
  await expect(page.getByTestId('audit-empty')).toContainText(
    'Try clearing the filters (dates Mar 10, 2026 to Mar 2, 2026).',
  );
  expect(await countOf(page)).toBe(0);
  await page.getByTestId('audit-clear').click();
  await expect(page.getByTestId('audit-filter-problem')).toBeHidden();

  // Sorting: oldest first, then back to newest first; the count is unchanged.
  await page.getByTestId('sort-date').click();
  await expect(page.getByRole('columnheader', { name: 'Date (UTC)' })).toHaveAttribute('aria-sort', 'ascending');
  await expect
    .poll(async () => {
      const d = await instants(page);
      return d.length > 0 && d[0] < dates[dates.length - 1] && [...d].sort().join() === d.join();
    })
    .toBe(true);
  expect(await countOf(page)).toBe(all);
  await page.getByTestId('sort-date').click();
  await expect(page.getByRole('columnheader', { name: 'Date (UTC)' })).toHaveAttribute('aria-sort', 'descending');

  // Import an NDJSON export with one malformed line; the per-file report names it.
  const file = join(home, 'team-export.ndjson');
  const lines = [
    JSON.stringify(
      ev(1, { action: { old_state: { role: 'member' }, new_state: { role: 'admin', status: 'active' } } }),
    ),
    JSON.stringify(ev(2, { action: { event_type: 'project.folder.shared', folder_name: HOSTILE } })),
    '{"event_id": "evt_broken", "date": ',
    JSON.stringify(ev(3, { action: { event_type: 'team.group.updated', correlation_id: null } })),
  ];
  writeFileSync(file, lines.join('\n') + '\n');
  await page.getByTestId('audit-open-import').click();
  await page.getByTestId('audit-import-input').setInputFiles(file);
  const report = page.getByTestId('audit-import-report');
  await expect(report).toContainText('team-export.ndjson');
  await expect(report.getByTestId('audit-import-accepted')).toHaveText('3 accepted');
  await expect(report.getByTestId('audit-import-rejected')).toHaveText('1 rejected');
  await expect(report.getByTestId('audit-import-reject')).toHaveCount(1);
  await expect(report.getByTestId('audit-import-reject').locator('td').first()).toHaveText('3');
  await page.getByTestId('audit-open-import').click();
  await expect.poll(() => countOf(page)).toBe(all + 3);

  // Full-text search over the payload.
  await page.getByTestId('audit-search').fill('zebracorn');
  await expect.poll(() => countOf(page)).toBe(3);

  // Detail drawer from the keyboard: the first row (newest: evt_e2e_1), Enter, then the diff.
  await openNextRow(page);
  const drawer = page.getByTestId('audit-drawer');
  await expect(drawer).toBeVisible();
  await expect(page.getByTestId('audit-drawer-id')).toHaveText('evt_e2e_1');
  await expect(drawer.getByTestId('audit-field-request_id')).toHaveText(REQ);
  const diff = drawer.getByTestId('audit-diff');
  await expect(diff.locator('tr[data-kind="changed"]')).toContainText('role');
  await expect(diff.locator('tr[data-kind="changed"] td.old')).toHaveText('"member"');
  await expect(diff.locator('tr[data-kind="changed"] td.new')).toHaveText('"admin"');
  await expect(diff.locator('tr[data-kind="added"]')).toContainText('status');
  await page.keyboard.press('Escape');
  await expect(drawer).toBeHidden();

  // A hostile payload value is shown as its characters, never parsed as HTML.
  await openNextRow(page);
  await expect(page.getByTestId('audit-drawer-id')).toHaveText('evt_e2e_2');
  await expect(drawer.getByTestId('audit-field-folder_name')).toHaveText(HOSTILE);
  expect(await drawer.locator('img').count()).toBe(0);
  expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();

  // "All events of this request" replaces the other filters with the request id.
  await drawer.getByTestId('audit-all-request').click();
  await expect(page.getByTestId('audit-request')).toHaveValue(REQ);
  await expect(page.getByTestId('audit-search')).toHaveValue('');
  await expect.poll(() => countOf(page)).toBe(3);
  await page.getByTestId('audit-clear').click();
  // The whole log again before the next filter: the request's 3 rows would pass for a narrowed view.
  await expect.poll(() => countOf(page)).toBe(all + 3);

  // Export the filtered view to CSV and NDJSON: in the browser each is a download (no path on the
  // host to type), named for its format, holding exactly the rows of the view.
  await page.getByTestId('audit-event-type').selectOption('team.member.role_changed');
  await expect.poll(() => countOf(page)).toBeLessThan(all);
  const viewRows = await countOf(page);
  await page.getByTestId('audit-open-export').click();
  await expect(page.getByTestId('audit-export-path')).toHaveCount(0);
  for (const format of ['csv', 'ndjson'] as const) {
    await page.getByTestId(`audit-format-${format}`).check();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('audit-export-run').click()]);
    expect(download.suggestedFilename()).toMatch(new RegExp(`^audit-export-\\d{4}-\\d{2}-\\d{2}\\.${format}$`));
    await expect(page.getByTestId('audit-export-result')).toHaveText(
      `Downloaded ${download.suggestedFilename()} (${viewRows.toLocaleString('en')} rows): find it in your browser's downloads.`,
    );
    const text = readFileSync(await download.path(), 'utf8');
    if (format === 'csv') {
      expect(csvRecords(text)).toBe(viewRows + 1);
    } else {
      const rows = text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { action: { event_type: string } });
      expect(rows).toHaveLength(viewRows);
      expect(new Set(rows.map((r) => r.action.event_type))).toEqual(new Set(['team.member.role_changed']));
    }
  }
  await page.getByTestId('audit-open-export').click();

  // Offline: the banner says how fresh the cache is, and the table keeps answering.
  await page.getByTestId('audit-clear').click();
  // The OS going offline, as the page sees it. (Playwright's own offline mode would also cut the
  // web host's localhost WebSocket, which under Electron is IPC and never goes offline.)
  const setOnline = (v: boolean) =>
    page.evaluate((on) => {
      Object.defineProperty(navigator, 'onLine', { configurable: true, get: () => on });
      dispatchEvent(new Event(on ? 'online' : 'offline'));
    }, v);
  await setOnline(false);
  await expect(page.getByTestId('audit-offline')).toContainText('working from the cache');
  await expect(page.getByTestId('audit-sync')).toBeDisabled();
  await page.getByTestId('audit-search').fill('zebracorn');
  await expect.poll(() => countOf(page)).toBe(3);
  await setOnline(true);
  await expect(page.getByTestId('audit-offline')).toBeHidden();
  await page.getByTestId('audit-search').fill('');
  await expect.poll(() => countOf(page)).toBe(all + 3);

  // The screenshot for the docs: a row open in the drawer.
  await page.getByTestId('audit-row').nth(2).dblclick();
  await expect(page.getByTestId('audit-diff').or(drawer.getByText('No state recorded'))).toBeVisible();
  await shot(page, 'audit');
  await page.keyboard.press('Escape');

  // A JSON export and a file named .json that is not JSON, picked together: the browser sends
  // both as application/json, and each gets its own report.
  const elsewhere = {
    source: { project: 'Harbor', platform: 'web', referer: null },
    action: { project_name: 'Harbor', request_id: 'req_e2e_json' },
  };
  writeFileSync(join(home, 'more-export.json'), JSON.stringify([ev(4, elsewhere), ev(5, elsewhere)], null, 2));
  writeFileSync(join(home, 'broken.json'), '{"event_id": "evt_e2e_6", "date": ');
  await page.getByTestId('audit-open-import').click();
  await page
    .getByTestId('audit-import-input')
    .setInputFiles([join(home, 'more-export.json'), join(home, 'broken.json')]);
  const reports = page.getByTestId('audit-import-report');
  await expect(reports).toHaveCount(2);
  await expect(reports.filter({ hasText: 'more-export.json' }).getByTestId('audit-import-accepted')).toHaveText(
    '2 accepted',
  );
  await expect(reports.filter({ hasText: 'broken.json' }).getByTestId('audit-import-accepted')).toHaveText(
    '0 accepted',
  );
  await expect(reports.filter({ hasText: 'broken.json' }).getByTestId('audit-import-fatal')).toContainText(
    /^Stopped: /,
  );
  await page.getByTestId('audit-open-import').click();
  await expect.poll(() => countOf(page)).toBe(all + 5);

  // The popover keeps its reports when reopened, and closes on a click outside it, or on Escape
  // from anywhere (here its own button).
  await page.getByTestId('audit-open-import').click();
  await expect(page.getByTestId('audit-import-report')).toHaveCount(2);
  await page.getByRole('heading', { name: 'Audit log', exact: true, level: 1 }).click();
  await expect(page.getByTestId('audit-import')).toBeHidden();
  await page.getByTestId('audit-open-export').click();
  await expect(page.getByTestId('audit-export-run')).toBeVisible();
  await page.getByTestId('audit-open-import').focus();
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('audit-export-run')).toBeHidden();

  expect(errors).toEqual([]);
});

/** Files of generated events, written once a worker (200,000 events take 3.4 CPU-s and 155 MB): imports only read them. */
const generatedFiles = new Map<string, Promise<string>>();
function generated(name: string, total: number, order: BenchOrder): Promise<string> {
  const key = `${name}-${total}-${order}`;
  let file = generatedFiles.get(key);
  if (!file) {
    const path = join(mkdtempSync(join(tmpdir(), 'md-audit-events-')), name);
    file = writeNdjson(path, total, order).then(() => path);
    generatedFiles.set(key, file);
  }
  return file;
}

/** A fresh host, and a generated export of `total` events picked in its Import panel. */
async function importGenerated(
  page: Page,
  name: string,
  total: number,
  order: BenchOrder,
  beforeImport?: () => Promise<void>,
): Promise<void> {
  host = await launch(newHome());
  const file = await generated(name, total, order);
  await beforeImport?.();
  await page.goto(`${host.url}#audit`);
  await page.getByTestId('audit-open-import').click();
  await page.getByTestId('audit-import-input').setInputFiles(file);
}

/**
 * The events a stopped import's report says it kept (some, not all `total`), in the report's
 * `wording`; the import's progress, Stop and any refusal gone.
 */
async function keptBy(page: Page, wording: RegExp, total: number): Promise<number> {
  const stopped = page.getByTestId('audit-import-report').getByTestId('audit-import-stopped');
  await expect(stopped).toHaveText(wording, { timeout: 30_000 });
  const kept = Number((await stopped.innerText()).match(/([\d,]+) events? kept/)![1].replace(/,/g, ''));
  expect(kept).toBeGreaterThan(0);
  expect(kept).toBeLessThan(total);
  await expect(page.getByTestId('audit-import-stop')).toBeHidden();
  await expect(page.getByTestId('audit-import-refused')).toBeHidden();
  await expect(page.getByTestId('audit-import-status')).toHaveText('');
  return kept;
}

/** A file picked while an import runs is refused, with the reason. */
async function refusesSecond(page: Page): Promise<void> {
  const small = join(host!.home, 'small.ndjson');
  writeFileSync(small, JSON.stringify(ev(1)) + '\n');
  await page.getByTestId('audit-import-input').setInputFiles(small);
  await expect(page.getByTestId('audit-import').getByRole('alert')).toHaveText(
    'An import is already running: wait for it to finish, or stop it, then import again.',
  );
}

/** The report's count accepted is `kept`; the panel closed, the table and the cache's count hold just those. */
async function expectKept(page: Page, kept: number): Promise<void> {
  await expect(page.getByTestId('audit-import-report').getByTestId('audit-import-accepted')).toHaveText(
    `${kept.toLocaleString('en-US')} accepted`,
  );
  await page.getByTestId('audit-open-import').click();
  await expect.poll(() => countOf(page)).toBe(kept);
  await expect(page.getByTestId('audit-cached')).toHaveText(kept.toLocaleString('en-US'));
}

/** The Import panel's line while a newest-first export goes in. */
const BIG_PROGRESS = /^big-export\.ndjson: \d+% · [1-9][\d,]* read, [\d,]+ accepted, 0 rejected$/;
const STOPPED_UNREAD =
  /^Stopped by you: [\d,]+ events kept; the rest of the file was not read\. Import the file again to add the rest\.$/;

/**
 * Every text the elements of `ids` (data-testid) take in `page`, in order, as `id: text`, from
 * before the page's scripts run: a state shown only for a moment (a stop that takes effect with
 * the batch in hand) is seen all the same. Call before `goto`; the returned function reads the log.
 */
async function watchTexts(page: Page, ids: string[]): Promise<() => Promise<string[]>> {
  await page.addInitScript((ids) => {
    const log: string[] = [];
    (window as unknown as { __texts: string[] }).__texts = log;
    const last = new Map<string, string | null>();
    new MutationObserver(() => {
      for (const id of ids) {
        const el = document.querySelector(`[data-testid="${id}"]`);
        const text = el && (el.textContent ?? '').replace(/\s+/g, ' ').trim();
        if (text !== null && last.get(id) !== text) log.push(`${id}: ${text}`);
        last.set(id, text);
      }
    }).observe(document, { childList: true, subtree: true, characterData: true });
  }, ids);
  return () => page.evaluate(() => (window as unknown as { __texts: string[] }).__texts);
}

/** Where in `log` (watchTexts) the first text of `id` matching `text` came; -1 if none did. */
const firstSeen = (log: string[], id: string, text: RegExp) =>
  log.findIndex((t) => t.startsWith(`${id}: `) && text.test(t.slice(id.length + 2)));

/** Each element of `said` (data-testid: text) showed its text in `log` (watchTexts) before `endId` first showed `end`. */
function expectSaidBefore(log: string[], said: Record<string, RegExp>, endId: string, end: RegExp): void {
  const ended = firstSeen(log, endId, end);
  expect(ended, log.join('\n')).toBeGreaterThan(-1);
  for (const [id, text] of Object.entries(said)) {
    const at = firstSeen(log, id, text);
    expect(at, `${id} never showed ${text}:\n${log.join('\n')}`).toBeGreaterThan(-1);
    expect(at, log.join('\n')).toBeLessThan(ended);
  }
}

// Imports of 80,000 to 200,000 events (and one small one among them): side by side they starve each
// other on two cores, so they take turns in one worker as before.
test.describe('large imports', () => {
  test.describe.configure({ mode: 'default' });

  test('a large import shows its progress, and Stop import keeps what went in and says so', async ({ page }) => {
    const errors = watchErrors(page);
    // An export as the API pages it, newest first: large enough to take a few seconds to import (the
    // tests below import the same file).
    const total = 200_000;
    await importGenerated(page, 'big-export.ndjson', total, 'newest-first');

    // A second file picked meanwhile is refused; the running import carries on.
    await refusesSecond(page);

    const progress = page.getByTestId('audit-import-progress');
    await expect(progress).toHaveText(BIG_PROGRESS, { timeout: 30_000 });
    await expect(page.getByRole('status').filter({ has: progress })).toHaveAttribute('aria-live', 'polite');
    await page.getByTestId('audit-import-stop').click();

    await expectKept(page, await keptBy(page, STOPPED_UNREAD, total));
    expect(errors).toEqual([]);
  });

  test('a page reloaded while an import runs shows its progress and Stop again; stopped from there, it reports what was kept, and the table holds just that', async ({
    page,
  }) => {
    const errors = watchErrors(page);
    // Larger than the first test's, and Stop pressed as soon as the reloaded panel follows: on a busy
    // machine the reload and the checks before Stop must not outlast the import.
    const total = 200_000;
    await importGenerated(page, 'big-export.ndjson', total, 'newest-first');
    await expect(page.getByTestId('audit-import-progress')).toHaveText(BIG_PROGRESS, { timeout: 30_000 });

    await page.reload();
    // Closed, the panel's button says an import runs.
    await expect(page.getByTestId('audit-open-import')).toHaveText('Importing…');
    await page.getByTestId('audit-open-import').click();
    await expect(page.getByTestId('audit-import-progress')).toHaveText(BIG_PROGRESS);
    const read = async () =>
      Number(
        (await page.getByTestId('audit-import-progress').innerText()).match(/([\d,]+) read/)![1].replace(/,/g, ''),
      );
    // It follows the import from here: the count read grows.
    const first = await read();
    await expect.poll(read).toBeGreaterThan(first);
    await page.getByTestId('audit-import-stop').click();

    await expectKept(page, await keptBy(page, STOPPED_UNREAD, total));
    await expect(page.getByTestId('audit-open-import')).toHaveText('Import…');
    expect(errors).toEqual([]);
  });

  test('Stop import pressed in one tab: another tab showing the same import says it is stopping at once, before the report', async ({
    page,
    context,
  }) => {
    const errors = watchErrors(page);
    const total = 200_000;
    const other = await context.newPage();
    const otherErrors = watchErrors(other);
    const seen = await watchTexts(other, ['audit-import-stop', 'audit-import-progress', 'audit-import-stopped']);
    // The other tab is loaded before the import starts: loaded after, it could come too late for an
    // import of a few seconds.
    await importGenerated(page, 'big-export.ndjson', total, 'newest-first', async () => {
      await other.goto(`${host!.url}#audit`);
      await expect(other.getByTestId('audit-open-import')).toBeVisible();
    });
    await expect(page.getByTestId('audit-import-progress')).toHaveText(BIG_PROGRESS, { timeout: 30_000 });
    await other.getByTestId('audit-open-import').click();
    await expect(other.getByTestId('audit-import-progress')).toHaveText(BIG_PROGRESS);
    await expect(other.getByTestId('audit-import-stop')).toHaveText('Stop import');

    await page.getByTestId('audit-import-stop').click();
    const kept = await keptBy(other, STOPPED_UNREAD, total);
    // The stop takes effect with the batch in hand, so the other tab may say so only for a moment:
    // the log of what it showed tells, in order, that it did before the report came.
    expectSaidBefore(
      await seen(),
      { 'audit-import-stop': /^Stopping…$/, 'audit-import-progress': / · stopping after the batch in hand…$/ },
      'audit-import-stopped',
      STOPPED_UNREAD,
    );
    expect(await keptBy(page, STOPPED_UNREAD, total)).toBe(kept);
    expect([...errors, ...otherErrors]).toEqual([]);
  });

  test('an Import panel already open in one tab follows an import another tab starts: its progress and Stop; stopped there, the tab that started it says Stopping…, and both show the report', async ({
    page,
    context,
  }) => {
    const total = 200_000;
    // Tab A has its Import panel open, idle, before tab B (page) starts the import.
    const a = await context.newPage();
    const errors = [page, a].map(watchErrors);
    const seenA = await watchTexts(a, ['audit-import-stop', 'audit-import-progress', 'audit-import-stopped']);
    const seenB = await watchTexts(page, ['audit-import-stop', 'audit-import-progress', 'audit-import-stopped']);
    await importGenerated(page, 'big-export.ndjson', total, 'newest-first', async () => {
      await a.goto(`${host!.url}#audit`);
      await expect(a.getByTestId('audit-cached')).toHaveText('0');
      await a.getByTestId('audit-open-import').click();
      await expect(a.getByTestId('audit-import').getByRole('button', { name: 'Choose files…' })).toBeEnabled();
      await expect(a.getByTestId('audit-import-stop')).toBeHidden();
    });
    await expect(page.getByTestId('audit-import-progress')).toHaveText(BIG_PROGRESS, { timeout: 30_000 });
    // A takes it up from the import's progress as it comes, with a Stop of its own.
    await expect(a.getByTestId('audit-import-progress')).toHaveText(BIG_PROGRESS);
    await expect(a.getByTestId('audit-import').getByRole('button', { name: 'Importing…' })).toBeDisabled();
    await a.getByTestId('audit-import-stop').click();

    const kept = await keptBy(page, STOPPED_UNREAD, total);
    // The stop takes effect with the batch in hand: the logs tell, in order, that each tab said so before its report.
    expectSaidBefore(
      await seenB(),
      { 'audit-import-stop': /^Stopping…$/, 'audit-import-progress': / · stopping after the batch in hand…$/ },
      'audit-import-stopped',
      STOPPED_UNREAD,
    );
    expectSaidBefore(
      await seenA(),
      { 'audit-import-stop': /^Stopping…$/, 'audit-import-progress': / · stopping after the batch in hand…$/ },
      'audit-import-stopped',
      STOPPED_UNREAD,
    );
    expect(await keptBy(a, STOPPED_UNREAD, total)).toBe(kept);
    await expectKept(a, kept);
    await expect(a.getByTestId('audit-open-import')).toHaveText('Import…');
    expect(errors.flat()).toEqual([]);
  });

  test('an Import panel already open in one tab shows the report of an import another tab ran to its end', async ({
    page,
    context,
  }) => {
    const a = await context.newPage();
    const errors = [page, a].map(watchErrors);
    await hostWith(page, [ev(0)]);
    await a.goto(`${host!.url}#audit`);
    await expect(a.getByTestId('audit-cached')).toHaveText('1');
    await a.getByTestId('audit-open-import').click();
    await expect(a.getByTestId('audit-import').getByRole('button', { name: 'Choose files…' })).toBeEnabled();

    const file = join(host!.home, 'more.ndjson');
    writeFileSync(file, [ev(1), ev(2), ev(3)].map((e) => JSON.stringify(e)).join('\n') + '\n');
    await page.getByTestId('audit-open-import').click();
    await page.getByTestId('audit-import-input').setInputFiles(file);
    await expect(page.getByTestId('audit-import-report').getByTestId('audit-import-accepted')).toHaveText('3 accepted');

    const report = a.getByTestId('audit-import-report');
    await expect(report).toHaveCount(1);
    await expect(report.locator('strong')).toHaveText('more.ndjson');
    await expect(report.getByTestId('audit-import-accepted')).toHaveText('3 accepted');
    await expect(a.getByTestId('audit-import').getByRole('button', { name: 'Choose files…' })).toBeEnabled();
    await expect(a.getByTestId('audit-cached')).toHaveText('4');
    expect(errors.flat()).toEqual([]);
  });

  test('a large file not in date order says rows are held back while the count added stands still; stopped then, the report says how many were read but not added, and the table holds just the events kept', async ({
    page,
  }) => {
    const errors = watchErrors(page);
    // Random dates, over 48 MB: staged (import.ts STAGE_MIN_BYTES); from its second batch on, the
    // rows fall among those written already, so they are held back to go in by date at the end.
    const total = 80_000;
    await importGenerated(page, 'shuffled.ndjson', total, 'random');
    const held = page.getByTestId('audit-import-held');
    await expect(held).toHaveText(
      /^Not in date order from about item [\d,]+: the rest is read first and added in date order at the end \([\d,]+ held back so far\)\.$/,
      { timeout: 30_000 },
    );
    await expect(page.getByRole('status').filter({ has: held })).toHaveAttribute('aria-live', 'polite');
    await page.getByTestId('audit-import-stop').click();

    const wording =
      /^Stopped by you: [\d,]+ events? kept; [\d,]+ read were not added, nor any of the file after them\. Import the file again to add the rest\.$/;
    const kept = await keptBy(page, wording, total);
    const stopped = await page.getByTestId('audit-import-stopped').innerText();
    const notAdded = Number(stopped.match(/([\d,]+) read were not added/)![1].replace(/,/g, ''));
    expect(notAdded).toBeGreaterThan(0);
    // Every row read is either kept or held back and not added: none rejected, none lost.
    const rows = Number(
      (await page.getByTestId('audit-import-report').locator('.head .muted').innerText())
        .match(/([\d,]+) rows/)![1]
        .replace(/,/g, ''),
    );
    expect(rows).toBe(kept + notAdded);
    expect(rows).toBeLessThan(total);
    await expect(page.getByTestId('audit-import-report').getByTestId('audit-import-rejected')).toHaveText('0 rejected');
    await expect(held).toBeHidden();
    await expectKept(page, kept);
    expect(errors).toEqual([]);
  });
});

/** How long the Sandbox holds each page of a slow sync's audit search. */
const SLOW_PAGE_MS = 1500;

/**
 * A host on a Sandbox of the test's own whose audit search holds each page's answer 1.5 s, so a
 * sync walks its ~60 pages slowly enough to stop; Sync pressed, its first page in (`beforeSync` runs
 * before the page is loaded, the host up).
 */
async function slowSync(page: Page, beforeSync?: () => Promise<void>): Promise<{ total: number }> {
  sandbox = await sandboxAt();
  await setFaults(sandbox.url, { auditDelayMs: SLOW_PAGE_MS });
  const all = await fetch(`${sandbox.url}/v1/analytics/audit-logs/events?per_page=1`, {
    headers: { 'x-magnific-api-key': 'sandbox-owner' },
  });
  const total = ((await all.json()) as { meta: { pagination: { total: number } } }).meta.pagination.total;
  host = await launch(newHome(), sandbox.env);
  await beforeSync?.();
  await page.goto(`${host.url}#audit`);
  await page.getByTestId('audit-sync').click();
  await expect(page.getByTestId('audit-progress')).toHaveText(SYNC_PROGRESS, { timeout: 30_000 });
  return { total };
}

const SYNC_PROGRESS =
  /^Window .+ → .+ UTC: [1-9]\d* pages,\s+[\d,]+ received, [\d,]+ new · [\d,]+ requests left today\s*$/;
const SYNC_STOPPED =
  /^Sync stopped by you after \d+ requests: the ([\d,]+) new events of [\d,]+ received stay cached, and the next sync goes on from where this one stopped\.$/;

/** Stop sync pressed: it says it is stopping until the page in hand is in, then the report says what stayed. Returns the events kept. */
async function stopSync(page: Page, total: number): Promise<number> {
  const stop = page.getByTestId('audit-sync-stop');
  await expect(stop).toHaveText('Stop sync');
  // The next page asked for is held by the Sandbox until let go, so the stopping state stays up
  // until it has been read: pressed as a page arrives, the sync would end at once.
  await setFaults(sandbox!.url, { auditDelayMs: 600_000 });
  const progress = page.getByTestId('audit-progress');
  const before = await progress.innerText();
  // In the page, not a poll from here: each failed poll was a step the runner gave a highlighted code frame.
  await expect(progress).not.toHaveText(before, { timeout: 10_000, useInnerText: true });
  await stop.click();
  await expect(stop).toBeDisabled();
  await expect(stop).toHaveText('Stopping…');
  await expect(page.getByTestId('audit-progress')).toContainText('· stopping after the page in hand…');
  await setFaults(sandbox!.url, { auditDelayMs: SLOW_PAGE_MS });
  const report = page.getByTestId('audit-sync-report');
  await expect(report).toHaveText(SYNC_STOPPED, { timeout: 30_000 });
  const kept = Number(SYNC_STOPPED.exec(await report.innerText())![1].replace(/,/g, ''));
  expect(kept).toBeGreaterThan(0);
  expect(kept).toBeLessThan(total);
  await expect(stop).toBeHidden();
  await expect(page.getByTestId('audit-sync')).toHaveText('Resume sync');
  await expect(page.getByTestId('audit-cached')).toHaveText(kept.toLocaleString('en-US'));
  await expect.poll(() => countOf(page)).toBe(kept);
  return kept;
}

test('Stop sync ends a running sync after the page in hand and says what stayed; Resume sync goes on from there and completes', async ({
  page,
}) => {
  const errors = watchErrors(page);
  const live = await watchLiveRegions(page);
  const { total } = await slowSync(page);
  await expect(page.getByTestId('audit-sync')).toHaveText('Syncing…');
  const kept = await stopSync(page, total);
  // The keyboard goes on from Sync, not from the top of the page, once the Stop button is gone.
  await expect(page.getByTestId('audit-sync')).toBeFocused();
  // Said by the status region the progress was in: the stopping, then the report.
  const spoke = (await live()).spoke;
  expect(spoke.some((t) => t.includes('stopping after the page in hand'))).toBe(true);
  expect(spoke.some((t) => SYNC_STOPPED.test(t))).toBe(true);

  await setFaults(sandbox!.url, { auditDelayMs: 0 });
  await page.getByTestId('audit-sync').click();
  const n = (total - kept).toLocaleString('en-US');
  await expect(page.getByTestId('audit-sync-report')).toHaveText(
    new RegExp(`^Sync complete: ${n} new of ${n} received in \\d+ requests\\.$`),
    { timeout: 60_000 },
  );
  await expect(page.getByTestId('audit-sync')).toHaveText('Sync');
  await expect(page.getByTestId('audit-cached')).toHaveText(total.toLocaleString('en-US'));
  await expect.poll(() => countOf(page)).toBe(total);
  expect(errors).toEqual([]);
});

test('a page reloaded while a sync runs shows its progress and Stop again; stopped from there, it reports what stayed', async ({
  page,
}) => {
  const errors = watchErrors(page);
  const { total } = await slowSync(page);
  await page.reload();
  await expect(page.getByTestId('audit-sync')).toHaveText('Syncing…');
  await expect(page.getByTestId('audit-progress')).toHaveText(SYNC_PROGRESS);
  expect(await axeViolations(page, { include: '[data-testid="audit-status"]' })).toEqual([]);
  await stopSync(page, total);
  expect(errors).toEqual([]);
});

test('Stop sync pressed in one tab: another tab showing the same sync says Stopping… at once, before the report', async ({
  page,
  context,
}) => {
  const errors = watchErrors(page);
  const { total } = await slowSync(page);
  const other = await context.newPage();
  const otherErrors = watchErrors(other);
  const seen = await watchTexts(other, ['audit-sync-stop', 'audit-progress', 'audit-sync-report']);
  await other.goto(`${host!.url}#audit`);
  await expect(other.getByTestId('audit-progress')).toHaveText(SYNC_PROGRESS);
  await expect(other.getByTestId('audit-sync-stop')).toHaveText('Stop sync');

  await page.getByTestId('audit-sync-stop').click();
  await expect(other.getByTestId('audit-sync-report')).toHaveText(SYNC_STOPPED, { timeout: 30_000 });
  await expect(other.getByTestId('audit-sync-stop')).toBeHidden();
  // The Sandbox holds the page in hand 1.5 s, but a Stop that comes as it arrives ends the sync at
  // once: the log of what the other tab showed tells, in order, that it said so before the report.
  expectSaidBefore(
    await seen(),
    { 'audit-sync-stop': /^Stopping…$/, 'audit-progress': /· stopping after the page in hand…/ },
    'audit-sync-report',
    SYNC_STOPPED,
  );
  const report = await other.getByTestId('audit-sync-report').innerText();
  expect(Number(SYNC_STOPPED.exec(report)![1].replace(/,/g, ''))).toBeLessThan(total);
  await expect(page.getByTestId('audit-sync-report')).toHaveText(report);
  expect([...errors, ...otherErrors]).toEqual([]);
});

test('a tab already showing the audit screen follows a sync another tab starts: Stop sync there makes the starting tab say Stopping…, and both show the report', async ({
  page,
  context,
}) => {
  // Tab A shows the audit screen, no sync running, before tab B (page) presses Sync.
  const a = await context.newPage();
  const errors = [page, a].map(watchErrors);
  const seenB = await watchTexts(page, ['audit-sync-stop', 'audit-progress', 'audit-sync-report']);
  const { total } = await slowSync(page, async () => {
    await a.goto(`${host!.url}#audit`);
    await expect(a.getByTestId('audit-cached')).toHaveText('0');
    await expect(a.getByTestId('audit-sync')).toHaveText('Sync');
    await expect(a.getByTestId('audit-sync-stop')).toBeHidden();
  });
  await expect(a.getByTestId('audit-sync')).toHaveText('Syncing…');
  await expect(a.getByTestId('audit-progress')).toHaveText(SYNC_PROGRESS);
  const kept = await stopSync(a, total);
  await expect(page.getByTestId('audit-sync-report')).toHaveText(SYNC_STOPPED, { timeout: 30_000 });
  await expect(page.getByTestId('audit-sync-stop')).toBeHidden();
  expectSaidBefore(
    await seenB(),
    { 'audit-sync-stop': /^Stopping…$/, 'audit-progress': /· stopping after the page in hand…/ },
    'audit-sync-report',
    SYNC_STOPPED,
  );
  await expect(page.getByTestId('audit-sync-report')).toHaveText(await a.getByTestId('audit-sync-report').innerText());
  await expect(page.getByTestId('audit-cached')).toHaveText(kept.toLocaleString('en-US'));
  expect(errors.flat()).toEqual([]);
});

test('an import by the mediadesk CLI into the same cache: the screen says one runs, then offers its new events without moving the rows on screen, and Show them brings them in', async ({
  page,
}) => {
  const errors = watchErrors(page);
  // The screen's own import refreshes it as before: no offer.
  await hostWith(page, [ev(0), ev(1), ev(2)]);
  const env = { ...process.env, MEDIADESK_HOME: host!.home };
  const cliEvent = (i: number) =>
    ev(100 + i, {
      date: new Date(Date.now() - 60_000 - i * 1000).toISOString(),
      member: { type: 'user', user_id: 9002, email: 'cli@e2e.test' },
    });
  const lines = (from: number, n: number) =>
    Array.from({ length: n }, (_, i) => JSON.stringify(cliEvent(from + i))).join('\n') + '\n';

  // An export piped into the CLI, the pipe held open: its import runs until it closes.
  const piped = spawn(process.execPath, [BIN, 'audit', 'import', '-'], { env, stdio: ['pipe', 'ignore', 'pipe'] });
  let pipedErr = '';
  piped.stderr.on('data', (d) => (pipedErr += d));
  const pipedExit = new Promise((resolve) => piped.once('exit', resolve));
  piped.stdin.write(lines(0, 20));
  const note = page.getByTestId('audit-elsewhere');
  await expect(note).toHaveText(
    'An import in another process (such as the mediadesk CLI) is adding to this cache. What it adds can be shown here once it ends; an import here goes in alongside it.',
    { timeout: 15_000 },
  );
  await expect(page.getByRole('status').filter({ has: note })).toHaveAttribute('aria-live', 'polite');
  await expect(page.getByTestId('audit-changed')).toBeHidden();
  await expect(page.getByTestId('audit-open-import')).toHaveText('Import…');
  piped.stdin.end();
  expect(await pipedExit, pipedErr).toBe(0);

  // Its end: the note goes, the new events are offered, the rows on screen and the counts stay.
  const offer = page.getByTestId('audit-changed');
  await expect(offer).toContainText('20 new events in the cache', { timeout: 15_000 });
  await expect(note).toBeHidden();
  await expect(page.getByRole('status').filter({ has: offer })).toHaveAttribute('aria-live', 'polite');
  expect(await countOf(page)).toBe(3);
  await expect(page.getByTestId('audit-cached')).toHaveText('3');
  expect(await column(page, 3)).toEqual(['auditor@e2e.test', 'auditor@e2e.test', 'auditor@e2e.test']);

  // A file imported by the CLI meanwhile adds to the offer.
  const file = join(host!.home, 'cli.ndjson');
  writeFileSync(file, lines(20, 5));
  const r = await runCli(['audit', 'import', file], { env });
  expect(r.code, r.err).toBe(0);
  await expect(offer).toContainText('25 new events in the cache', { timeout: 15_000 });

  await page.getByTestId('audit-show-changes').click();
  await expect(offer).toBeHidden();
  await expect.poll(() => countOf(page)).toBe(28);
  await expect(page.getByTestId('audit-cached')).toHaveText('28');
  // Newest first: the CLI's 20 events on top, filling the first screenful of rows.
  await expect
    .poll(async () => {
      const shown = (await column(page, 3)).slice(0, 20);
      return shown.length >= 10 && shown.every((e) => e === 'cli@e2e.test');
    })
    .toBe(true);
  await expect(page.getByTestId('audit-table')).toBeFocused();
  expect(errors).toEqual([]);
});

test('a member key gets the 403 state that says who can see audit logs', async ({ page, launch }) => {
  const errors = watchErrors(page);
  const home = newHome();
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ sandboxKey: 'sandbox-member' }));
  host = await launch(home);
  await page.goto(`${host.url}#audit`);
  await page.getByTestId('audit-sync').click();
  const blocker = page.getByTestId('audit-blocker-forbidden');
  await expect(blocker).toBeVisible();
  await expect(blocker).toContainText('team admin or owner');
  await expect(blocker).toHaveAttribute('role', 'alert');
  // The cache stays usable: nothing synced, an empty table, not an error.
  await expect(page.getByTestId('audit-count')).toHaveText('0 events');
  expect(errors).toEqual([]);
});

test('Tab from Import… or Export… goes into its panel; Escape brings focus back to the button', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  host = await launch(newHome());
  await page.goto(`${host.url}#audit`);
  for (const which of ['import', 'export'] as const) {
    const button = page.getByTestId(`audit-open-${which}`);
    await button.focus();
    await page.keyboard.press('Enter');
    const panel = page.locator(`#${await button.getAttribute('aria-controls')}`);
    await expect(panel).toBeVisible();
    await page.keyboard.press('Tab');
    expect(await panel.evaluate((p) => p.contains(document.activeElement))).toBe(true);
    await page.keyboard.press('Escape');
    await expect(panel).toBeHidden();
    await expect(button).toBeFocused();
  }
  expect(errors).toEqual([]);
});

test('audit files dropped in the browser: two of one name both import, and one the browser cannot read is named while the rest import', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  const home = newHome();
  host = await launch(home);
  const files = ['a', 'b'].map((dir, i) => {
    mkdirSync(join(home, dir));
    writeFileSync(join(home, dir, 'export.json'), JSON.stringify([ev(70 + i)]));
    return join(home, dir, 'export.json');
  });
  const gone = join(home, 'gone.json');
  writeFileSync(gone, JSON.stringify([ev(72)]));
  await page.goto(`${host.url}#audit`);
  await page.getByTestId('audit-open-import').click();
  await dropFiles(page, [...files, gone], () => rmSync(gone), '[aria-label="Drop audit files here"]');

  const reports = page.getByTestId('audit-import-report');
  await expect(reports).toHaveCount(2);
  await expect(reports.getByTestId('audit-import-accepted')).toHaveText(['1 accepted', '1 accepted']);
  await expect(page.getByTestId('audit-import-not-copied')).toHaveText(
    'Not imported, could not be copied: gone.json: the browser could not read it (it may have been moved, changed or deleted since it was dropped)',
  );
  expect(errors).toEqual([]);
});

test('the diff of a state that is an empty object lists the fields that went or came, and no "(value)" line', async ({
  page,
}) => {
  const errors = watchErrors(page);
  await hostWith(page, [
    ev(80, { action: { old_state: { role: 'member', seats: 3 }, new_state: {} } }),
    ev(81, { action: { old_state: {}, new_state: { role: 'admin' } } }),
  ]);

  const drawer = page.getByTestId('audit-drawer');
  const diff = drawer.getByTestId('audit-diff');
  await openNextRow(page);
  await expect(page.getByTestId('audit-drawer-id')).toHaveText('evt_e2e_80');
  await expect(diff.locator('tbody tr')).toHaveCount(2);
  await expect(diff.locator('tr[data-kind="removed"] th')).toHaveText(['role', 'seats']);
  await expect(drawer.getByText('2 changes', { exact: true })).toBeVisible();

  await page.keyboard.press('Escape');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('audit-drawer-id')).toHaveText('evt_e2e_81');
  await expect(diff.locator('tbody tr')).toHaveCount(1);
  await expect(diff.locator('tr[data-kind="added"] th')).toHaveText('role');
  await expect(diff.locator('tr[data-kind="added"] td.new')).toHaveText('"admin"');
  expect(errors).toEqual([]);
});

test('the diff keeps a dotted key apart from a nested field and shows an item taken from a list as one removal', async ({
  page,
}) => {
  const errors = watchErrors(page);
  await hostWith(page, [
    ev(90, {
      action: {
        old_state: { 'limits.seats': 3, limits: { seats: 3 }, groups: ['design', 'legal', 'sales', 'support'] },
        new_state: { 'limits.seats': 3, limits: { seats: 5 }, groups: ['design', 'sales', 'support'] },
      },
    }),
  ]);

  await openNextRow(page);
  const drawer = page.getByTestId('audit-drawer');
  await expect(page.getByTestId('audit-drawer-id')).toHaveText('evt_e2e_90');
  const diff = drawer.getByTestId('audit-diff');
  await expect(drawer.getByText('2 changes', { exact: true })).toBeVisible();
  await expect(diff.locator('tr[data-kind="changed"] th')).toHaveText(['limits.seats']);
  await expect(diff.locator('tr[data-kind="changed"] td.new')).toHaveText(['5']);
  await expect(diff.locator('tr[data-kind="removed"] th')).toHaveText(['groups[1]']);
  await expect(diff.locator('tr[data-kind="removed"] td.old')).toHaveText(['"legal"']);
  await expect(diff.locator('tr[data-kind="same"] th')).toHaveText([
    '["limits.seats"]',
    'groups[0]',
    'groups[2→1]',
    'groups[3→2]',
  ]);
  expect(errors).toEqual([]);
});

test('a facet cut to its top 50 says of how many, and actors without a user id are one entry per e-mail that filters', async ({
  page,
}) => {
  const errors = watchErrors(page);
  const types = Array.from({ length: 51 }, (_, i) =>
    ev(100 + i, { action: { event_type: `team.e2e_kind${String(i).padStart(2, '0')}.changed` } }),
  );
  const idless = [
    ev(200, { member: { type: 'api_key', user_id: null, email: 'ci-key@e2e.test' } }),
    ev(201, { member: { type: 'system', user_id: null, email: null } }),
    ev(202, { member: { type: 'api_key', user_id: null, email: 'ci-key@e2e.test' } }),
    ev(203, { member: { type: 'api_key', user_id: null, email: 'deploy-key@e2e.test' } }),
  ];
  await hostWith(page, [...types, ...idless]);

  // 51 new types and team.member.role_changed (the four without a user id): 52, of which 50 are listed.
  await expect(page.getByTestId('audit-facet-types').locator('li')).toHaveCount(50);
  await expect(page.getByTestId('audit-facet-types-top')).toHaveText(
    'Top 50 of 52; narrow the filters or search to reach the rest.',
  );
  await expect(page.getByTestId('audit-facet-members-top')).toBeHidden();
  // The Event type select lists the same 50, and says so; the Member select is whole.
  await expect(page.getByTestId('audit-event-type').locator('option:not([disabled])')).toHaveCount(51);
  await expect(page.getByTestId('audit-event-type-cut')).toHaveText(
    'Only the busiest 50 of 52: search to reach the rest',
  );
  await expect(page.getByTestId('audit-member-cut')).toHaveCount(0);

  // Each actor without a user id is its own entry, by e-mail and type.
  const facet = page.getByTestId('audit-facet-members');
  const ciKey = facet.getByRole('button', { name: /^ci-key@e2e\.test \(api_key\)/ });
  const system = facet.getByRole('button', { name: /^no e-mail \(system\)/ });
  await expect(ciKey).toContainText('2');
  await expect(system).toContainText('1');
  await expect(facet.getByRole('button', { name: /^deploy-key@e2e\.test \(api_key\)/ })).toContainText('1');
  await ciKey.click();
  await expect.poll(() => countOf(page)).toBe(2);
  await expect(ciKey).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByTestId('audit-member')).toHaveValue('no-user-id:ci-key@e2e.test');
  await expect.poll(async () => new Set(await column(page, 3))).toEqual(new Set(['ci-key@e2e.test']));
  // A second one adds to it, and its chip takes it away again.
  await system.click();
  await expect.poll(() => countOf(page)).toBe(3);
  await page.getByRole('button', { name: 'Remove member no e-mail (system)' }).click();
  await expect.poll(() => countOf(page)).toBe(2);
  // The Member select picks one too.
  await page.getByTestId('audit-member').selectOption({ label: 'deploy-key@e2e.test (api_key) (1)' });
  await expect.poll(() => countOf(page)).toBe(1);
  await expect(ciKey).toHaveAttribute('aria-pressed', 'false');
  await page.getByTestId('audit-member').selectOption('');
  await expect.poll(() => countOf(page)).toBe(55);
  expect(errors).toEqual([]);
});

test('folders by the name their events carry, and event details in words: ids and keys only as tooltips and in the raw event', async ({
  page,
}) => {
  const errors = watchErrors(page);
  await hostWith(page, [
    ev(300, {
      action: { folder_name: 'Podcast art / Hero shots', data: { folder_reference: 'fld_vw4_3', role: 'admin' } },
    }),
    // The service resolves the name; an event without it still shows the name its folder's others carry.
    ev(301, { action: { folder_name: undefined, data: { folder_reference: 'fld_vw4_3' } } }),
    ev(302, { action: { folder_name: undefined, data: { folder_reference: 'fld_nameless' } } }),
  ]);
  const cell = (id: number) => page.locator(`[data-event-id="evt_e2e_${id}"]`).getByTestId('audit-folder-cell');
  await expect(cell(300)).toHaveText('Podcast art / Hero shots');
  await expect(cell(300)).toHaveAttribute('title', 'Podcast art / Hero shots (folder id fld_vw4_3)');
  await expect(cell(301)).toHaveText('Podcast art / Hero shots');
  // No event names it: its id is all there is.
  await expect(cell(302)).toHaveText('fld_nameless');

  await page.locator('[data-event-id="evt_e2e_300"]').dblclick();
  const drawer = page.getByTestId('audit-drawer');
  await expect(drawer.locator('section').first().locator('dt')).toHaveText([
    'Event type',
    'Verb',
    'Status',
    'Resource',
    'Request ID',
    'Correlation ID',
    'Duration (ms)',
    'Project',
    'Folder',
  ]);
  await expect(drawer.locator('dt', { hasText: 'Request ID' })).toHaveAttribute('title', 'request_id');
  await expect(drawer.getByTestId('audit-data').locator('dt')).toHaveText(['Folder ID', 'Role']);
  // The raw keys and values stay a click away.
  await drawer.getByText('Raw event (JSON)').click();
  await expect(drawer.getByTestId('audit-raw')).toContainText('"folder_reference": "fld_vw4_3"');
  expect(errors).toEqual([]);
});

test('"All events of this request" and of a correlation list all of them even when a group or folder filter was set', async ({
  page,
}) => {
  const errors = watchErrors(page);
  // One request (and correlation) over two groups and two folders, and an event of another request.
  await hostWith(page, [
    ev(200, { action: { data: { group_id: 101, folder_reference: 'fld_a' } } }),
    ev(201, { action: { data: { group_id: 102, folder_reference: 'fld_b' } } }),
    ev(202, { action: { data: { group_id: 102, folder_reference: 'fld_b' } } }),
    ev(203, {
      action: {
        request_id: 'req_other',
        correlation_id: 'cor_other',
        data: { group_id: 101, folder_reference: 'fld_a' },
      },
    }),
  ]);

  await page.getByTestId('audit-group').fill('101');
  await page.getByTestId('audit-group').press('Enter');
  await expect.poll(() => countOf(page)).toBe(2);
  await page.locator('[data-event-id="evt_e2e_200"]').dblclick();
  await expect(page.getByTestId('audit-drawer').getByRole('heading', { name: /Same request/ })).toHaveText(
    'Same request (3 events)',
  );
  await page.getByTestId('audit-all-request').click();
  await expect.poll(() => countOf(page)).toBe(3);
  await expect(page.getByTestId('audit-group')).toHaveValue('');
  await expect(page.getByTestId('audit-request')).toHaveValue(REQ);

  await page.getByTestId('audit-clear').click();
  await page.getByTestId('audit-folder').fill('fld_a');
  await page.getByTestId('audit-folder').press('Enter');
  await expect.poll(() => countOf(page)).toBe(2);
  await page.locator('[data-event-id="evt_e2e_200"]').dblclick();
  await page.getByTestId('audit-all-correlation').click();
  await expect.poll(() => countOf(page)).toBe(3);
  await expect(page.getByTestId('audit-folder')).toHaveValue('');
  await expect(page.getByTestId('audit-correlation-chip')).toBeVisible();
  expect(errors).toEqual([]);
});

test('Enter on a column header sorts by it from the keyboard, also while a row is selected', async ({ page }) => {
  const errors = watchErrors(page);
  await hostWith(page, [ev(210), ev(211), ev(212)]);
  const dateHeader = page.getByRole('columnheader', { name: /Date/ });
  await page.getByTestId('audit-table').focus();
  await page.keyboard.press('ArrowDown');
  await expect(page.locator('[data-testid="audit-row"][aria-selected="true"]')).toHaveCount(1);
  await page.keyboard.press('Tab');
  await expect(page.getByTestId('sort-date')).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(dateHeader).toHaveAttribute('aria-sort', 'ascending');
  await expect(page.getByTestId('audit-drawer')).toHaveCount(0);
  await expect(page.getByTestId('audit-row').first()).toHaveAttribute('data-event-id', 'evt_e2e_212');
  expect(errors).toEqual([]);
});

test('opening another row while the drawer is open moves focus into it, so Escape closes it and returns to the table', async ({
  page,
}) => {
  const errors = watchErrors(page);
  await hostWith(page, [ev(220), ev(221)]);
  await openNextRow(page);
  await expect(page.getByTestId('audit-drawer-id')).toHaveText('evt_e2e_220');
  // Back to the table with the drawer still open, and the next row opened from there.
  await openNextRow(page);
  await expect(page.getByTestId('audit-drawer-id')).toHaveText('evt_e2e_221');
  await expect(page.getByTestId('audit-drawer')).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('audit-drawer')).toHaveCount(0);
  await expect(page.getByTestId('audit-table')).toBeFocused();
  expect(errors).toEqual([]);
});

test('the timeline switched to hours while a filter change is still counting by day keeps the hours: the late day answer is not drawn under "Events per hour"', async ({
  page,
}) => {
  const errors = watchErrors(page);
  // The page's commands go over the host's WebSocket; once `holding`, the answer to a day timeline
  // (the one a filter change asks for with the facets) is held back until the test lets it go.
  let holding = false;
  const held = await holdAnswers(
    page,
    (cmd, payload) => holding && cmd === 'audit.timeline' && payload.bucket === 'day',
  );
  // Three events on one day and two on the next, each in an hour of its own: a day's peak is 3, an hour's 1.
  const dayStart =
    Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()) - 3 * 86_400_000;
  const at = (day: number, hour: number) => new Date(dayStart + day * 86_400_000 + hour * 3_600_000).toISOString();
  await hostWith(page, [
    ev(230, { date: at(0, 1) }),
    ev(231, { date: at(0, 2) }),
    ev(232, { date: at(0, 3) }),
    ev(233, { date: at(1, 5) }),
    ev(234, { date: at(1, 6) }),
  ]);
  const chart = page.getByTestId('audit-timeline');
  await expect(chart).toHaveAttribute('aria-label', 'Events per day, 5 in total, peak 3');

  holding = true;
  await page.getByTestId('audit-search').fill('Zebracorn');
  await page.getByTestId('audit-search').press('Enter');
  await expect.poll(() => held.length).toBe(1);
  await page.getByTestId('audit-bucket-hour').click();
  await expect(chart).toHaveAttribute('aria-label', 'Events per hour, 5 in total, peak 1');
  holding = false;
  held.shift()!();
  // Nothing is asked after the late answer, so there is no later answer to wait for: it is given a
  // moment to arrive, and the hours must still be what is drawn.
  await page.waitForTimeout(1000);
  await expect(chart).toHaveAttribute('aria-label', 'Events per hour, 5 in total, peak 1');
  await expect(page.getByRole('radio', { name: 'Hour' })).toHaveAttribute('aria-checked', 'true');
  expect(errors).toEqual([]);
});

test('the Export message says when the filters changed since, so it never reads as about the view shown now', async ({
  page,
}) => {
  const errors = watchErrors(page);
  await hostWith(page, [ev(240), ev(241), ev(242, { action: { event_type: 'team.member.removed' } })]);
  await page.getByTestId('audit-open-export').click();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('audit-export-run').click()]);
  const said = `Downloaded ${download.suggestedFilename()} (3 rows): find it in your browser's downloads.`;
  const result = page.getByTestId('audit-export-result');
  await expect(result).toHaveText(said);

  // Changing the view from outside the popover may close it; the message is read with it open.
  const reopen = async () => {
    if (!(await page.getByTestId('audit-export-run').isVisible())) await page.getByTestId('audit-open-export').click();
  };
  await page.getByTestId('audit-event-type').selectOption('team.member.removed');
  await expect.poll(() => countOf(page)).toBe(1);
  await reopen();
  await expect(result).toHaveText(`${said} (the view before the filters or sort changed, not the one shown now)`);
  // Back to the view that was exported: the message describes it again.
  await page.getByTestId('audit-event-type').selectOption('');
  await expect.poll(() => countOf(page)).toBe(3);
  await expect(result).toHaveText(said);
  // A sort change alone is another view too (the file's row order).
  await page.getByTestId('sort-date').click();
  await expect(page.getByRole('columnheader', { name: /Date/ })).toHaveAttribute('aria-sort', 'ascending');
  await reopen();
  await expect(page.getByTestId('audit-export-stale')).toBeVisible();
  expect(errors).toEqual([]);
});

test('the drawer shows line breaks in a value as line breaks, as text', async ({ page }) => {
  const errors = watchErrors(page);
  await hostWith(page, [
    ev(250, { action: { folder_name: 'line1\nline2', data: { note: '<b>bold</b>\nsecond line' } } }),
  ]);
  await openNextRow(page);
  const drawer = page.getByTestId('audit-drawer');
  await expect(page.getByTestId('audit-drawer-id')).toHaveText('evt_e2e_250');
  // innerText is the text as laid out: a line break collapsed to a space reads 'line1 line2'.
  expect(await drawer.getByTestId('audit-field-folder_name').innerText()).toBe('line1\nline2');
  expect(await drawer.getByTestId('audit-data').locator('dd').first().innerText()).toBe('<b>bold</b>\nsecond line');
  expect(await drawer.locator('b').count()).toBe(0);
  expect(errors).toEqual([]);
});

test("a very long value scrolls in a box of its own, from the keyboard too, and the drawer's other sections stay in reach", async ({
  page,
}) => {
  const errors = watchErrors(page);
  const long = 'x'.repeat(100_000);
  await hostWith(page, [ev(260, { action: { folder_name: long } })]);
  await openNextRow(page);
  const drawer = page.getByTestId('audit-drawer');
  await expect(page.getByTestId('audit-drawer-id')).toHaveText('evt_e2e_260');
  const cell = drawer.getByTestId('audit-field-folder_name');
  await expect(cell).toHaveText(long);
  // The box is capped, and the Member section follows right below it (not 25,000 px further down).
  const box = (await cell.boundingBox())!;
  expect(box.height).toBeLessThan(300);
  const member = (await drawer.getByRole('heading', { name: 'Member', exact: true }).boundingBox())!;
  expect(member.y - (box.y + box.height)).toBeLessThan(50);
  // It is a named region that scrolls from the keyboard; a short value is no Tab stop.
  const region = drawer.getByRole('region', { name: 'Folder (scrolls)' });
  await expect(region).toHaveAttribute('tabindex', '0');
  await expect(drawer.getByTestId('audit-field-project_name').locator('[tabindex]')).toHaveCount(0);
  await region.focus();
  await page.keyboard.press('End');
  await expect.poll(() => region.evaluate((el) => el.scrollTop)).toBeGreaterThan(0);
  const drawerAxe = () => axeViolations(page, { include: '[data-testid="audit-drawer"]' });
  expect(await drawerAxe()).toEqual([]);
  // The event as received, opened, holds the same long value: it scrolls from the keyboard too.
  await drawer.getByText('Raw event (JSON)').click();
  const raw = drawer.getByRole('region', { name: 'Raw event (JSON) (scrolls)' });
  await expect(raw).toHaveAttribute('tabindex', '0');
  await expect(raw).toContainText(long.slice(0, 1000));
  expect(await drawerAxe()).toEqual([]);
  expect(errors).toEqual([]);
});
