import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Route } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import WebSocket from 'ws';
import { newHome, watchErrors, type HostHandle } from './host.ts';
import { desk } from './studio-helpers.ts';

let host: HostHandle;

// Tests that only look share the worker's host (sharedHost); those that change or stop it launch their own.
test('the app shell loads on the Sandbox backend, and every navigation entry opens', async ({ page, sharedHost }) => {
  const errors = watchErrors(page);
  // Every request the page makes is answered (the icon included: a missing one was a 404 on each load).
  const failed: string[] = [];
  page.on('response', (r) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${new URL(r.url()).pathname}`);
  });
  host = sharedHost;
  await page.goto(host.url);
  await expect
    .poll(() => page.evaluate(() => document.querySelector<HTMLLinkElement>('link[rel=icon]')?.href ?? ''))
    .toMatch(/\/assets\/icon-[\w-]+\.svg$/);
  await expect(page.getByRole('navigation', { name: 'Main' })).toBeVisible();
  await expect(page.getByTestId('backend-badge')).toContainText('Sandbox');
  const entries = page.getByRole('navigation', { name: 'Main' }).getByRole('button');
  const count = await entries.count();
  expect(count).toBeGreaterThan(0);
  for (let i = 0; i < count; i++) {
    const entry = entries.nth(i);
    const id = (await entry.getAttribute('data-testid'))!.replace('nav-', '');
    await entry.click();
    await expect(page.getByTestId(`screen-${id}`)).toBeVisible();
    await expect(entry).toHaveAttribute('aria-current', 'page');
  }
  // The token leaves the address bar once the page has it.
  expect(new URL(page.url()).searchParams.get('token')).toBeNull();
  expect(failed).toEqual([]);
  expect(errors).toEqual([]);
});

test('a screen whose code cannot be fetched (a tab left open across an upgrade) says so in an alert; the others still open', async ({
  page,
  sharedHost,
}) => {
  // Each screen but the Studio is a chunk of its own, fetched when first shown.
  await page.route(/\/assets\/Queue-[\w-]+\.js$/, (route) => route.fulfill({ status: 404, body: 'gone' }));
  await page.goto(sharedHost.url);
  await expect(page.getByTestId('screen-studio').getByRole('heading', { level: 1 })).toBeVisible();
  await page.getByTestId('nav-queue').click();
  await expect(page.getByTestId('screen-queue').getByRole('alert')).toHaveText(
    /^This screen could not be loaded \(.*Queue-[\w-]+\.js.*\): reload the window\.$/,
  );
  await page.getByTestId('nav-results').click();
  await expect(page.getByTestId('screen-results').getByRole('heading', { level: 1 })).toBeVisible();
  await expect(page.getByText('This screen could not be loaded')).toHaveCount(0);
});

test('a settings change goes through the bridge into the core and survives a restart of the host', async ({
  page,
  launch,
}) => {
  const home = newHome();
  host = await launch(home);
  await page.goto(`${host.url}#settings`);
  const concurrency = page.getByTestId('concurrency');
  await concurrency.fill('7');
  await concurrency.blur();
  await expect(page.getByTestId('saved')).toHaveText('Saved: jobs at once.');
  await page.getByTestId('theme').selectOption('dark');
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  // The live service without a key: said so, and the badge still says Sandbox.
  await page.getByLabel('Live service').check();
  await expect(page.getByTestId('saved')).toHaveText('Saved: backend.');
  await expect(page.getByTestId('live-needs-key')).toHaveText(
    'The live service needs an API key. Until one is set above, the app keeps using the Sandbox.',
  );
  await expect(page.getByTestId('backend-badge')).toContainText('Sandbox');
  await page.getByLabel('Sandbox (built in)').check();
  await expect(page.getByTestId('live-needs-key')).toBeHidden();

  // Bad input: the field says why, and nothing stored is lost.
  await concurrency.fill('99');
  await concurrency.blur();
  await expect(page.getByTestId('concurrency-error')).toHaveText('must be at most 32');
  // Read out with the field itself, not only shown beside it.
  await expect(concurrency).toHaveAccessibleDescription(
    'must be at most 32 The stored value, 7 jobs at once, stays in use until a valid one is entered.',
  );
  expect(JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8'))).toMatchObject({
    concurrency: 7,
    theme: 'dark',
  });
  // An output folder that is a file is named before any batch could pay for results it cannot place.
  const outputDir = page.getByTestId('outputDir');
  await outputDir.fill(join(home, 'settings.json'));
  await outputDir.blur();
  await expect(page.getByTestId('outputDir-error')).toHaveText(
    `${join(home, 'settings.json')} is a file, not a folder`,
  );
  await expect(outputDir).toHaveAttribute('aria-invalid', 'true');
  await expect(outputDir).toHaveAccessibleDescription(
    `${join(home, 'settings.json')} is a file, not a folder The stored value, empty (the default), stays in use until a valid one is entered.`,
  );
  await outputDir.fill('relative/results');
  await outputDir.blur();
  await expect(page.getByTestId('outputDir-error')).toContainText('must be a full path');
  await outputDir.fill(join(home, 'results'));
  await outputDir.blur();
  await expect(page.getByTestId('saved')).toHaveText('Saved: output folder.');
  await expect(page.getByTestId('outputDir-error')).toBeHidden();

  await host.stop();
  host = await launch(home);
  await page.goto(`${host.url}#settings`);
  await expect(page.getByTestId('concurrency')).toHaveValue('7');
  await expect(page.getByTestId('theme')).toHaveValue('dark');
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
});

