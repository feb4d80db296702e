import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { expect, test } from './fixtures.ts';
import { newHome, watchErrors, type HostHandle } from './host.ts';
import { KEY_KEPT, keySetMessage } from '../../shared/contract/foundation.ts';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

let host: HostHandle | undefined;
let sandbox: ReturnType<typeof spawn> | undefined;
test.afterEach(async () => {
  await host?.stop();
  sandbox?.kill();
});

test('a live key set in the app is used for requests, yet appears in no log, database or settings file', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  sandbox = spawn(process.execPath, ['bin/mediadesk.js', 'sandbox', '--port', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const first = await new Promise<string>((resolve) =>
    createInterface({ input: sandbox!.stdout! }).once('line', resolve),
  );
  const sandboxUrl = first.replace('listening on ', '').trim();

  const home = newHome();
  // A keychain entry of this test's own, so a developer's real key is never touched.
  host = await launch(home, { MEDIADESK_KEYCHAIN_SERVICE: `MediaDesk-e2e-${process.pid}` }, 0, [], {
    ownProcess: true,
  });
  await page.goto(`${host.url}#settings`);
  const secret = 'sandbox-admin';
  await page.locator('#key-input').fill(secret);
  await page.getByRole('button', { name: 'Set', exact: true }).click();
  await expect(page.getByTestId('key-status')).toContainText('An API key is set');
  // Keys are told apart by a fingerprint (8 hex digits of the SHA-256), never by any of the key.
  await expect(page.getByTestId('key-fingerprint')).toHaveText(
    createHash('sha256').update(secret).digest('hex').slice(0, 8),
  );
  await expect(page.locator('#key-input')).toHaveValue('');
  // The OS keychain answers: nothing to say about it.
  await expect(page.getByTestId('key-keychain-problem')).toHaveCount(0);
  await page.getByTestId('baseUrl').fill(sandboxUrl);
  await page.getByTestId('baseUrl').blur();
  await expect(page.getByTestId('saved')).toHaveText('Saved: base URL.');
  await page.getByLabel('Live service').check();
  await expect(page.getByTestId('backend-badge')).toContainText(`Live · ${new URL(sandboxUrl).host}`);

  // A request that needs the key: the LoRA gallery through the live backend. Without the key the
  // server answers 401; through the in-process Sandbox this server would count nothing.
  await page.getByTestId('nav-loras').click();
  await expect(page.getByTestId('lora-card').first()).toBeVisible();
  await expect
    .poll(async () => {
      const s = (await (await fetch(`${sandboxUrl}/__sandbox/stats`)).json()) as { requests: Record<string, number> };
      return Object.entries(s.requests)
        .filter(([k]) => k.includes('/v1/ai/loras'))
        .reduce((n, [, v]) => n + v, 0);
    })
    .toBeGreaterThan(0);

  // Leave no entry behind in the keychain of whoever runs the test.
  await page.getByTestId('nav-settings').click();
  await page.getByRole('button', { name: 'Clear', exact: true }).click();
  await expect(page.getByTestId('key-status')).toContainText('No API key is set');
  expect(errors).toEqual([]);

  await host.stop();
  expect(host.output()).not.toContain(secret);
  for (const f of filesUnder(home)) expect(readFileSync(f).includes(secret), `${f} holds the key`).toBe(false);
  const settings = JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8'));
  expect(settings).toMatchObject({ backend: 'live', baseUrl: sandboxUrl });
  expect(JSON.stringify(settings)).not.toContain(secret);
});

test('a key kept in memory (no OS keychain) is said to be for this session only, and the next start is without it', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  // No Secret Service answers on this bus: the host keeps the key in memory.
  const noKeychain = { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus' };
  const home = newHome();
  host = await launch(home, noKeychain);
  await page.goto(`${host.url}#settings`);
  // Why, from the start: what the keychain library said, and when the app asks it again.
  await expect(page.getByTestId('key-keychain-problem')).toHaveText(
    /^The OS keychain is unavailable: it did not answer \(.*DBus error.*\)\. MediaDesk asks the keychain again at its next start\.$/,
  );
  await page.locator('#key-input').fill('sandbox-admin');
  await page.getByRole('button', { name: 'Set', exact: true }).click();
  await expect(page.getByTestId('key-message')).toHaveText(keySetMessage('memory'));
  await expect(page.getByTestId('key-message')).not.toContainText('stored');
  await expect(page.getByTestId('key-status')).toContainText(KEY_KEPT.memory);
  await host.stop();

  // What the message promised: the next start has no key, and says so.
  host = await launch(home, noKeychain);
  await page.goto(`${host.url}#settings`);
  await expect(page.getByTestId('key-status')).toHaveText('No API key is set: the app uses the built-in Sandbox.');
  expect(errors).toEqual([]);
});
