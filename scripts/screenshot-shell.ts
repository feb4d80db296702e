/** Makes docs/screenshots/shell.png: the web host on a fresh data folder, as the README shows it. */
import { chromium } from '@playwright/test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHost } from '../test/e2e/host.ts';
import { desktopChromium, launchOptions } from '../test/e2e/browser.ts';

const host = await startHost(mkdtempSync(join(tmpdir(), 'md-shot-')));
const browser = await chromium.launch(launchOptions(desktopChromium));
const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
await page.goto(`${host.url}#${process.argv[2] ?? 'settings'}`);
await page.getByTestId('backend-badge').getByText('Sandbox').waitFor();
await page.waitForTimeout(500);
await page.screenshot({ path: process.argv[3] ?? 'docs/screenshots/shell.png' });
await browser.close();
await host.stop();
