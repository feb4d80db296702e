import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { expect, type Page } from '@playwright/test';
import WebSocket from 'ws';
import { bundleEntry } from '../bundle-entry.ts';
import { lendEnvironment, needsOwnProcess } from '../process-env.ts';

export interface HostHandle {
  url: string;
  origin: string;
  token: string;
  home: string;
  /** The host's process; a host in the test's process (see startHost) has none, and says so. */
  child: ChildProcess;
  /** Everything the host printed (stdout and stderr), for tests that check what never appears in a log. */
  output(): string;
  /** What the host printed on stderr alone (warnings and notes). */
  stderr(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export const newHome = () => mkdtempSync(join(tmpdir(), 'md-e2e-'));

/**
 * A web host on `home`, with the URL its entry prints. `port`: 0 for any free one (tests run beside
 * each other), null for none given (the default, then the last one used). In the test's process by
 * default (a process of its own cost ~0.65 CPU-s to start, some 180 times a run): the same server and
 * core, started as `bin/web.js` starts them, over real HTTP. A port, `args`, a variable only a new
 * process honours (PROCESS_ONLY: the keychain's D-Bus session), `ownProcess`, a second
 * host while one runs here, a data folder another host holds, or MEDIADESK_TEST_HOST=process give
 * it a process of its own: what a test of the entry itself, its output or its signals needs.
 */
export async function startHost(
  home: string,
  env: NodeJS.ProcessEnv = {},
  port: number | null = 0,
  args: string[] = [],
  { ownProcess = false } = {},
): Promise<HostHandle> {
  const processOnly = needsOwnProcess(env) || port !== 0 || args.length > 0;
  if (ownProcess || processOnly || inProcess || process.env.MEDIADESK_TEST_HOST === 'process')
    return hostProcess(home, env, port, args);
  const embedded = await webHostModules();
  if (await embedded.runningWebHost(home)) return hostProcess(home, env, port, args);
  return hostHere(home, env, embedded);
}

type WebHostModules = typeof import('../../electron/host/web/embed.ts');

/** The web host's modules, from the node bundle as `bin/web.js` runs them. */
const webHostModules = (): Promise<WebHostModules> =>
  bundleEntry<WebHostModules>('embed', new URL('../../electron/host/web/embed.ts', import.meta.url));

/** What a spec's host needs beside its data folder: its results in that folder, never in ~/MediaDesk. */
const hostVars = (home: string, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({
  MEDIADESK_HOME: home,
  MEDIADESK_OUTPUT_DIR: join(home, 'results'),
  ...env,
});
const hostEnv = (home: string, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({
  ...process.env,
  ...hostVars(home, env),
});

/** The one host running in this process: it lends the process its environment while it runs. */
let inProcess = false;

async function hostHere(
  home: string,
  env: NodeJS.ProcessEnv,
  { apiEnvProblem, startWebHost, ...launch }: WebHostModules,
): Promise<HostHandle> {
  const full = hostEnv(home, env);
  const problem = apiEnvProblem(full);
  if (problem) throw new Error(`web host: ${problem}`);
  inProcess = true;
  // Set on the process too, for code that reads its environment there, as in the host's own process.
  const putBack = lendEnvironment(hostVars(home, env));
  const restore = () => {
    putBack();
    inProcess = false;
  };
  try {
    const { token } = launch.accessToken(home);
    const host = await startWebHost({
      home,
      ports: [0],
      token,
      folders: launch.givenFolders([tmpdir()], full),
      env: full,
    });
    const port = Number(new URL(host.origin).port);
    launch.writeRecord(home, { port, pid: process.pid, launch: host.launch });
    const url = new URL(host.url);
    let stopped: Promise<void> | null = null;
    const notHere = (what: string) => () => {
      throw new Error(`this host runs in the test's process: ${what} needs startHost(…, { ownProcess: true })`);
    };
    return {
      url: host.url,
      origin: url.origin,
      token: url.searchParams.get('token') ?? '',
      home,
      get child(): ChildProcess {
        return notHere('its process')();
      },
      output: notHere('its output'),
      stderr: notHere('its output'),
      stop: (signal = 'SIGTERM') => {
        if (signal !== 'SIGTERM' && signal !== 'SIGINT') return notHere(`stopping it with ${signal}`)();
        // As its entry on SIGTERM: the port stays remembered, the process and launch go.
        stopped ??= host
          .close()
          .then(() => launch.writeRecord(home, { port }))
          .finally(restore);
        return stopped;
      },
    };
  } catch (e) {
    restore();
    throw e;
  }
}

/** `npm run web`'s entry as a real process, the URL read from its first line. */
async function hostProcess(
  home: string,
  env: NodeJS.ProcessEnv,
  port: number | null,
  args: string[],
): Promise<HostHandle> {
  const portArgs = port === null ? [] : ['--port', String(port)];
  // Specs type paths of folders they make in the temp root: given to the host as its person would (--folder).
  const folderArgs = args.includes('--folder') ? [] : ['--folder', tmpdir()];
  const child = spawn(process.execPath, ['bin/web.js', ...portArgs, ...folderArgs, ...args], {
    env: hostEnv(home, env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let all = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
    all += d;
  });
  child.stdout!.on('data', (d) => (all += d));
  const first = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`web host exited with ${code}: ${stderr}`)));
  });
  const url = new URL(first);
  return {
    url: first,
    origin: url.origin,
    token: url.searchParams.get('token') ?? '',
    home,
    child,
    output: () => all,
    stderr: () => stderr,
    stop: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        // Ended already, by a code or a signal (a test's SIGKILL): a second stop returns at once.
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      }),
  };
}

