import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import { DEFAULT_WEB_PORT } from '../../electron/host/web/launch.ts';
import { desk, makeOneCreation, newHome, startHost, watchErrors, type HostHandle } from './host.ts';

let host: HostHandle | undefined;
let blocker: Server | undefined;
test.afterEach(async () => {
  await host?.stop();
  host = undefined;
  await new Promise((done) => (blocker ? blocker.close(done) : done(undefined)));
  blocker = undefined;
});

const portOf = (h: HostHandle) => Number(new URL(h.origin).port);

/** Holds `port` as another program would; resolves false when something already holds it (then it is taken anyway). */
function holdPort(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => {
      blocker = server;
      resolve(true);
    });
  });
}

// Both launch on the default port (no --port): they take turns in one worker, in this order.
test.describe('on the default port', () => {
  test.describe.configure({ mode: 'default' });

  test('a tab open before a restart finds the host again by itself, on the same port, and keeps working', async ({
    page,
    launch,
  }) => {
    const errors = watchErrors(page);
    const home = newHome();
    // As a person starts it: no --port.
    host = await launch(home, {}, null);
    const port = portOf(host);
    await page.goto(`${host.url}#settings`);
    await expect(page.getByTestId('concurrency')).toBeVisible();
    const address = page.url();
    await page.evaluate(() => ((window as unknown as { sameTab: boolean }).sameTab = true));

    await host.stop();
    await expect(page.getByTestId('host-down')).toHaveText(
      'The MediaDesk host is not answering: it stopped or is restarting. Reconnecting…',
    );
    host = await launch(home, {}, null);
    expect(portOf(host)).toBe(port);
    await expect(page.getByTestId('host-down')).toBeHidden();
    // The same tab, never reloaded nor sent to another address, talks to the new launch.
    expect(page.url()).toBe(address);
    expect(await page.evaluate(() => (window as unknown as { sameTab?: boolean }).sameTab)).toBe(true);
    const concurrency = page.getByTestId('concurrency');
    await concurrency.fill('5');
    await concurrency.blur();
    await expect(page.getByTestId('saved')).toHaveText('Saved: jobs at once.');
    expect((await desk<{ concurrency: number }>(host, 'settings.get')).concurrency).toBe(5);
    // Another screen loads its data through the same connection.
    await page.getByTestId('nav-queue').click();
    await expect(page.getByTestId('screen-queue')).toBeVisible();
    await expect(page.getByTestId('host-down')).toBeHidden();
    expect(errors).toEqual([]);
  });

  test('the default port taken by another program: another port, said; back on the default once it is free; one host per data folder', async ({
    launch,
  }) => {
    // Held by the test itself, to be freed later: held by anything else, the test cannot say where a host goes.
    expect(await holdPort(DEFAULT_WEB_PORT), `port ${DEFAULT_WEB_PORT} is in use before the test: free it`).toBe(true);
    const home = newHome();
    host = await launch(home, {}, null);
    const port = portOf(host);
    expect(port).not.toBe(DEFAULT_WEB_PORT);
    await expect
      .poll(() => host!.stderr())
      .toContain(
        `port ${DEFAULT_WEB_PORT} is in use by another program, so this launch listens on port ${port}; the next launch goes back to ${DEFAULT_WEB_PORT} when it is free`,
      );

    // A second launch on the same data folder starts nothing: it says so and prints the running host's URL.
    const second = await launch(home, {}, null);
    expect(second.url).toBe(host.url);
    await new Promise((done) => (second.child.exitCode === null ? second.child.once('exit', done) : done(null)));
    expect(second.child.exitCode).toBe(0);
    await expect
      .poll(() => second.stderr())
      .toContain(`a web host already runs for the data folder ${home}: open its URL above`);
    expect((await fetch(`${host.origin}/healthz`)).status).toBe(200);

    // Still taken: the port it had, where its tabs look.
    await host.stop();
    host = await launch(home, {}, null);
    expect(portOf(host)).toBe(port);

    // Free again: back on the README's address.
    await host.stop();
    await new Promise((done) => blocker!.close(done));
    blocker = undefined;
    host = await launch(home, {}, null);
    expect(portOf(host)).toBe(DEFAULT_WEB_PORT);
    await expect.poll(() => host!.output()).toContain('data folder');
    expect(host.stderr()).not.toContain('in use by another program');

    // A port asked for with --port that is taken is not swapped for another: it says so.
    await holdPort(port);
    const other = newHome();
    await expect(launch(other, {}, port)).rejects.toThrow(
      `port ${port} is in use by another program; choose another with --port, or leave --port out to have one picked`,
    );
  });
});

