import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from '@playwright/test';
import { headlessShell, launchOptions } from './test/e2e/browser.ts';
import { useRunTemp } from './test/run-temp.ts';

// Node's cache of compiled modules, for the web hosts and Sandboxes specs start: each starts on what
// the last one compiled instead of stripping and compiling its TypeScript again.
process.env.NODE_COMPILE_CACHE ??= join(import.meta.dirname, 'node_modules', '.cache', 'node-compile-cache');

// Workers read the specs' compiled code from the runner's cache but never write it: the runner keeps it in
// the temp folder (Playwright's default path), which useRunTemp moves, so the workers are pointed at it.
process.env.PLAYWRIGHT_TRANSFORM_CACHE_DIR ??= join(
  tmpdir(),
  `playwright-transform-cache-${process.geteuid?.() ?? ''}`,
);

// Data folders, hosts' files and browser profiles go in one temp folder, removed at the end (test/run-temp.ts).
useRunTemp('e2e');

// One seed for the run, set here before the workers start: generated-tools.spec.ts's two halves, in
// different workers, pick from the same ten.
process.env.MEDIADESK_SEED ??= String(Date.now() % 1_000_000);

// These files start before the rest (each group in file order): the longest by test time in a run, and
// notifications, whose desktop browser needs a worker of its own. In file order alone the run ended on one long
// file, one worker busy for its last 20-25 s. Both projects take the same options.
const FIRST = [
  'audit',
  'a11y',
  'studio',
  'queue',
  'apps',
  'favourites-media',
  'shell',
  'video',
  'web-host',
  'video-families',
  'generated-tools',
  'team',
  'notifications',
].map((name) => `**/${name}.spec.ts`);

/** Debian's Chromium's headless shell (test/e2e/browser.ts). */
export default defineConfig({
  testDir: 'test/e2e',
  globalSetup: './test/bundle-setup.ts',
  timeout: 120_000,
  expect: { timeout: 15_000 },
  // Every host and Sandbox listens on a free port and every data folder is new (fixtures.ts), so workers
  // never meet. Files, not tests, are spread over them: with fullyParallel each test took 1.4 times as long
  // (docs/TESTING.md: the same 235 tests, 3,966 s against 3,025 s of test time), and the run with it.
  // Three workers on two cores: with hosts in the workers and a page each, a spec keeps most of a core busy,
  // and four took 19-24 % more CPU for the same tests, and longer (docs/TESTING.md).
  fullyParallel: false,
  workers: 3,
  reporter: [['list']],
  outputDir: 'test-results',
  use: {
    browserName: 'chromium',
    viewport: { width: 1280, height: 800 },
    launchOptions: launchOptions(headlessShell),
    // One context and page a worker, reset between tests (fixtures.ts): a new context's page costs
    // Chromium ~0.6 CPU-s more to load the app than a page that loaded it before (docs/TESTING.md).
    // MEDIADESK_TEST_CONTEXT=fresh gives each test a context of its own.
    reuseContext: process.env.MEDIADESK_TEST_CONTEXT !== 'fresh',
    screenshot: 'only-on-failure',
    trace: 'off',
  },
  projects: [
    { name: 'first', testMatch: FIRST },
    { name: 'rest', testIgnore: FIRST },
  ],
});
