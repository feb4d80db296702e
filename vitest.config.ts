import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// Node's cache of compiled modules, for the workers and the processes tests start (CLI, web host,
// Sandbox): each starts on what the last one compiled instead of stripping and compiling it again.
process.env.NODE_COMPILE_CACHE ??= join(import.meta.dirname, 'node_modules', '.cache', 'node-compile-cache');

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/e2e/**', 'node_modules/**'],
    // Native modules (better-sqlite3, sharp) and real servers: forks isolate them per file.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Four on two cores: a test file keeps about half a core busy (the rest waits on the Sandbox,
    // child processes and files: 50 CPU-s for test/team's 90 s), so two workers left a core idle.
    maxWorkers: 4,
  },
});