test('at 1024x700, an empty or refused Jobs at once names the stored value still in use, and a save is confirmed in sight', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  const home = newHome();
  host = await launch(home);
  await desk(host, 'settings.set', { concurrency: 7 });
  await page.setViewportSize({ width: 1024, height: 700 });
  await page.goto(`${host.url}#settings`);
  const concurrency = page.getByTestId('concurrency');
  await expect(concurrency).toHaveValue('7');
  const stored = 'The stored value, 7 jobs at once, stays in use until a valid one is entered.';

  // Emptied: asked for a number, not told it "must be at least 1"; the 7 in use is named.
  await concurrency.fill('');
  await concurrency.blur();
  await expect(page.getByTestId('concurrency-error')).toHaveText('enter a whole number from 1 to 32');
  await expect(page.getByTestId('concurrency-kept')).toHaveText(stored);
  await expect(concurrency).toHaveAccessibleDescription(`enter a whole number from 1 to 32 ${stored}`);
  await expect(page.getByTestId('concurrency-kept')).toBeInViewport();
  // Refused by the core: the same.
  await concurrency.fill('0');
  await concurrency.blur();
  await expect(page.getByTestId('concurrency-error')).toHaveText('must be at least 1');
  await expect(page.getByTestId('concurrency-kept')).toHaveText(stored);
  expect(JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8'))).toMatchObject({ concurrency: 7 });
  await expect(page.getByTestId('saved')).toHaveText('');

  // A valid one: saved, said where the user is looking, and the notes go.
  await concurrency.fill('5');
  await concurrency.blur();
  await expect(page.getByTestId('saved')).toHaveText('Saved: jobs at once.');
  await expect(page.getByTestId('saved')).toBeInViewport({ ratio: 1 });
  await expect(page.getByTestId('concurrency-error')).toHaveCount(0);
  await expect(page.getByTestId('concurrency-kept')).toHaveCount(0);
  expect(JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8'))).toMatchObject({ concurrency: 5 });
  // The theme at the top of the form too.
  await page.getByTestId('theme').selectOption('dark');
  await expect(page.getByTestId('saved')).toHaveText('Saved: theme.');
  await expect(page.getByTestId('saved')).toBeInViewport({ ratio: 1 });
  expect(errors).toEqual([]);
});

test('settings that cannot be read say why and offer Try again instead of loading forever', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  const home = newHome();
  host = await launch(home, {}, 0, [], { ownProcess: true });
  // Broken after start-up: every read of it now fails, and each says so (the test above breaks it before).
  await expect.poll(() => host.output()).toContain('data folder');
  // A settings file cut off mid-write (or broken by hand): every read of it fails until it is fixed.
  writeFileSync(join(home, 'settings.json'), '{ "concurrency": ');
  await page.goto(`${host.url}#settings`);
  await expect(page.getByTestId('settings-error')).toContainText('The settings could not be read:');
  await expect(page.getByTestId('settings-error')).toContainText('is not valid JSON');
  await expect(page.getByText('Loading…')).toHaveCount(0);
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ concurrency: 5 }));
  await page.getByRole('button', { name: 'Try again' }).click();
  await expect(page.getByTestId('concurrency')).toHaveValue('5');
  await expect(page.getByTestId('settings-error')).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('a stored value this build cannot use is named on the Settings screen with why and that the default is in use, until a save replaces it', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  const home = newHome();
  const file = join(home, 'settings.json');
  // Edited by hand, or written by a newer build: 99 jobs at once is over this build's limit.
  writeFileSync(file, JSON.stringify({ concurrency: 99, theme: 'dark' }));
  host = await launch(home);
  await page.goto(`${host.url}#settings`);
  await expect(page.getByTestId('settings-ignored-item')).toHaveText([
    'concurrency: the stored value 99 was not used (must be at most 32); the default is in use.',
  ]);
  await expect(page.getByTestId('concurrency')).toHaveValue('4');
  await expect(page.getByTestId('theme')).toHaveValue('dark');

  await page.getByTestId('concurrency').fill('6');
  await page.getByTestId('concurrency').blur();
  await expect(page.getByTestId('saved')).toHaveText('Saved: jobs at once.');
  await expect(page.getByTestId('settings-ignored')).toHaveCount(0);
  expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ concurrency: 6, theme: 'dark' });
  expect(errors).toEqual([]);
});

