import { globSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { useRunTemp } from './test/run-temp.ts';

// Node's cache of compiled modules, for the workers and the processes tests start (CLI, web host,
// Sandbox): each starts on what the last one compiled instead of stripping and compiling it again.
process.env.NODE_COMPILE_CACHE ??= join(import.meta.dirname, 'node_modules', '.cache', 'node-compile-cache');

// What the tests make in the temp root goes in one folder, removed at the end (test/run-temp.ts).
useRunTemp('vitest');

const testFiles = 'test/**/*.test.ts';
const notHere = ['test/e2e/**', 'node_modules/**'];
// A file that replaces a module (vi.mock) would hand its stand-in to the next file in a shared
// worker: those files get a fresh worker each, found by what they call rather than by a list.
const replacesModules = globSync(testFiles, { cwd: import.meta.dirname, exclude: notHere }).filter((file) =>
  /\bvi\.(mock|doMock|hoisted)\(/.test(readFileSync(join(import.meta.dirname, file), 'utf8')),
);

export default defineConfig({
  test: {
    // Native modules (better-sqlite3, sharp) and real servers: forks, whose workers can be ended.
    pool: 'forks',
    globalSetup: ['test/bundle-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Four on two cores: a test file keeps about half a core busy (the rest waits on the Sandbox,
    // child processes and files: 50 CPU-s for test/team's 90 s), so two workers left a core idle.
    maxWorkers: 4,
    projects: [
      // A worker runs file after file, its imports loaded once: a fresh worker per file cost 130-200
      // of vitest's ~1,100 CPU-s here. Tests restore what they change in the process.
      {
        extends: true,
        test: { name: 'shared', include: [testFiles], exclude: [...notHere, ...replacesModules], isolate: false },
      },
      { extends: true, test: { name: 'isolated', include: replacesModules, isolate: true } },
    ],
  },
});
