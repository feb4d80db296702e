import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { axeViolations } from './axe.ts';
import { expect, test } from './fixtures.ts';
import { newHome, watchErrors } from './host.ts';
import { runCli } from '../cli.ts';
import { SANDBOX_HEC_TOKEN } from '../../electron/sandbox/siem.ts';

/** Five events in one hour of 2026-03-01, imported into `home`'s cache by the CLI. */
async function importFive(home: string): Promise<void> {
  const file = join(home, 'events.ndjson');
  const events = [0, 1, 2, 3, 4].map((i) => ({
    event_id: `fwd_${i}`,
    date: new Date(Date.UTC(2026, 2, 1, 10) + i * 60_000).toISOString(),
    action: { event_type: 'team.member.role_changed', verb: 'update', status: 'succeeded' },
    member: { type: 'user', user_id: 1, email: 'a@example.test' },
    category: 'team',
  }));
  writeFileSync(file, events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  expect((await runCli(['audit', 'import', file], { env: { MEDIADESK_HOME: home } })).code).toBe(0);
}

/** The Audit screen's forwarding panel over the web host: each sink's state, and Forward now. */
test('shows a sink behind by the cached events, then up to date after Forward now', async ({ page, launch }) => {
  const errors = watchErrors(page);
  const home = newHome();
  const folder = join(home, 'siem');
  const env = { MEDIADESK_HOME: home };
  expect((await runCli(['audit', 'sinks', 'add', 'files', '--kind', 'file', '--folder', folder], { env })).code).toBe(
    0,
  );
  await importFive(home);

  const host = await launch(home);
  await page.goto(`${host.url}#audit`);
  const sink = page.locator('[data-testid="audit-sink"][data-sink="files"]');
  await expect(sink.getByTestId('audit-sink-state')).toHaveText('Behind by 5 events');
  await page.getByTestId('audit-forward-now').click();
  await expect(sink.getByTestId('audit-sink-state')).toHaveText('Up to date');
  await expect(sink).toContainText('5 delivered');
  expect(readdirSync(join(folder, '2026', '03', '01', '10'))).toHaveLength(1);
  // The setting that forwards after each sync or import, saved in the one settings file.
  await page.getByTestId('audit-forward-after-sync').check();
  await expect
    .poll(async () => JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8')).forwardAfterAuditSync)
    .toBe(true);
  expect(errors).toEqual([]);
});

/** The forwarding form: a Splunk HEC sink added, forwarded to, changed and removed from the app. */
test('adds an HEC sink at the Sandbox, forwards, edits it, removes it in Settings; a bad URL is refused on its field', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  const sandbox = await sandboxAt();
  const siem = async () => (await (await fetch(`${sandbox.url}/__sandbox/siem/hec/ids`)).json()) as { ids: string[] };
  await fetch(`${sandbox.url}/__sandbox/siem/reset`, { method: 'POST' });
  const home = newHome();
  await importFive(home);
  const host = await launch(home);
  await page.goto(`${host.url}#audit`);
  await expect(page.getByTestId('audit-no-sinks')).toBeVisible();
  await page.getByTestId('audit-sink-add').click();
  const form = page.getByTestId('sink-form');
  await form.getByTestId('sink-id').fill('splunk');
  await form.getByTestId('sink-url').fill('http://splunk.example.com:8088');
  await form.getByTestId('sink-secret').fill(SANDBOX_HEC_TOKEN);
  await form.getByTestId('sink-save').click();
  await expect(form.getByTestId('sink-url-error')).toHaveText('must be https:// (or http:// on 127.0.0.1)');
  await expect(form.getByTestId('sink-url')).toHaveAttribute('aria-invalid', 'true');
  await expect(form.getByTestId('sink-id-error')).toHaveCount(0);
  // The form with an error on it passes axe's WCAG rules, as every screen does (a11y.spec.ts).
  expect(await axeViolations(page, { include: '[data-testid="audit-forward"]' })).toEqual([]);
  await form.getByTestId('sink-url').fill(sandbox.url);
  await form.getByTestId('sink-save').click();
  await expect(form).toHaveCount(0);

  const sink = page.locator('[data-testid="audit-sink"][data-sink="splunk"]');
  await expect(sink.getByTestId('audit-sink-state')).toHaveText('Behind by 5 events');
  await page.getByTestId('audit-forward-now').click();
  await expect(sink.getByTestId('audit-sink-state')).toHaveText('Up to date');
  await expect(sink).toContainText('5 delivered');
  expect((await siem()).ids.sort()).toEqual(['fwd_0', 'fwd_1', 'fwd_2', 'fwd_3', 'fwd_4']);
  const settingsFile = () => readFileSync(join(home, 'settings.json'), 'utf8');
  expect(settingsFile()).not.toContain(SANDBOX_HEC_TOKEN);

  // Edited: the stored token stays when its field is left empty.
  await sink.getByTestId('audit-sink-edit').click();
  await expect(form.getByTestId('sink-id')).toHaveValue('splunk');
  await expect(form.getByTestId('sink-url')).toHaveValue(sandbox.url);
  await form.getByTestId('sink-index').fill('Main Index');
  await form.getByTestId('sink-save').click();
  await expect(form.getByTestId('sink-index-error')).toContainText('must');
  await form.getByTestId('sink-index').fill('');
  await form.getByTestId('sink-sourcetype').fill('mediadesk:e2e');
  await form.getByTestId('sink-save').click();
  await expect(form).toHaveCount(0);
  await expect
    .poll(() => JSON.parse(settingsFile()).auditSinks)
    .toEqual([expect.objectContaining({ id: 'splunk', kind: 'splunk-hec', sourcetype: 'mediadesk:e2e' })]);
  await expect(sink).not.toContainText('No token or password');

  // Settings > Audit forwarding is the same panel: the sink is there, and is removed from there.
  await page.goto(`${host.url}#settings`);
  const inSettings = page.getByTestId('settings-audit-forward');
  await expect(inSettings.getByRole('heading', { name: 'Audit forwarding' })).toBeVisible();
  await expect(inSettings.locator('[data-sink="splunk"]').getByTestId('audit-sink-state')).toHaveText('Up to date');
  await sink.getByTestId('audit-sink-remove').click();
  await page.getByTestId('sink-remove-confirm').click();
  await expect(sink).toHaveCount(0);
  await expect(page.getByTestId('audit-no-sinks')).toBeVisible();
  expect(JSON.parse(settingsFile()).auditSinks).toEqual([]);
  expect(errors).toEqual([]);
});
