import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from './fixtures.ts';
import { newHome, watchErrors } from './host.ts';
import { runCli } from '../cli.ts';

/** The Audit screen's forwarding panel over the web host: each sink's state, and Forward now. */
test('shows a sink behind by the cached events, then up to date after Forward now', async ({ page, launch }) => {
  const errors = watchErrors(page);
  const home = newHome();
  const folder = join(home, 'siem');
  const env = { MEDIADESK_HOME: home };
  expect((await runCli(['audit', 'sinks', 'add', 'files', '--kind', 'file', '--folder', folder], { env })).code).toBe(
    0,
  );
  const file = join(home, 'events.ndjson');
  const events = [0, 1, 2, 3, 4].map((i) => ({
    event_id: `fwd_${i}`,
    date: new Date(Date.UTC(2026, 2, 1, 10) + i * 60_000).toISOString(),
    action: { event_type: 'team.member.role_changed', verb: 'update', status: 'succeeded' },
    member: { type: 'user', user_id: 1, email: 'a@example.test' },
    category: 'team',
  }));
  writeFileSync(file, events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  expect((await runCli(['audit', 'import', file], { env })).code).toBe(0);

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
