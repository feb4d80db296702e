import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, test } from './fixtures.ts';
import { newHome, type HostHandle } from './host.ts';
import { desk, makeImages, watchErrors } from './studio-helpers.ts';

/**
 * mediadesk:// links through the web host, as the desktop app takes them: a second start
 * (`mediadesk web --open LINK` while the host runs) tells the open page `studio.handOff`, and the
 * page shows the screen the link names, filled, with nothing started.
 */

const run = promisify(execFile);
/** A second start on the host's data folder, handing it `links`. */
async function secondStart(host: HostHandle, ...links: string[]) {
  const r = await run(process.execPath, ['electron/host/web/main.ts', ...links.flatMap((l) => ['--open', l])], {
    env: { ...process.env, MEDIADESK_HOME: host.home },
  });
  expect(r.stderr).toContain(`handed ${links.length} to the running host's pages`);
}
const link = (host: string, params: Record<string, string>) => `mediadesk://${host}?${new URLSearchParams(params)}`;

test('a link into the Studio: the folder as its input, the tool and the preset set, nothing started', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  const host = await launch();
  const shoot = mkdtempSync(join(tmpdir(), 'md-link shoot é-'));
  await makeImages(shoot, 3);
  await desk(host, 'presets.save', { name: 'Big one', tool: 'upscaler-precision', params: { scale_factor: 8 } });
  await page.goto(`${host.url}#queue`);
  await expect(page.getByTestId('screen-queue')).toBeVisible();

  await secondStart(host, link('studio', { tool: 'upscaler-precision', folder: shoot, preset: 'Big one' }));
  await expect(page.getByTestId('screen-studio')).toBeVisible();
  await expect(page.getByTestId('tool-select')).toHaveValue('upscaler-precision');
  await expect(page.getByTestId('check-summary')).toHaveText('3 images ready');
  await expect(page.getByTestId('field-scale_factor')).toHaveValue('8');
  await expect(page.getByTestId('handed-note')).toHaveCount(0);
  expect(await desk(host, 'batches.list', {})).toEqual([]);
  expect(errors).toEqual([]);
});

test('a link into the Queue selects its batch; an unknown batch is said, and nothing changes', async ({
  page,
  launch,
}) => {
  const host = await launch();
  const dir = mkdtempSync(join(tmpdir(), 'md-link-queue-'));
  await makeImages(dir, 2);
  await desk(host, 'settings.set', { concurrency: 1 });
  const { batch: older } = await desk<{ batch: { id: string } }>(host, 'batches.start', {
    tool: 'upscaler-precision',
    inputs: [dir],
    params: {},
  });
  await desk(host, 'batches.start', { tool: 'skin-creative', inputs: [dir], params: {} });
  await page.goto(`${host.url}#queue`);
  const rows = page.getByTestId('batch-row');
  await expect(rows).toHaveCount(2);
  // The newest is shown first, by default.
  await expect(rows.nth(0)).toHaveAttribute('aria-pressed', 'true');

  await secondStart(host, link('queue', { batch: older.id }));
  await expect(rows.nth(1)).toHaveAttribute('aria-pressed', 'true');
  await expect(rows.nth(0)).toHaveAttribute('aria-pressed', 'false');
  await expect(page.getByTestId('queue-handed-note')).toHaveCount(0);

  const before = await desk<{ id: string }[]>(host, 'batches.list', {});
  await secondStart(host, link('queue', { batch: 'b_not_here' }));
  await expect(page.getByTestId('queue-handed-note')).toHaveText(
    'The link names batch “b_not_here”, which is not in the queue. Nothing was changed.',
  );
  await expect(rows.nth(1)).toHaveAttribute('aria-pressed', 'true');
  expect((await desk<{ id: string }[]>(host, 'batches.list', {})).map((b) => b.id)).toEqual(before.map((b) => b.id));
});

test('a link into Audit opens its event beside the table; a link given at start waits for the page', async ({
  page,
  launch,
}) => {
  const home = newHome();
  const file = join(home, 'events.ndjson');
  const event = (i: number) => ({
    event_id: `evt_link_${i}`,
    date: new Date(Date.now() - 3_600_000 - i * 1000).toISOString(),
    member: { type: 'user', user_id: 9001, email: 'auditor@e2e.test' },
    category: 'team',
    source: { project: 'Zebracorn', platform: 'web', referer: null },
    action: { event_type: 'team.member.role_changed', verb: 'update', status: 'succeeded', resource_id: `usr_${i}` },
  });
  writeFileSync(file, [1, 2, 3].map((i) => JSON.stringify(event(i))).join('\n') + '\n');
  // First start, with a link to an event not yet in the cache: the page says so when it opens.
  const host = await launch(home, {}, 0, ['--open', link('audit', { event: 'evt_link_2' })]);
  await page.goto(host.url);
  await expect(page.getByTestId('audit-handed-note')).toHaveText(
    'The link names audit event “evt_link_2”, which is not in the audit cache (Sync, or Import the file that holds it).',
  );
  await expect(page.getByTestId('audit-drawer')).toHaveCount(0);

  // Imported as a person does (a browser sends the file; the host reads no path it was not given).
  await page.getByTestId('audit-open-import').click();
  await page.getByTestId('audit-import-input').setInputFiles(file);
  await expect(page.getByTestId('audit-import-accepted')).toHaveText('3 accepted');
  await page.getByTestId('audit-open-import').click();
  await secondStart(host, link('audit', { event: 'evt_link_2' }));
  await expect(page.getByTestId('audit-drawer-id')).toHaveText('evt_link_2');
  await expect(page.getByTestId('audit-handed-note')).toHaveCount(0);
});

test('a hostile link is refused in the Studio, saying why; the host takes no hand-off without its token', async ({
  page,
  launch,
}) => {
  const host = await launch();
  await page.goto(`${host.url}#studio`);
  await expect(page.getByTestId('screen-studio')).toBeVisible();
  await secondStart(host, 'mediadesk://studio?folder=/tmp/../etc&tool=upscaler-precision');
  await expect(page.getByTestId('handed-note')).toContainText('steps up with ".."');
  const refused = await fetch(`${host.origin}/hand-off`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ args: ['mediadesk://queue?batch=x'], cwd: '/' }),
  });
  expect(refused.status).toBe(401);
});

test('Settings, System: a switch per integration, each said in one line, saved', async ({ page, launch }) => {
  const errors = watchErrors(page);
  const host = await launch();
  await page.goto(`${host.url}#settings`);
  const section = page.getByTestId('system-settings');
  await expect(section.getByRole('heading', { name: 'System' })).toBeVisible();
  const menu = section.getByRole('checkbox', { name: '“Process with MediaDesk” in the file manager' });
  const links = section.getByRole('checkbox', { name: 'Open mediadesk:// links' });
  for (const name of ['MediaDesk in Send To (Windows)', 'Finder Quick Action (macOS)'])
    await expect(section.getByRole('checkbox', { name })).toBeChecked();
  await expect(links).toHaveAccessibleDescription(
    'A link opens a tool with a folder, a batch in the Queue or an audit event. A link never starts work.',
  );
  await menu.uncheck();
  await expect(page.getByTestId('saved')).toHaveText('Saved: Process with MediaDesk in the file manager.');
  await links.uncheck();
  await expect(page.getByTestId('saved')).toHaveText('Saved: mediadesk:// links.');
  expect(await desk(host, 'settings.get')).toMatchObject({
    osContextMenu: false,
    osSendTo: true,
    osQuickAction: true,
    osLinks: false,
  });
  await page.reload();
  await expect(menu).not.toBeChecked();
  expect(errors).toEqual([]);
});