/** A tab open on a host (a fresh data folder, any free port), then the host stops. */
async function tabThenHostStops(page: Page): Promise<{ home: string; port: number; token: string }> {
  const home = newHome();
  const stopped = await startHost(home);
  host = stopped;
  await page.goto(`${stopped.url}#settings`);
  await expect(page.getByTestId('concurrency')).toBeVisible();
  await stopped.stop();
  return { home, port: portOf(stopped), token: stopped.token };
}

test('a host started with --new-token tells an open tab plainly to open the new URL, and stops trying', async ({
  page,
  launch,
}) => {
  const { home, port, token: before } = await tabThenHostStops(page);
  host = await launch(home, {}, port, ['--new-token']);
  expect(host.token).not.toBe(before);
  await expect
    .poll(() => host!.stderr())
    .toContain('a new token was made: tabs opened with an earlier URL must open the URL above');
  await expect(page.getByTestId('host-down')).toHaveText(
    'The MediaDesk host was started with a new access link: open the URL it printed.',
  );
  let attempts = 0;
  page.on('websocket', () => attempts++);
  // Kept: a tab that wrongly retried would open a socket within its first retry delays (bridge.ts); none may.
  await page.waitForTimeout(1500);
  expect(attempts).toBe(0);
  // The URL it printed brings the tab back.
  await page.goto(`${host.url}#settings`);
  await expect(page.getByTestId('concurrency')).toBeVisible();
  await expect(page.getByTestId('host-down')).toBeHidden();
});

test('a tab whose host has gone sends its token to no other program that takes the port, and says who answers', async ({
  page,
}) => {
  const { port, token } = await tabThenHostStops(page);
  // Another program takes the port and answers everything, keeping what it is sent.
  const heard: string[] = [];
  const stranger = createHttpServer((req, res) => {
    heard.push(`${req.method} ${req.url} cookie=${req.headers.cookie ?? ''}`);
    res.setHeader('content-type', 'text/html');
    res.end('<p>another program</p>');
  });
  stranger.on('upgrade', (req, socket) => {
    heard.push(`UPGRADE ${req.url} cookie=${req.headers.cookie ?? ''}`);
    socket.destroy();
  });
  await new Promise<void>((done) => stranger.listen(port, '127.0.0.1', done));
  try {
    await expect(page.getByTestId('host-down')).toContainText('Another program now answers at this address');
    // Asked again while it waits, never with the token.
    await expect.poll(() => heard.length, { timeout: 15_000 }).toBeGreaterThan(2);
    for (const h of heard) expect(h).not.toContain(token);
    expect(heard.filter((h) => h.startsWith('UPGRADE'))).toEqual([]);
  } finally {
    await new Promise((done) => stranger.close(done));
  }
});

test('the data folder keeps the access token to its owner', async ({ launch }) => {
  test.skip(process.platform === 'win32', 'file modes are POSIX');
  const home = newHome();
  host = await launch(home);
  expect(statSync(join(home, 'web-token')).mode & 0o777).toBe(0o600);
  expect(readFileSync(join(home, 'web-token'), 'utf8').trim()).toBe(host.token);
});

/** The file a click hands the browser: its suggested name and its bytes. */
async function downloadOf(page: Page, click: () => Promise<void>): Promise<{ name: string; bytes: Buffer }> {
  const [download] = await Promise.all([page.waitForEvent('download'), click()]);
  return { name: download.suggestedFilename(), bytes: readFileSync(await download.path()) };
}

