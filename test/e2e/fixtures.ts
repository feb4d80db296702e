/**
 * The Playwright fixtures every spec starts from (import `test` and `expect` from here):
 *
 * - `sandboxAt(taskDurationMs?, args?)`: the worker's one Sandbox process, reset before the test
 *   (faults, limits, stats and tasks) with tasks taking `taskDurationMs`. Given start-up `args`
 *   (`--limits`, `--seed`), a Sandbox of the test's own instead. Stopped for you.
 * - `launch(home?, env?, port?, args?, { ownProcess }?)`: a web host of the test's own, on a fresh
 *   data folder unless `home` is given, in the test's process unless a process of its own is needed
 *   (startHost); every host launched is stopped after the test.
 * - `sharedHost`: one host per worker for tests that change nothing in its data folder.
 * - `page`: the worker's one page (`reuseContext` in playwright.config.ts), reset by Playwright
 *   before each test; after it, every page of the context is left for `about:blank` before the
 *   test's hosts stop, so no app keeps reconnecting to a port, and permissions granted are cleared.
 *
 * Workers run beside each other: every port is 0 (any free one) and every data folder is new.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test as base, expect, type TestInfo } from '@playwright/test';
import { startHost, newHome, type HostHandle } from './host.ts';
import { resetSandbox, setFaults, startSandboxProcess, type SandboxProcess } from './studio-helpers.ts';

export { expect };

export type SandboxAt = (taskDurationMs?: number, args?: string[]) => Promise<SandboxProcess>;
export type Launch = (
  home?: string,
  env?: NodeJS.ProcessEnv,
  port?: number | null,
  args?: string[],
  options?: { ownProcess?: boolean },
) => Promise<HostHandle>;

/** What each host of a failed test wrote, its logs and (a host process's) output, beside the failure in the report. */
async function attachHostLogs(testInfo: TestInfo, hosts: HostHandle[]): Promise<void> {
  for (const [i, h] of hosts.entries()) {
    const logs = join(h.home, 'logs');
    for (const name of existsSync(logs) ? readdirSync(logs) : [])
      await testInfo.attach(`host ${i + 1} ${name}`, { path: join(logs, name), contentType: 'text/plain' });
    let output: string | null = null;
    try {
      output = h.output();
    } catch {
      // A host in the test's process printed into the test's own output.
    }
    if (output !== null) await testInfo.attach(`host ${i + 1} output`, { body: output, contentType: 'text/plain' });
  }
}

export const test = base.extend<
  { sandboxAt: SandboxAt; launch: Launch; sharedHost: HostHandle },
  { workerSandbox: SandboxProcess; workerHost: HostHandle }
>({
  workerSandbox: [
    async ({}, use) => {
      const sandbox = await startSandboxProcess();
      await use(sandbox);
      await sandbox.stop();
    },
    { scope: 'worker' },
  ],
  workerHost: [
    async ({}, use) => {
      // Its own process: a host here for the worker's life would send every test's host to one.
      const host = await startHost(newHome(), {}, 0, [], { ownProcess: true });
      await use(host);
      await host.stop();
    },
    { scope: 'worker' },
  ],
  sandboxAt: async ({ workerSandbox }, use) => {
    const own: SandboxProcess[] = [];
    await use(async (taskDurationMs = 500, args = []) => {
      if (args.length) {
        const sandbox = await startSandboxProcess(taskDurationMs, args);
        own.push(sandbox);
        return sandbox;
      }
      await resetSandbox(workerSandbox.url);
      await setFaults(workerSandbox.url, { taskDurationMs });
      // The worker's Sandbox outlives the test: a spec's own stop() leaves it running.
      return { ...workerSandbox, stop: async () => {} };
    });
    for (const s of own) await s.stop();
  },
  launch: async ({}, use, testInfo) => {
    const hosts: HostHandle[] = [];
    await use(async (home = newHome(), env = {}, port = 0, args = [], options = {}) => {
      const host = await startHost(home, env, port, args, options);
      hosts.push(host);
      return host;
    });
    for (const h of hosts) await h.stop();
    if (testInfo.status !== testInfo.expectedStatus) await attachHostLogs(testInfo, hosts);
  },
  sharedHost: async ({ workerHost }, use) => use(workerHost),
  // Depending on `launch` makes it end after this: the pages leave the app while its hosts still run.
  page: async ({ page, context, launch: _hostsStopAfter }, use) => {
    await use(page);
    for (const p of context.pages()) await (p === page ? p.goto('about:blank') : p.close()).catch(() => {});
    await context.clearPermissions();
  },
});
