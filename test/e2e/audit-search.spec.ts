import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import { AUDIT_SEARCH_EXAMPLES } from '../../shared/contract/audit.ts';
import { newHome, watchErrors, type HostHandle } from './host.ts';

/**
 * A team admin's first minutes in the audit screen: sync from the Sandbox, search as a person
 * types (the placeholder's examples, a surname, part of an event type and of an e-mail), read why
 * nothing matched, and open an event's detail with one click, beside the table.
 */
let host: HostHandle | undefined;

const countOf = async (page: Page) => Number((await page.getByTestId('audit-count').innerText()).replace(/[^\d]/g, ''));
const column = (page: Page, n: number) =>
  page.locator(`[data-testid="audit-row"] [role="gridcell"]:nth-child(${n})`).allInnerTexts();

async function search(page: Page, text: string, all: number): Promise<number> {
  await page.getByTestId('audit-search').fill(text);
  await page.getByTestId('audit-search').press('Enter');
  await expect.poll(() => countOf(page), { message: text }).not.toBe(all);
  return countOf(page);
}

test('sync, then search by parts of names, e-mails and event types; an empty result says why; one click shows an event beside the table', async ({
  page,
  launch,
}) => {
  test.setTimeout(120_000);
  const errors = watchErrors(page);
  await page.setViewportSize({ width: 1440, height: 900 });
  host = await launch(newHome());
  await page.goto(`${host.url}#audit`);
  await page.getByTestId('audit-sync').click();
  await expect(page.getByTestId('audit-sync-report')).toContainText('Sync complete', { timeout: 60_000 });
  await expect(page.getByTestId('audit-freshness')).toHaveText('Last synced just now');
  const all = await countOf(page);
  expect(all).toBeGreaterThan(1000);

  // The placeholder names its examples, and each finds events.
  const placeholder = (await page.getByTestId('audit-search').getAttribute('placeholder')) ?? '';
  for (const example of AUDIT_SEARCH_EXAMPLES) {
    expect(placeholder).toContain(example);
    expect(await search(page, example, all), example).toBeGreaterThan(0);
  }
  await search(page, 'role_chan', all);
  expect(new Set(await column(page, 2))).toEqual(new Set(['team.member.role_changed']));
  await search(page, 'folder', all);
  for (const type of await column(page, 2)) expect(type).toContain('folder');

  // A member's surname, as it sits inside their e-mail (first.last.id@sandbox.test).
  const emails = await page.getByTestId('audit-member').locator('option').allInnerTexts();
  const surname = emails.map((t) => /^[a-z]+\.([a-z]+)\.\d+@/.exec(t)?.[1]).find(Boolean)!;
  expect(surname).toBeTruthy();
  expect(await search(page, surname, all)).toBeGreaterThan(0);
  for (const who of await column(page, 3)) expect(who).toContain(`.${surname}.`);
  expect(await search(page, 'box.tes', all)).toBeGreaterThan(0);
  for (const who of await column(page, 3)) expect(who).toContain('sandbox.test');

  // Nonsense: the table says why it is empty and what to try.
  await search(page, 'zzqxv', all);
  await expect(page.getByTestId('audit-empty')).toContainText(
    `No events match “zzqxv” in the ${all.toLocaleString('en')} cached events from `,
  );
  await expect(page.getByTestId('audit-empty')).toContainText('Try part of a name, e-mail or event type.');
  // With a filter set, the explanation names it.
  await page.getByTestId('audit-clear').click();
  await expect.poll(() => countOf(page)).toBe(all);
  await page.getByTestId('audit-event-type').selectOption('team.member.invited');
  await expect.poll(() => countOf(page)).toBeLessThan(all);
  await search(page, 'zzqxv', all);
  await expect(page.getByTestId('audit-empty')).toContainText(
    'or clearing the filters (1 active: event type team.member.invited).',
  );
  await page.getByTestId('audit-clear').click();
  await expect.poll(() => countOf(page)).toBe(all);

  // One click: the detail opens beside the table, whose rows stay in view.
  await expect(page.getByTestId('audit-detail-hint')).toHaveText('Click an event for its details.');
  const row = page.getByTestId('audit-row').nth(3);
  const id = await row.getAttribute('data-event-id');
  await row.click();
  const detail = page.getByTestId('audit-drawer');
  await expect(page.getByTestId('audit-drawer-id')).toHaveText(id!);
  const [tableBox, detailBox] = [await page.getByTestId('audit-table').boundingBox(), await detail.boundingBox()];
  expect(detailBox!.x).toBeGreaterThanOrEqual(tableBox!.x + tableBox!.width);
  await expect(row).toBeInViewport();
  // The table keeps the keyboard: the next event shows in the detail.
  await page.keyboard.press('ArrowDown');
  await expect(page.getByTestId('audit-drawer-id')).toHaveText(
    (await page.getByTestId('audit-row').nth(4).getAttribute('data-event-id'))!,
  );
  await page.keyboard.press('Escape');
  await expect(detail).toHaveCount(0);
  await row.click();
  await page.getByRole('button', { name: 'Close', exact: true }).click();
  await expect(detail).toHaveCount(0);

  // A narrow window puts the detail below the table.
  await page.setViewportSize({ width: 900, height: 1000 });
  await row.click();
  const [narrowTable, narrowDetail] = [await page.getByTestId('audit-table').boundingBox(), await detail.boundingBox()];
  expect(narrowDetail!.y).toBeGreaterThanOrEqual(narrowTable!.y + narrowTable!.height);

  // After a reload the screen still says when it last synced.
  await page.reload();
  await expect(page.getByTestId('audit-freshness')).toHaveText('Last synced just now');
  expect(errors).toEqual([]);
});