test('a host started over an unreadable settings.json runs on the defaults, says why, and keeps the file until a save puts it aside', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  const home = newHome();
  const file = join(home, 'settings.json');
  const broken = '{ "concurrency": 7, "theme": "dark",';
  writeFileSync(file, broken);
  host = await launch(home, {}, 0, [], { ownProcess: true });
  await page.goto(`${host.url}#settings`);
  const notice = page.getByTestId('settings-error');
  await expect(notice).toContainText(`The settings could not be read: ${file} is not valid JSON (`);
  await expect(notice).toContainText('The defaults are shown and in use meanwhile; the file is left as it is.');
  await expect(page.getByTestId('concurrency')).toHaveValue('4');
  expect(host.output()).toContain(`warning: ${file} is not valid JSON`);
  // Nothing on disk changed: the user may still mend the file by hand.
  expect(readdirSync(home).filter((n) => n.startsWith('settings'))).toEqual(['settings.json']);
  expect(readFileSync(file, 'utf8')).toBe(broken);

  await page.getByTestId('concurrency').fill('6');
  await page.getByTestId('concurrency').blur();
  await expect(page.getByTestId('saved')).toHaveText('Saved: jobs at once.');
  await expect(page.getByTestId('settings-error')).toHaveCount(0);
  const kept = readdirSync(home).find((n) => n.startsWith('settings.json.bad-'));
  expect(kept).toBeDefined();
  await expect(page.getByTestId('settings-kept')).toHaveText(
    `The settings file that could not be read is kept as ${join(home, kept!)}.`,
  );
  expect(readFileSync(join(home, kept!), 'utf8')).toBe(broken);
  expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ concurrency: 6 });
  expect(errors).toEqual([]);
});

