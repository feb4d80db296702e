import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, vi } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { DEFAULT_SLUGS } from '../../shared/catalogue/index.ts';
import { DEFAULT_SETTINGS, type Settings } from '../../shared/settings.ts';
import { openEngine } from '../../electron/core/engine/open.ts';
import type { Engine } from '../../electron/core/engine/engine.ts';
import { JobStore, type JobRow } from '../../electron/core/queue/store.ts';
import { openDatabase } from '../../electron/core/db/open.ts';
import { dbPaths } from '../../electron/core/paths.ts';
import { QUEUE_MIGRATIONS } from '../../electron/core/queue/migrations.ts';
import { SETTLED_STATES } from '../../shared/contract/jobs.ts';
import type { HotFolderRecord } from '../../shared/contract/hot-folders.ts';
import type { Core } from '../../electron/core/index.ts';
import { waitsAtOnce } from '../clock.ts';
import { DeskError, type CommandName, type Req, type Res } from '../../shared/contract/index.ts';

export const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), `mediadesk-engine-${prefix}-`));
export const cleanup = (dir: string) => rmSync(dir, { recursive: true, force: true });

/** Distinct small PNGs (distinct colours, so the Sandbox stores distinct inputs). */
export async function makeImages(dir: string, names: string[], size = 32): Promise<string[]> {
  const out: string[] = [];
  for (const [i, n] of names.entries()) {
    const p = join(dir, n);
    mkdirSync(dirname(p), { recursive: true });
    await sharp({
      create: { width: size, height: size, channels: 3, background: { r: i % 256, g: (i >> 8) % 256, b: 77 } },
    })
      .png()
      .toFile(p);
    out.push(p);
  }
  return out;
}

export function engineFor(
  home: string,
  url: string,
  o: {
    settings?: Partial<Settings>;
    concurrency?: number;
    downloadAttempts?: number;
    expiredPatienceMs?: number;
    apiKey?: string;
    platform?: string;
  } = {},
): Engine & { close(): Promise<void> } {
  const settings = { ...DEFAULT_SETTINGS, ...o.settings };
  return openEngine({
    home,
    target: async () => ({ baseUrl: url, apiKey: o.apiKey ?? 'sandbox-owner' }),
    slugs: () => ({ ...DEFAULT_SLUGS }),
    settings: () => settings,
    concurrency: o.concurrency,
    poll: { firstMs: 40, minMs: 40, maxMs: { image: 200, text: 200, audio: 200, video: 200 } },
    client: { maxDelayMs: 2000, clock: waitsAtOnce },
    defaultBackoffMs: 200,
    downloadAttempts: o.downloadAttempts,
    expiredPatienceMs: o.expiredPatienceMs,
    platform: o.platform,
  });
}

/** Waits until every job is settled, within the tests' timeout (no timed assertion). */
export async function settle(engine: Engine, ids: readonly string[], timeout = 60_000): Promise<void> {
  await vi.waitFor(
    () => {
      const rows = engine.store.byIds(ids);
      if (rows.length !== ids.length || !rows.every((r) => SETTLED_STATES.includes(r.state)))
        throw new Error(`jobs not settled: ${rows.map((r) => r.state).join(', ')}`);
    },
    { timeout, interval: 30 },
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

export const creates = (stats: { creates: Record<string, Record<string, number>> }) =>
  Object.values(stats.creates).reduce((a, perKey) => a + Object.values(perKey).reduce((b, n) => b + n, 0), 0);

/**
 * A test file's Sandbox (one, over real HTTP) and one scratch folder, both for the whole file:
 * for tests that drive the CLI or the downloader against it. Read `url` and `dir` inside tests.
 */
export function sandboxAndFolder(prefix: string, taskDurationMs: number) {
  let sb: RunningSandbox | null = null;
  let dir = '';
  beforeAll(async () => {
    sb = await startSandbox({ port: 0, taskDurationMs });
    dir = tmp(prefix);
  });
  afterAll(async () => {
    await sb?.close();
    if (dir) cleanup(dir);
  });
  return {
    get url() {
      return sb!.url;
    },
    get dir() {
      return dir;
    },
  };
}

/**
 * A test file's Sandbox (one, over real HTTP) and per-test folders and engines, closed after each
 * test so the next starts from a reset Sandbox. `url` is valid inside tests.
 */
export function engineSuite(prefix: string, taskDurationMs: number) {
  let sb: RunningSandbox | null = null;
  const dirs: string[] = [];
  const engines: (Engine & { close(): Promise<void> })[] = [];
  beforeAll(async () => {
    sb = await startSandbox({ port: 0, taskDurationMs });
  });
  afterAll(() => sb?.close());
  afterEach(async () => {
    await Promise.all(engines.splice(0).map((e) => e.close()));
    dirs.splice(0).forEach(cleanup);
    await control(sb!.url, 'reset', {});
  });
  return {
    get url() {
      return sb!.url;
    },
    /** A fresh folder, removed after the test. */
    folder() {
      const dir = tmp(prefix);
      dirs.push(dir);
      return dir;
    },
    /** An engine over `home` against this Sandbox, closed after the test. */
    engine(home: string, o?: Parameters<typeof engineFor>[2]) {
      const e = engineFor(home, sb!.url, o);
      engines.push(e);
      return e;
    },
  };
}

/** The hot folder a command answered, or its refusal thrown. */
export function folderOf(reply: Awaited<ReturnType<Core['dispatch']>>): HotFolderRecord {
  if (!reply.ok) throw new Error(reply.error.message);
  return reply.result as HotFolderRecord;
}

/**
 * Grants `folder` to a page's core as the web host's --folder (or the desktop app's chooser) does, so
 * the test may name inputs and hot folders inside it (PathPolicy); returns the core.
 */
export const givenFolder =
  (folder: string) =>
  <C extends { pathPolicy: { grant(path: string): void } | null }>(core: C): C => {
    core.pathPolicy?.grant(folder);
    return core;
  };

/** One batch `b1` of upscaler jobs `j0`, `j1`… over `inputs`, queued in `store` as startBatch would leave them. */
export function queueBatch(store: JobStore, outDir: string, inputs: readonly string[]): void {
  store.insertBatch({
    id: 'b1',
    tool: 'upscaler-precision',
    outDir,
    params: {},
    roots: [],
    snapshot: { namingTemplate: '{name}_{tool}.{ext}', slugs: {} },
    backend: 'sandbox',
    jobs: inputs.map((inputPath, i) => ({ id: `j${i}`, inputPath, relDir: '', params: {} })),
  });
}

/** Every job of a data folder's queue, in queue order, read from its database as `jobs list --all` reads it. */
export function jobsIn(home: string): JobRow[] {
  const db = openDatabase(dbPaths(home).jobs, QUEUE_MIGRATIONS);
  try {
    return new JobStore(db).list({ limit: 1_000_000, offset: 0 }).jobs;
  } finally {
    db.close();
  }
}

/** A contract command through a core's dispatcher, as a host sends it: its answer, or its refusal thrown. */
export async function callCore<K extends CommandName>(core: Core, name: K, req: Req<K>): Promise<Res<K>> {
  const reply = await core.dispatch(name, req);
  if (!reply.ok) throw DeskError.from(reply.error);
  return reply.result as Res<K>;
}
