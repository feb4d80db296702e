import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { expect, type Page } from '@playwright/test';
import sharp from 'sharp';

// Shared with the unit tests that start the host as a process.
export { desk } from './host.ts';

export interface SandboxProcess {
  url: string;
  env: NodeJS.ProcessEnv;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * The Sandbox as its own process with a short task duration, so the host can be killed and
 * restarted while tasks stay on the server. The host reaches it through MEDIADESK_API_URL.
 */
export async function startSandboxProcess(taskDurationMs = 500, args: string[] = []): Promise<SandboxProcess> {
  const child = spawn(
    process.execPath,
    ['bin/mediadesk.js', 'sandbox', '--port', '0', '--task-duration-ms', String(taskDurationMs), ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const first = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`sandbox exited with ${code}: ${stderr}`)));
  });
  const url = /listening on (\S+)/.exec(first)?.[1];
  if (!url) throw new Error(`unexpected sandbox output: ${first}`);
  return {
    url,
    env: { MEDIADESK_API_URL: url, MEDIADESK_API_KEY: 'sandbox-owner' },
    child,
    stop: () =>
      new Promise((resolve) => {
        // Ended already, by a code or a signal (a test's SIGKILL): a second stop returns at once.
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

async function sandboxControl(sandboxUrl: string, route: string, body: unknown) {
  const res = await fetch(`${sandboxUrl}/__sandbox/${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${route}: ${res.status} ${await res.text()}`);
}

export const setFaults = (sandboxUrl: string, patch: Record<string, unknown>) =>
  sandboxControl(sandboxUrl, 'faults', patch);

/** Faults, limits, stats, quotas and tasks back to a fresh Sandbox's (tests sharing one). */
export const resetSandbox = (sandboxUrl: string) => sandboxControl(sandboxUrl, 'reset', { tasks: true });

/** The service reprices an app (null: serves it with no cost at all). */
export const setAppCost = (sandboxUrl: string, appId: string, cost: number | null) =>
  sandboxControl(sandboxUrl, `apps/${appId}/cost`, { cost });

/** Requests the Sandbox was sent, by `METHOD /route`. */
async function sandboxRequests(sandboxUrl: string): Promise<Record<string, number>> {
  return ((await (await fetch(`${sandboxUrl}/__sandbox/stats`)).json()) as { requests: Record<string, number> })
    .requests;
}

/** How many app runs the Sandbox was sent: what the user paid for. */
export async function appRunPosts(sandboxUrl: string): Promise<number> {
  return (await sandboxRequests(sandboxUrl))['POST /v1/ai/flows/:appId/run'] ?? 0;
}

/**
 * How many POSTs (creates, uploads, app runs) the Sandbox was sent: anything that could be paid for.
 * The team's credit usage, read for the cost estimate, and the test's own control calls are POSTs that charge nothing.
 */
export async function sandboxPosts(sandboxUrl: string): Promise<number> {
  return Object.entries(await sandboxRequests(sandboxUrl))
    .filter(
      ([route]) =>
        route.startsWith('POST ') &&
        route !== 'POST /v1/analytics/team-credit-usage' &&
        // The test's own control calls (faults, reset) pay for nothing.
        !route.startsWith('POST /__sandbox/'),
    )
    .reduce((a, [, n]) => a + n, 0);
}

/** Small distinct PNGs (64x48), `count` of them, half in a subfolder so mirroring shows. */
export async function makeImages(dir: string, count: number): Promise<string[]> {
  mkdirSync(join(dir, 'sub'), { recursive: true });
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const p = join(dir, i % 2 ? 'sub' : '', `img-${String(i).padStart(2, '0')}.png`);
    await sharp({
      create: { width: 64, height: 48, channels: 3, background: { r: (i * 37) % 255, g: (i * 91) % 255, b: 180 } },
    })
      .png()
      .toFile(p);
    out.push(p);
  }
  return out;
}

export { watchErrors } from './host.ts';

/** Screenshots for the docs are taken only when asked (`MEDIADESK_SCREENSHOTS=1`), never on an ordinary run. */
export const SCREENSHOTS = process.env.MEDIADESK_SCREENSHOTS === '1';

export async function shot(page: Page, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  mkdirSync(join('docs', 'screenshots'), { recursive: true });
  await page.screenshot({ path: join('docs', 'screenshots', `${name}.png`) });
}

/** `shot`, then the same page in the dark theme as `NAME-dark.png`. */
export async function shotInBothThemes(page: Page, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  await shot(page, name);
  await page.evaluate(() => (document.documentElement.dataset.theme = 'dark'));
  await page.screenshot({ path: join('docs', 'screenshots', `${name}-dark.png`) });
  await page.evaluate(() => delete document.documentElement.dataset.theme);
}

/**
 * Presses Enter on a screen's submit button with a required prompt left empty: the refusal marks
 * the prompt and takes the keyboard there (not left on the button, the error out of sight).
 */
export async function expectRefusalFocusesPrompt(page: Page, submit: string) {
  await page.getByTestId(submit).focus();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('error-prompt')).toContainText('is required');
  await expect(page.getByTestId('field-prompt')).toBeFocused();
}