test('an API key that cannot be cleared or replaced says so, and the stored key stays shown as stored', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  // A keychain entry of this test's own, so a developer's real key is never touched.
  const keychain = { MEDIADESK_KEYCHAIN_SERVICE: `MediaDesk-e2e-keyfail-${process.pid}` };
  const home = newHome();
  host = await launch(home, keychain);
  try {
    await page.goto(`${host.url}#settings`);
    await page.locator('#key-input').fill('sandbox-admin');
    await page.getByRole('button', { name: 'Set', exact: true }).click();
    await expect(page.getByTestId('key-status')).toContainText('An API key is set');
    const status = await page.getByTestId('key-status').innerText();

    // The host stops: the tab's next attempt to reconnect is refused, and so is every call after it.
    const reconnecting = page.waitForEvent('requestfailed', (r) => r.url().includes('/hello'));
    await host.stop();
    await reconnecting;
    await page.getByRole('button', { name: 'Clear', exact: true }).click();
    await expect(page.getByTestId('key-message')).toHaveText(
      /^The key was not cleared: .*cannot reach the MediaDesk host/,
    );
    await expect(page.getByTestId('key-status')).toHaveText(status);

    await page.locator('#key-input').fill('sandbox-editor');
    await page.getByRole('button', { name: 'Replace', exact: true }).click();
    await expect(page.getByTestId('key-message')).toHaveText(
      /^The key was not stored: .*cannot reach the MediaDesk host/,
    );
    await expect(page.getByTestId('key-status')).toHaveText(status);
    // What was typed stays, to send again once the host answers.
    await expect(page.locator('#key-input')).toHaveValue('sandbox-editor');
    expect(errors).toEqual([]);
  } finally {
    // Leave no entry behind in the keychain of whoever runs the test.
    host = await launch(home, keychain);
    await desk(host, 'key.clear');
  }
});

test('a key removed is said to be removed even when the status read after it fails; that failure is said apart', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  const keychain = { MEDIADESK_KEYCHAIN_SERVICE: `MediaDesk-e2e-keyreread-${process.pid}` };
  host = await launch(newHome(), keychain);
  // The tab's socket runs through the test: once armed, its keychain status read is answered with
  // the failure a keychain that stops answering gives; everything else reaches the real host.
  let failStatus = false;
  await page.routeWebSocket(/\/ws\?token=/, (ws) => {
    const server = ws.connectToServer();
    ws.onMessage((m) => {
      const msg = JSON.parse(String(m));
      if (failStatus && msg.cmd === 'key.status')
        ws.send(
          JSON.stringify({
            id: msg.id,
            ok: false,
            error: { code: 'unavailable', message: 'the OS keychain did not answer' },
          }),
        );
      else server.send(m);
    });
    server.onMessage((m) => ws.send(m));
  });
  try {
    await page.goto(`${host.url}#settings`);
    await page.locator('#key-input').fill('sandbox-admin');
    await page.getByRole('button', { name: 'Set', exact: true }).click();
    await expect(page.getByTestId('key-status')).toContainText('An API key is set');

    failStatus = true;
    await page.getByRole('button', { name: 'Clear', exact: true }).click();
    await expect(page.getByTestId('key-message')).toHaveText(
      'Key removed; could not re-read the keychain status: the OS keychain did not answer',
    );
    // What the clear made known, not the key from before it.
    await expect(page.getByTestId('key-status')).toHaveText('No API key is set: the app uses the built-in Sandbox.');
    expect(await desk(host, 'key.status')).toMatchObject({ set: false });
    expect(errors).toEqual([]);
  } finally {
    await desk(host, 'key.clear').catch(() => {});
  }
});

test('a change made while the host is gone, before the tab tries it again, is refused at once and says why: never left waiting', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  host = await launch(newHome());
  await page.goto(`${host.url}#settings`);
  await expect(page.getByTestId('concurrency')).toHaveValue('4');
  // The tab asks who answers (/hello) before it reconnects: held, the tab stays
  // between "closed" and its next try for as long as the test needs.
  const held: Route[] = [];
  await page.route(
    (url) => url.pathname === '/hello',
    (route) => void held.push(route),
  );
  await host.stop();
  await expect(page.getByTestId('host-down')).toBeVisible();
  await expect.poll(() => held.length).toBe(1);
  await page.getByTestId('concurrency').fill('6');
  await page.getByTestId('concurrency').press('Tab');
  await expect(page.getByTestId('concurrency-error')).toHaveText(
    /the MediaDesk host is not answering \(it stopped or is restarting\); try again once it is back/,
  );
  for (const r of held) await r.abort();
  expect(errors).toEqual([]);
});

