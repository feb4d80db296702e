import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, vi } from 'vitest';
import { DEFAULT_SETTINGS } from '../../shared/settings.ts';
import { ApiClient } from '../../electron/core/api/client.ts';
import { openDatabase, type Db } from '../../electron/core/db/open.ts';
import { QUEUE_MIGRATIONS } from '../../electron/core/queue/migrations.ts';
import { openAnalyticsDb } from '../../electron/core/analytics/store.ts';
import { openAppRunStore } from '../../electron/core/apps/store.ts';
import { teamServices, type TeamServices } from '../../electron/core/team.ts';
import { SETTLED_STATES } from '../../shared/contract/jobs.ts';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';

export const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), `mediadesk-team-${prefix}-`));
export const cleanup = (dir: string) => rmSync(dir, { recursive: true, force: true });

export interface Rig {
  sandbox: RunningSandbox;
  home: string;
  db: Db;
  client: ApiClient;
  services: TeamServices;
  key: { value: string };
  lease: { held: boolean };
  close(): Promise<void>;
}

/**
 * A test file's Sandbox (one, over real HTTP, started before its tests) and the data folders its
 * tests take with `home()`, all removed after them. `url` is valid inside tests.
 */
export function sandboxAndHomes(prefix: string, taskDurationMs: number) {
  let sb: RunningSandbox | null = null;
  const homes: string[] = [];
  beforeAll(async () => {
    sb = await startSandbox({ port: 0, taskDurationMs });
  });
  afterAll(async () => {
    await sb?.close();
    for (const h of homes) cleanup(h);
  });
  return {
    get sandbox() {
      return sb!;
    },
    get url() {
      return sb!.url;
    },
    home(name = prefix) {
      const h = tmp(name);
      homes.push(h);
      return h;
    },
  };
}

/** The team services of a core over a real Sandbox and a real mediadesk.db in a temp folder. */
export async function rig(
  o: { key?: string; sandbox?: RunningSandbox; home?: string; platform?: string } = {},
): Promise<Rig> {
  const sandbox = o.sandbox ?? (await startSandbox({ port: 0, taskDurationMs: 150 }));
  const home = o.home ?? tmp('home');
  // The stores as createCore opens them: the queue's first, then each area's own connection.
  const db = openDatabase(join(home, 'mediadesk.db'), QUEUE_MIGRATIONS);
  const appRuns = openAppRunStore(join(home, 'mediadesk.db'));
  const analyticsDb = openAnalyticsDb(join(home, 'mediadesk.db'));
  const key = { value: o.key ?? 'sandbox-owner' };
  const lease = { held: true };
  const target = async () => ({ baseUrl: sandbox.url, apiKey: key.value });
  const client = new ApiClient(target, { maxDelayMs: 500, retries: 2 });
  const services = teamServices({
    home,
    client,
    target,
    appRuns,
    analyticsDb,
    lease: () => lease.held,
    backend: async () => `live ${sandbox.url}`,
    settings: () => ({ ...DEFAULT_SETTINGS, outputDir: join(home, 'out') }),
    poll: { firstMs: 50, minMs: 50, maxMs: 300 },
    platform: o.platform,
  });
  return {
    sandbox,
    home,
    db,
    client,
    services,
    key,
    lease,
    async close() {
      await services.apps.runner.stop();
      appRuns.close();
      analyticsDb.close();
      db.close();
      if (!o.sandbox) await sandbox.close();
    },
  };
}

/** Waits until the run settles, within the tests' timeout (no timed assertion). */
export function settled(r: Rig, id: string) {
  return vi.waitFor(
    () => {
      const row = r.services.apps.store.get(id)!;
      if (!SETTLED_STATES.includes(row.state)) throw new Error(`run ${id} is ${row.state}`);
      return row;
    },
    { timeout: 60_000, interval: 25 },
  );
}

export async function control(url: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(
    `${url}/__sandbox/${path}`,
    body === undefined
      ? {}
      : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) },
  );
  if (!res.ok) throw new Error(`control ${path}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
}
