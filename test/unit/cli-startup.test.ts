import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../electron/core/db/open.ts';
import { dbPaths } from '../../electron/core/paths.ts';
import { QUEUE_MIGRATIONS } from '../../electron/core/queue/migrations.ts';
import { JobStore } from '../../electron/core/queue/store.ts';
import { runCli } from '../cli.ts';
import { queueBatch } from '../engine/helpers.ts';

// What a short command loads, not how long it takes (the time is bench/cli-startup.ts's): the
// modules that made `--help` take a second must stay in the commands that use them.
const HOOK = pathToFileURL(resolve(import.meta.dirname, '../loaded-modules-hook.ts')).href;
const dir = mkdtempSync(join(tmpdir(), 'cli-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let runs = 0;
async function loadedBy(args: string[], env: NodeJS.ProcessEnv = {}) {
  const list = join(dir, `modules-${++runs}.txt`);
  const run = await runCli(args, {
    // The sources' module graph, which the bundle's chunks follow: what a command imports, and when.
    env: { ...env, MEDIADESK_TEST_MODULE_LIST: list, NODE_OPTIONS: `--import=${HOOK}`, MEDIADESK_FROM_SOURCE: '1' },
  });
  const urls = readFileSync(list, 'utf8').trim().split('\n');
  const packages = new Set(urls.flatMap((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1] ?? []));
  const ours = urls
    .filter((u) => !u.includes('/node_modules/'))
    .map((u) => u.replace(/^.*?\/(electron|shared)\//, '$1/'));
  return { run, packages, ours };
}

/** The server, the HTTP client, the native image, keychain and database modules, the metadata writer, the folder watcher. */
const HEAVY = ['fastify', 'undici', 'sharp', '@napi-rs/keyring', 'exiftool-vendored', 'chokidar', 'better-sqlite3'];

describe('what a short command loads', () => {
  it('`mediadesk --help` loads none of the heavy modules, nor any command', async () => {
    const { run, packages, ours } = await loadedBy(['--help']);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/\n {2}jobs +List, retry or cancel/);
    expect(ours).toContain('electron/host/cli/main.ts');
    expect(HEAVY.filter((p) => packages.has(p))).toEqual([]);
    expect(ours.filter((u) => u.startsWith('electron/host/cli/commands/') && !u.endsWith('/index.ts'))).toEqual([]);
  });

  it('`mediadesk jobs list` opens the queue without the server, the HTTP client, sharp or the keychain', async () => {
    const home = join(dir, 'home');
    const { run, packages, ours } = await loadedBy(['jobs', 'list'], { MEDIADESK_HOME: home });
    expect([run.code, run.err]).toEqual([0, '0 of 0 jobs\n']);
    // It did read the queue: the database module is there.
    expect(packages.has('better-sqlite3')).toBe(true);
    expect(HEAVY.filter((p) => p !== 'better-sqlite3' && packages.has(p))).toEqual([]);
    expect(ours.filter((u) => u.startsWith('electron/sandbox/') || u === 'electron/core/index.ts')).toEqual([]);
    // The queue alone answers it (nothing queued, no Sandbox job to settle): not the schemas, the engine or the log.
    expect(['zod', 'electron-log', 'image-size'].filter((p) => packages.has(p))).toEqual([]);
    expect(ours.filter((u) => u.startsWith('electron/core/engine/') && !u.endsWith('/lease.ts'))).toEqual([]);
  });

  it('`mediadesk jobs list` over queued jobs reads the same modules: no engine, no zod, no core', async () => {
    const home = join(dir, 'home-queued');
    const db = openDatabase(dbPaths(home).jobs, QUEUE_MIGRATIONS);
    queueBatch(new JobStore(db), home, ['/in/a.png', '/in/b.png']);
    db.close();
    const { run, packages, ours } = await loadedBy(['jobs', 'list'], { MEDIADESK_HOME: home });
    expect([run.code, run.err]).toEqual([0, '2 of 2 jobs\n']);
    expect(HEAVY.filter((p) => p !== 'better-sqlite3' && packages.has(p))).toEqual([]);
    expect(['zod', 'electron-log', 'image-size'].filter((p) => packages.has(p))).toEqual([]);
    expect(ours.filter((u) => u.startsWith('electron/sandbox/') || u === 'electron/core/index.ts')).toEqual([]);
    expect(ours.filter((u) => u.startsWith('electron/core/engine/') && !u.endsWith('/lease.ts'))).toEqual([]);
  });

  it("a command that opens the core leaves the audit sinks' OpenSearch and Elasticsearch clients unloaded", async () => {
    const { run, packages, ours } = await loadedBy(['presets', 'list'], { MEDIADESK_HOME: join(dir, 'presets-home') });
    expect(run.code).toBe(0);
    expect(ours).toContain('electron/core/index.ts');
    expect(['@opensearch-project/opensearch', '@elastic/elasticsearch'].filter((p) => packages.has(p))).toEqual([]);
  });

  it('`mediadesk settings get` reads the settings file alone', async () => {
    const { run, packages, ours } = await loadedBy(['settings', 'get', 'concurrency'], {
      MEDIADESK_HOME: join(dir, 'home'),
    });
    expect(run.code).toBe(0);
    expect(ours).toContain('electron/core/settings.ts');
    expect(HEAVY.filter((p) => packages.has(p))).toEqual([]);
  });
});