test('a reload keeps working without the token in the address bar; another browser without it is refused', async ({
  page,
  browser,
  sharedHost,
}) => {
  host = sharedHost;
  await page.goto(`${host.url}#settings`);
  await expect(page.getByTestId('concurrency')).toBeVisible();
  expect(new URL(page.url()).searchParams.get('token')).toBeNull();
  const reload = await page.reload();
  expect(reload?.status()).toBe(200);
  await expect(page.getByTestId('concurrency')).toBeVisible();
  await expect(page.getByTestId('host-down')).toBeHidden();
  expect(new URL(page.url()).searchParams.get('token')).toBeNull();
  // The cookie that carries the reload is out of scripts' reach.
  expect(await page.evaluate(() => document.cookie)).toBe('');

  const fresh = await browser.newContext();
  try {
    const other = await fresh.newPage();
    expect((await other.goto(`${host.origin}/`))?.status()).toBe(401);
  } finally {
    await fresh.close();
  }
});

test('requests without the token are refused', async ({ request, sharedHost }) => {
  host = sharedHost;
  expect((await request.get(`${host.origin}/`)).status()).toBe(401);
  expect((await request.get(`${host.origin}/?token=wrong`)).status()).toBe(401);
  expect((await request.get(host.url)).status()).toBe(200);

  const attempt = (url: string, headers: Record<string, string> = {}) =>
    new Promise<string>((resolve) => {
      const ws = new WebSocket(url, { headers });
      ws.on('open', () => {
        ws.send(JSON.stringify({ id: 1, cmd: 'settings.get', payload: {} }));
        ws.on('message', (m) => {
          resolve(`open:${JSON.parse(String(m)).ok}`);
          ws.close();
        });
      });
      ws.on('unexpected-response', (_req, res) => resolve(`refused:${res.statusCode}`));
      ws.on('error', (e) => resolve(`error:${e.message}`));
    });
  const wsBase = host.origin.replace('http', 'ws');
  expect(await attempt(`${wsBase}/ws`)).toBe('refused:401');
  expect(await attempt(`${wsBase}/ws?token=${host.token}x`)).toBe('refused:401');
  expect(await attempt(`${wsBase}/ws?token=${host.token}`, { origin: 'https://evil.example' })).toBe('refused:403');
  expect(await attempt(`${wsBase}/ws?token=${host.token}`)).toBe('open:true');
  const cookie = `mediadesk-token-${new URL(host.origin).port}=${host.token}`;
  expect(await attempt(`${wsBase}/ws`, { cookie })).toBe('open:true');
  expect(await attempt(`${wsBase}/ws`, { cookie, origin: 'https://evil.example' })).toBe('refused:403');
  expect(await attempt(`${wsBase}/ws`, { cookie: `${cookie}x` })).toBe('refused:401');
  expect(await attempt(`${wsBase}/ws?token=${host.token}x`, { cookie })).toBe('refused:401');
});

test('a payload that breaks the contract is refused with the field named', async ({ sharedHost }) => {
  host = sharedHost;
  const ws = new WebSocket(`${host.origin.replace('http', 'ws')}/ws?token=${host.token}`);
  await new Promise((r) => ws.on('open', r));
  const reply = await new Promise<{ ok: boolean; error: { code: string; invalid: { field: string }[] } }>((resolve) => {
    ws.on('message', (m) => resolve(JSON.parse(String(m))));
    ws.send(JSON.stringify({ id: 9, cmd: 'settings.set', payload: { concurrency: 'many', apiKey: 'x' } }));
  });
  ws.close();
  expect(reply.ok).toBe(false);
  expect(reply.error.code).toBe('invalid');
  expect(reply.error.invalid.map((p) => p.field)).toEqual(expect.arrayContaining(['concurrency']));
});
