import { join } from 'node:path';
import { TEAM_MIGRATIONS } from '../../electron/core/team-server/migrations.ts';
import { runCli } from '../cli.ts';
import { pgMissing, startPg, type TestPg } from '../pg.ts';
import { expect, test } from './fixtures.ts';
import { newHome, watchErrors } from './host.ts';

/**
 * Settings > Team in the browser, on a real PostgreSQL the spec starts itself (test/pg.ts, as the
 * team server's vitest tests do): connect, Test connection, a wrong password, disconnect.
 */
const missing = pgMissing();
let pg: TestPg;

test.beforeAll(async () => {
  if (!missing) pg = await startPg();
});
test.afterAll(async () => {
  await pg?.close();
});

test('Settings > Team: connect, Test connection says what answered, a wrong password is refused, disconnect', async ({
  page,
  launch,
}) => {
  test.skip(!!missing, `no PostgreSQL to be a team server here: ${missing}`);
  const errors = watchErrors(page);
  const url = await pg.createDb('settings_team');
  const studio = await pg.createUser('studio', 'right-pw');
  const host = await launch(newHome(), {}, 0, [], { ownProcess: true });
  await page.goto(`${host.url}#settings`);
  const team = page.getByTestId('team-server');
  const status = team.getByTestId('team-server-status');
  await expect(status).toHaveText('No team server: this machine paces alone.');

  await team.getByLabel('Team server URL').fill(url);
  await team.getByRole('button', { name: 'Connect', exact: true }).click();
  await expect(status).toHaveText(
    `${url}: answers, schema version ${TEAM_MIGRATIONS.length}, 1 machine in the last 10 minutes.`,
  );
  await expect(team.getByLabel('Team server URL')).toHaveValue('');

  // With a team server set, a new hot folder is shared by default.
  await page.goto(`${host.url}#hot-folders`);
  await expect(page.getByRole('checkbox', { name: /^Share with the team/ })).toBeChecked();
  await page.goto(`${host.url}#settings`);

  // Another machine of the studio asks the same server: Test connection connects afresh and counts it.
  const other = await runCli(['team', 'status'], {
    env: { MEDIADESK_HOME: join(newHome(), 'other'), MEDIADESK_TEAM_DB: url },
  });
  expect(other.code, other.err).toBe(0);
  await team.getByRole('button', { name: 'Test connection' }).click();
  await expect(status).toHaveText(
    `${url}: answers, schema version ${TEAM_MIGRATIONS.length}, 2 machines in the last 10 minutes.`,
  );

  // A wrong password: refused with what the server said, and the server in use is kept.
  await team.getByLabel('Team server URL').fill(studio.replace('studio@', 'studio:wrong-pw@'));
  await team.getByRole('button', { name: 'Connect', exact: true }).click();
  await expect(team.getByRole('alert')).toHaveText(
    'not connected, nothing was saved: the team server refused the password (Settings > Team or mediadesk team connect URL sets it); PostgreSQL said: password authentication failed for user "studio"',
  );
  await page.reload();
  await expect(status).toHaveText(new RegExp(`^${url.replace(/[.?*+^$[\]\\(){}|-]/g, '\\$&')}: answers`));
  expect(host.output()).not.toContain('wrong-pw');

  await team.getByRole('button', { name: 'Disconnect', exact: true }).click();
  await expect(status).toHaveText('No team server: this machine paces alone.');
  await expect(team.getByRole('button', { name: 'Test connection' })).toHaveCount(0);
  await page.goto(`${host.url}#hot-folders`);
  await expect(page.getByRole('checkbox', { name: /^Share with the team/ })).not.toBeChecked();
  expect(errors).toEqual([]);
});
