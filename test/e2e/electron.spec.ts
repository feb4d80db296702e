import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { expect, test, _electron as electron } from '@playwright/test';
import { newHome } from './host.ts';

/** The binary comes from outside the npm registry, so many machines (this CI among them) lack it. */
function electronBinary(): string | null {
  try {
    const path = createRequire(import.meta.url)('electron') as unknown as string;
    return typeof path === 'string' && existsSync(path) ? path : null;
  } catch {
    return null;
  }
}

const binary = electronBinary();
if (!binary) console.log('SKIPPED Electron launch test: the Electron binary is not installed on this machine (it downloads from outside the npm registry)');

test.describe('Electron shell', () => {
  test.skip(!binary, 'Electron binary not installed');

  test('launches one secure window that shows the app over the Sandbox', async () => {
    const app = await electron.launch({ args: ['.'], env: { ...process.env, MEDIADESK_HOME: newHome() } as Record<string, string> });
    const win = await app.firstWindow();
    await expect(win.getByRole('navigation', { name: 'Main' })).toBeVisible();
    await expect(win.getByTestId('backend-badge')).toContainText('Sandbox');
    // contextIsolation + sandbox + no nodeIntegration: the page sees the contract and nothing of Node.
    const surface = await win.evaluate(() => ({
      require: typeof (window as unknown as { require?: unknown }).require,
      process: typeof (window as unknown as { process?: unknown }).process,
      desk: Object.keys((window as unknown as { desk: object }).desk).sort(),
    }));
    expect(surface).toEqual({ require: 'undefined', process: 'undefined', desk: ['host', 'invoke', 'on', 'pathForFile'] });
    // Navigation away from the app is blocked.
    await win.evaluate(() => { location.href = 'https://example.com/'; });
    await expect(win.getByRole('navigation', { name: 'Main' })).toBeVisible();
    await app.close();
  });
});