/**
 * Collects console errors that name the CSP (no inline styles, no {@html}), the page's CSP violations
 * (an eval refused inside a try logs nothing) and uncaught page errors (a Svelte effect loop, a throw
 * in a handler): a spec fails if any appear. Violations are seen from the page's next load on.
 */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page
    .addInitScript(() =>
      document.addEventListener('securitypolicyviolation', (e) =>
        console.error(`Content Security Policy violation: ${e.violatedDirective} refused ${e.blockedURI || 'inline'}`),
      ),
    )
    .catch(() => {});
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(`uncaught: ${e.message.split('\n')[0]}`));
  return errors;
}

/**
 * Drops files from disk, as a drag from the file manager would, on `target` (a CSS selector; the
 * window when absent). A stand-in input of the test's own makes them real disk-backed Files, not
 * copies in memory, and `meanwhile` runs between picking them up and letting go (to delete one, say).
 */
export async function dropFiles(page: Page, paths: string[], meanwhile?: () => unknown, target?: string) {
  await page.evaluate(() => {
    const input = Object.assign(document.createElement('input'), { type: 'file', multiple: true, hidden: true });
    input.dataset.testid = 'drag-source';
    document.body.append(input);
  });
  const source = page.getByTestId('drag-source');
  await source.setInputFiles(paths);
  await meanwhile?.();
  await source.evaluate((input: HTMLInputElement, on) => {
    const dt = new DataTransfer();
    for (const f of input.files ?? []) dt.items.add(f);
    input.remove();
    (on ? document.querySelector(on)! : window).dispatchEvent(
      new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }),
    );
  }, target);
}

/**
 * Routes the page's contract WebSocket through the test: the answer to each command `hold` picks
 * is held back, and a function that lets it go is pushed to the returned list. Call before the page
 * opens the socket (before `goto`).
 */
export async function holdAnswers(
  page: Page,
  hold: (cmd: string, payload: Record<string, unknown>) => boolean,
): Promise<(() => void)[]> {
  const held: (() => void)[] = [];
  await page.routeWebSocket(
    (url) => url.pathname === '/ws',
    (ws) => {
      const server = ws.connectToServer();
      const asked = new Map<number, { cmd: string; payload: Record<string, unknown> }>();
      ws.onMessage((m) => {
        const msg = JSON.parse(String(m)) as { id: number; cmd: string; payload: Record<string, unknown> };
        asked.set(msg.id, { cmd: msg.cmd, payload: msg.payload ?? {} });
        server.send(m);
      });
      // Judged when the answer comes: one that arrives after the test stopped holding goes straight on.
      server.onMessage((m) => {
        const msg = JSON.parse(String(m)) as { id?: number };
        const q = msg.id !== undefined ? asked.get(msg.id) : undefined;
        if (q && msg.id !== undefined) asked.delete(msg.id);
        if (q && hold(q.cmd, q.payload)) held.push(() => ws.send(m));
        else ws.send(m);
      });
    },
  );
  return held;
}

