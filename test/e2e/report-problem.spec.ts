import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { unzipSync } from 'fflate';
import { expect, test } from './fixtures.ts';
import { newHome, watchErrors, type HostHandle } from './host.ts';

let host: HostHandle;

test('Report a problem in the browser: a zip downloaded, with the logs but not the key', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  const sandbox = await sandboxAt();
  const key = String(sandbox.env.MEDIADESK_API_KEY);
  const home = newHome();
  // A log an earlier run wrote before it knew the key (the log keeps it out from then on).
  mkdirSync(join(home, 'logs'), { recursive: true });
  writeFileSync(join(home, 'logs', 'web.1.log'), `[2026-12-05 10:00:00.000] [warn]  refused key ${key}\n`);
  host = await launch(home, sandbox.env);
  await page.goto(`${host.url}#settings`);
  const card = page.getByTestId('report-problem');
  const download = page.waitForEvent('download');
  await card.getByRole('button', { name: 'Report a problem…' }).click();
  const file = join(host.home, 'attached.zip');
  await (await download).saveAs(file);
  await expect(card.getByTestId('report-problem-status')).toContainText('Downloaded MediaDesk problem report');
  const entries = unzipSync(readFileSync(file));
  expect(Object.keys(entries)).toEqual(
    expect.arrayContaining(['README.txt', 'versions.json', 'settings.json', 'logs/web.1.log', 'logs/web.log']),
  );
  const holding = Object.keys(entries).filter((n) => Buffer.from(entries[n]).includes(key));
  expect(holding).toEqual([]);
  expect(new TextDecoder().decode(entries['logs/web.1.log'])).toContain('refused key [redacted key]');
  expect(errors).toEqual([]);
});
