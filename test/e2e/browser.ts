import { existsSync } from 'node:fs';
import type { LaunchOptions } from '@playwright/test';

// The browsers specs run in: Debian's Chromium, headless (Playwright's own download is not reachable
// from here). `CHROMIUM_PATH` names one for both (CI's runners use Google Chrome).

/** The headless shell (package chromium-headless-shell): the same Blink and V8 without the desktop
 * browser around them, about 40 % less CPU a test (docs/TESTING.md); the desktop one where it is absent. */
export const headlessShell =
  process.env.CHROMIUM_PATH ?? ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find((p) => existsSync(p));

/** The desktop browser, for what the shell does not do: it reports notifications denied whatever is granted. */
export const desktopChromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const launchOptions = (executablePath: string | undefined): LaunchOptions => ({
  executablePath,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    '--disable-quic',
    // Ignition alone: a test's page lives seconds, too short for V8's optimising compilers to pay back
    // their compile time (less CPU in most paired runs, axe's walks included; docs/TESTING.md).
    '--js-flags=--max-opt=0',
  ],
});
