import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import { desktopChromium, launchOptions } from './browser.ts';
import { desk, newHome, type HostHandle } from './host.ts';
import { makeImages, watchErrors, type SandboxProcess } from './studio-helpers.ts';

// Browser notifications are the desktop Chromium's: the headless shell denies them whatever is granted.
test.use({ launchOptions: launchOptions(desktopChromium) });

let host: HostHandle;
let sandbox: SandboxProcess;

interface Shown {
  title: string;
  body: string;
}
declare global {
  interface Window {
    shownNotices: Shown[];
    shownObjects: Notification[];
  }
}

/** Records every `new Notification(...)` the page makes, then lets the browser's own go on. */
async function recordNotifications(page: Page) {
  await page.addInitScript(() => {
    const Real = window.Notification;
    window.shownNotices = [];
    window.shownObjects = [];
    class Recorded extends Real {
      constructor(title: string, options?: NotificationOptions) {
        window.shownNotices.push({ title, body: options?.body ?? '' });
        super(title, options);
        window.shownObjects.push(this);
      }
    }
    window.Notification = Recorded;
  });
}

test('a batch that ends is told once by a browser notification, with the progress in the tab title', async ({
  page,
  context,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(1500);
  host = await launch(newHome(), sandbox.env);
  await context.grantPermissions(['notifications'], { origin: host.origin });
  await recordNotifications(page);
  const dir = join(mkdtempSync(join(tmpdir(), 'md-notify-')), 'shoot');
  await makeImages(dir, 3);

  await page.goto(`${host.url}#settings`);
  const settings = page.getByTestId('notification-settings');
  await expect(settings.getByTestId('notifications')).toBeChecked();
  await expect(settings.getByTestId('browser-notifications')).toHaveText(
    'This browser shows MediaDesk’s notifications.',
  );

  await page.getByTestId('nav-studio').click();
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  await page.getByTestId('pick-folder').setInputFiles(dir);
  await expect(page.getByTestId('input-status')).toContainText('3 files');
  await page.getByTestId('start').click();
  await expect(page).toHaveTitle(/^[0-2]\/3 · MediaDesk$/);
  await expect(page).toHaveTitle('batch done · MediaDesk', { timeout: 60_000 });
  await expect
    .poll(() => page.evaluate(() => window.shownNotices))
    .toEqual([{ title: 'Precision upscaler: 3 images done', body: expect.stringMatching(/^Results are in \//) }]);
  // Once: later events (a thumbnail, the gallery's reads) tell nothing more.
  // Kept: a second notice has no event to wait on; the events after an end all come within 1.5 s.
  await page.waitForTimeout(1500);
  expect(await page.evaluate(() => window.shownNotices.length)).toBe(1);

  // Clicking it opens the Queue.
  await page.evaluate(() => window.shownObjects[0].onclick?.(new Event('click')));
  await expect(page.getByTestId('nav-queue')).toHaveAttribute('aria-current', 'page');

  // A reload does not tell the old batch again.
  await page.reload();
  await expect(page.getByTestId('nav-queue')).toHaveAttribute('aria-current', 'page');
  await desk(host, 'jobs.status', {});
  // Kept: a notice told again would come with the first events after the reload, within 1.5 s.
  await page.waitForTimeout(1500);
  expect(await page.evaluate(() => window.shownNotices)).toEqual([]);

  // Drag out: a result tile carries its download address; the host sends the result, never an input.
  await page.getByTestId('nav-results').click();
  const tile = page.getByTestId('gallery-item').first();
  await expect(tile).toHaveAttribute('draggable', 'true');
  const dragged = await tile.evaluate((el) => {
    const dataTransfer = new DataTransfer();
    el.dispatchEvent(new DragEvent('dragstart', { dataTransfer, bubbles: true, cancelable: true }));
    return { downloadUrl: dataTransfer.getData('DownloadURL'), uri: dataTransfer.getData('text/uri-list') };
  });
  const [, name, url] = /^application\/octet-stream:([^:]+):(http.+)$/.exec(dragged.downloadUrl) ?? [];
  expect(name).toMatch(/^img-0\d_.+\.png$/);
  expect(dragged.uri).toBe(url);
  const sent = await page.request.get(url);
  expect(sent.status()).toBe(200);
  expect(sent.headers()['content-disposition']).toContain(`filename="${name}"`);
  const input = await page.request.get(
    `${host.origin}/download?token=${host.token}&path=${encodeURIComponent(join(dir, 'img-00.png'))}`,
  );
  expect(input.status()).toBe(403);
  expect(errors).toEqual([]);
});

test('a browser that blocks notifications is said so plainly, and the setting turns them off', async ({
  page,
  launch,
  sandboxAt,
}) => {
  sandbox = await sandboxAt(200);
  host = await launch(newHome(), sandbox.env);
  // A browser whose person answers "Block" when asked.
  await page.addInitScript(() => {
    let permission: NotificationPermission = 'default';
    window.Notification = class {
      static get permission() {
        return permission;
      }
      static requestPermission() {
        permission = 'denied';
        return Promise.resolve(permission);
      }
    } as unknown as typeof Notification;
  });
  await page.goto(`${host.url}#settings`);
  const settings = page.getByTestId('notification-settings');
  await settings.getByTestId('notify-me').click();
  await expect(settings.getByTestId('browser-notifications')).toContainText(
    'This browser blocks MediaDesk’s notifications. Allow them in the site’s settings',
  );
  await settings.getByTestId('notifications').uncheck();
  await expect
    .poll(async () => (await desk<{ notifications: boolean }>(host, 'settings.get', {})).notifications)
    .toBe(false);
  await expect(settings.getByTestId('browser-notifications')).toHaveCount(0);
});