/** Calls a contract command over the host's WebSocket, as the page does (for setup and checks). */
export async function desk<T = unknown>(host: HostHandle, cmd: string, payload: unknown = {}): Promise<T> {
  const ws = new WebSocket(`${host.origin.replace('http', 'ws')}/ws?token=${host.token}`);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  try {
    const reply = await new Promise<{ ok: boolean; result?: T; error?: { message: string } }>((resolve) => {
      ws.on('message', (m) => {
        const msg = JSON.parse(String(m));
        if (msg.id === 1) resolve(msg);
      });
      ws.send(JSON.stringify({ id: 1, cmd, payload }));
    });
    if (!reply.ok) throw Object.assign(new Error(reply.error?.message ?? 'failed'), { desk: reply.error });
    return reply.result as T;
  } finally {
    ws.close();
  }
}

/** One finished image job of the Sandbox, so Recent creations lists one creation. */
export async function makeOneCreation(host: HostHandle): Promise<void> {
  await desk(host, 'batches.start', {
    tool: 'hires',
    inputs: [],
    params: { prompt: 'a red chair in a white room', resolution: '1k' },
    outDir: join(host.home, 'results', 'out'),
  });
  await expect
    .poll(async () => (await desk<{ counts: { done?: number } }[]>(host, 'batches.list', {}))[0].counts.done, {
      timeout: 30_000,
    })
    .toBe(1);
}

/** What `watchLiveRegions` saw: statuses that appeared already saying something, and text put into statuses already there. */
export interface LiveRegionLog {
  /** Text of each status (role="status", aria-live="polite") that entered the page already holding it: screen readers often say nothing of it. */
  bornFull: string[];
  /** Text that arrived in a status already in the page: what screen readers announce. */
  spoke: string[];
  /** As `bornFull`, for alerts (role="alert", aria-live="assertive"). */
  alertBornFull: string[];
  /** As `spoke`, for alerts: what screen readers announce at once, interrupting. */
  alerted: string[];
}

/**
 * Watches, from before the page's own scripts run, how live regions get their text. Call
 * before `goto`; the returned function reads the log so far.
 */
export async function watchLiveRegions(page: Page): Promise<() => Promise<LiveRegionLog>> {
  await page.addInitScript(() => {
    const log: LiveRegionLog = { bornFull: [], spoke: [], alertBornFull: [], alerted: [] };
    (window as unknown as { __liveRegions: LiveRegionLog }).__liveRegions = log;
    const textOf = (el: Element) => (el.textContent ?? '').replace(/\s+/g, ' ').trim();
    const kinds = [
      { sel: '[role="status"], [aria-live="polite"]', born: log.bornFull, spoke: log.spoke },
      { sel: '[role="alert"], [aria-live="assertive"]', born: log.alertBornFull, spoke: log.alerted },
    ];
    new MutationObserver((records) => {
      for (const { sel, born: bornLog, spoke: spokeLog } of kinds) {
        const born = new Set<Element>();
        for (const r of records) {
          for (const n of r.addedNodes) {
            if (!(n instanceof Element)) continue;
            for (const el of [...(n.matches(sel) ? [n] : []), ...n.querySelectorAll(sel)]) {
              born.add(el);
              if (textOf(el)) bornLog.push(textOf(el));
            }
          }
        }
        const spoke = new Set<Element>();
        for (const r of records) {
          const at = r.target instanceof Element ? r.target : r.target.parentElement;
          const region = at?.closest(sel);
          if (region && !born.has(region) && ![...born].some((b) => b.contains(region)) && textOf(region))
            spoke.add(region);
        }
        for (const el of spoke) spokeLog.push(textOf(el));
      }
    }).observe(document, { childList: true, subtree: true, characterData: true });
  });
  return () => page.evaluate(() => (window as unknown as { __liveRegions: LiveRegionLog }).__liveRegions);
}
