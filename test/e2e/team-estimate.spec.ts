import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../cli.ts';
import { pgMissing, startPg, type TestPg } from '../pg.ts';
import { expect, test } from './fixtures.ts';
import { newHome } from './host.ts';
import { makeImages, watchErrors } from './studio-helpers.ts';

/**
 * The estimate before Start with a team server (a real PostgreSQL started here): it counts what
 * another machine (a CLI process on a data folder of its own) spent, and warns when the batch
 * would go past the project's budget.
 */
const missing = pgMissing();
let pg: TestPg | null = null;

test.afterAll(async () => {
  await pg?.close();
});

test("the Studio's estimate counts the studio's spend and warns past the project's budget", async ({
  page,
  launch,
  sandboxAt,
}) => {
  test.skip(!!missing, `PostgreSQL cannot be started for this run: ${missing}`);
  const errors = watchErrors(page);
  pg = await startPg();
  const db = await pg.createDb('estimate');
  const sandbox = await sandboxAt(100);
  const root = mkdtempSync(join(tmpdir(), 'md-team-estimate-'));

  // Another machine sets the project's budget and spends 10 of its 12 credits.
  const other = { ...sandbox.env, MEDIADESK_HOME: join(root, 'other'), MEDIADESK_TEAM_DB: db };
  expect((await runCli(['team', 'budget', '--project', 'Acme', '12'], { env: other })).code).toBe(0);
  await makeImages(join(root, 'other-shoot'), 2);
  const run = await runCli(
    ['run', 'upscaler-precision', join(root, 'other-shoot'), '--out', join(root, 'other-out'), '--project', 'Acme'],
    { env: other },
  );
  expect(run.code, run.err).toBe(0);

  const host = await launch(newHome(), { ...sandbox.env, MEDIADESK_TEAM_DB: db });
  const dir = join(root, 'shoot');
  await makeImages(dir, 3);
  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  await page.getByTestId('pick-folder').setInputFiles(dir);
  await expect(page.getByTestId('check-summary')).toHaveText('3 images ready');
  await expect(page.getByTestId('cost-estimate')).toContainText('the studio has spent 10 credits today');
  await page.getByTestId('project').fill('Acme');
  const estimate = page.getByTestId('cost-estimate');
  await expect(estimate).toContainText(
    `the studio has spent 10 credits today; 2 of project "Acme"'s 12 a day left; this batch would go past project "Acme"'s budget: only 0 jobs fit today, the rest wait until 00:00 UTC or a raised budget`,
  );
  await expect(estimate).toHaveClass(/warn/);

  await page.goto(`${host.url}#settings`);
  await expect(page.getByTestId('team-projects')).toContainText('Acme: 12 credits a day, 10 spent today');
  expect(errors).toEqual([]);
});