test('in the browser, Download of a creation and an audit Export are browser downloads of the right content', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  const home = newHome();
  host = await launch(home);

  await makeOneCreation(host);
  await page.goto(`${host.url}#creations`);
  const card = page.getByTestId('creation-card').first();
  await expect(card).toBeVisible();
  const name = await card.getByTestId('creation-name').innerText();
  const creation = await downloadOf(page, () =>
    card.getByRole('button', { name: `Download ${name}`, exact: true }).click(),
  );
  expect(creation.bytes.length).toBeGreaterThan(0);
  await expect(page.getByText(`Downloaded ${creation.name}: find it in your browser's downloads.`)).toBeVisible();
  // The host keeps no copy: none in its output folder, and the data folder's hand-over is emptied once downloaded.
  const handOver = join(home, 'hand-over');
  expect(existsSync(join(home, 'results', 'Creations'))).toBe(false);
  await expect.poll(() => readdirSync(handOver)).toEqual([]);

  // The audit log, two events imported, exported as CSV: the browser gets the file, no host path is asked for.
  const events = [1, 2].map((i) => ({
    event_id: `evt_dl_${i}`,
    date: new Date(Date.now() - 3_600_000 - i * 1000).toISOString(),
    member: { type: 'user', user_id: 9001, email: 'auditor@e2e.test' },
    category: 'team',
    source: { project: 'Launch', platform: 'web', referer: null },
    action: { event_type: 'team.member.role_changed', verb: 'update', status: 'succeeded', resource_id: `usr_${i}` },
  }));
  const file = join(home, 'events.ndjson');
  writeFileSync(file, events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  await page.goto(`${host.url}#audit`);
  await page.getByTestId('audit-open-import').click();
  await page.getByTestId('audit-import-input').setInputFiles(file);
  await expect(page.getByTestId('audit-import-accepted')).toHaveText('2 accepted');
  await page.getByTestId('audit-open-import').click();
  await page.getByTestId('audit-open-export').click();
  await expect(page.getByTestId('audit-export-path')).toHaveCount(0);
  const csv = await downloadOf(page, () => page.getByTestId('audit-export-run').click());
  expect(csv.name).toMatch(/^audit-export-\d{4}-\d{2}-\d{2}\.csv$/);
  const lines = csv.bytes.toString('utf8').trim().split(/\r?\n/);
  expect(lines).toHaveLength(3);
  expect(lines.slice(1).join('\n')).toContain('evt_dl_1');
  expect(lines.slice(1).join('\n')).toContain('evt_dl_2');
  await expect(page.getByTestId('audit-export-result')).toHaveText(
    `Downloaded ${csv.name} (2 rows): find it in your browser's downloads.`,
  );
  expect(readdirSync(join(home, 'results')).filter((f) => f.startsWith('audit-export'))).toEqual([]);
  await expect.poll(() => readdirSync(handOver)).toEqual([]);

  // Only files the app saved are sent, and only with the token.
  const asked = (path: string, token = host!.token) =>
    fetch(`${host!.origin}/download?token=${token}&path=${encodeURIComponent(path)}`).then((r) => r.status);
  expect(await asked(join(home, 'web-token'))).toBe(403);
  expect(await asked(join(handOver, creation.name), 'wrong')).toBe(401);
  // Downloaded once, it is gone from the host.
  expect(await asked(join(handOver, creation.name))).toBe(404);
  expect(errors).toEqual([]);
});

test('in the browser, Open shows a result or a creation in a new tab, and Show in folder (the host’s) is not offered', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  const home = newHome();
  host = await launch(home);
  await makeOneCreation(host);
  const [job] = (await desk<{ jobs: { outputs: string[] }[] }>(host, 'jobs.list', {})).jobs;

  await page.goto(`${host.url}#results`);
  await expect(page.getByTestId('result-batch')).toContainText('1 of 1 done', { timeout: 30_000 });
  await expect(page.getByRole('button', { name: 'Show in folder' })).toHaveCount(0);
  const [tab] = await Promise.all([page.waitForEvent('popup'), page.getByTestId('result-open').click()]);
  await tab.waitForLoadState();
  expect(new URL(tab.url()).pathname).toBe('/media');
  expect(new URL(tab.url()).searchParams.get('path')).toBe(job.outputs[0]);
  await expect(page.getByText(/in a new tab\.$/)).toBeVisible();
  await tab.close();

  // A recent creation opened: a tab too, and nothing left in the output folder.
  await page.goto(`${host.url}#creations`);
  const card = page.getByTestId('creation-card').first();
  const name = await card.getByTestId('creation-name').innerText();
  const [shown] = await Promise.all([
    page.waitForEvent('popup'),
    card.getByRole('button', { name: `Open ${name}`, exact: true }).click(),
  ]);
  expect(new URL(shown.url()).pathname).toBe('/media');
  expect(existsSync(join(home, 'results', 'Creations'))).toBe(false);
  expect(errors).toEqual([]);
});
