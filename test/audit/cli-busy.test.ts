import { spawn } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeNdjson } from '../../bench/audit-data.ts';
import { dbPaths } from '../../electron/core/paths.ts';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import type { SyncReport } from '../../shared/contract/audit.ts';
import { BIN, cliEnv } from '../cli.ts';
import { makeEvent, openService, tempDir } from './helpers.ts';

// The app's service in this process, the real CLI in its own, one cache file, the Sandbox over HTTP.
const tmp = tempDir('md-audit-busy-');
let sb: RunningSandbox;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, seed: 11 });
});
afterAll(async () => {
  await sb.close();
  tmp.cleanup();
});
const ndjson = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => JSON.stringify(makeEvent(from + i))).join('\n') + '\n';

describe('the app writing to the cache while the mediadesk CLI bulk-imports into it', () => {
  it('neither fails: the app syncs and imports beside it, says it waits, and never holds its thread for the CLI', async () => {
    const home = join(tmp.dir, 'beside');
    // 120,000 events into an empty cache: a bulk load, whose 50,000-row copies and index builds
    // each hold the lock for about a second here.
    const big = join(tmp.dir, 'big.ndjson');
    await writeNdjson(big, 120_000, 'newest-first');
    const small = tmp.file('small.ndjson', ndjson(0, 20));
    const waits: string[] = [];
    const app = openService(dbPaths(home).audit, {
      target: async () => ({ baseUrl: sb.url, apiKey: 'sandbox-owner' }),
      maxBackoffMs: 50,
      onSyncProgress: (p) => p.waiting && waits.push(p.waiting),
      onImportProgress: (p) => p.waiting && waits.push(p.waiting),
    });
    const cli = spawn(process.execPath, [BIN, 'audit', 'import', big], {
      env: { ...process.env, ...cliEnv(home, sb.url) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    cli.stdout.on('data', (d) => (out += d));
    cli.stderr.on('data', (d) => (err += d));
    let running = true;
    const exited = new Promise<number | null>((resolve) =>
      cli.once('exit', (code) => {
        running = false;
        resolve(code);
      }),
    );
    const syncs: SyncReport[] = [];
    const imports: unknown[] = [];
    try {
      // What a user may do meanwhile: sync, and import a small export (through the app's tracked import).
      while (running) {
        syncs.push(await app.sync());
        imports.push(...(await app.importTracked([small])));
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(await exited, err).toBe(0);
      expect(out).toBe(`${big} (ndjson): 120000 item(s), 120000 added, 0 already cached, 0 rejected\n`);
      expect(syncs.filter((r) => r.outcome !== 'complete')).toEqual([]);
      expect(imports).toContainEqual(expect.objectContaining({ fatal: null, rejected: 0 }));
      expect(imports.filter((r) => (r as { fatal: string | null }).fatal !== null)).toEqual([]);
      // It met the CLI's lock and said what it waited for: a try gave up after its 100 ms and the wait went on
      // off the thread. A try that waited inside SQLite (the CLI's 5 s) would have got the lock after the copy, saying nothing.
      expect(waits).toContain(
        'waiting for an import in another process (the mediadesk CLI or the app) to finish writing to the audit cache…',
      );
      const status = await app.status();
      expect(status.events).toBe(120_000 + 20 + (await sandboxTotal()));
      expect(status.lastError).toBeNull();
    } finally {
      cli.kill('SIGKILL');
      await app.close();
    }
  }, 60_000);
});

async function sandboxTotal(): Promise<number> {
  const r = await fetch(`${sb.url}/v1/analytics/audit-logs/events?per_page=1`, {
    headers: { 'x-magnific-api-key': 'sandbox-owner' },
  });
  return (await r.json()).meta.pagination.total;
}

describe('a sync that meets a cache another process keeps locked', () => {
  it('gives up with a message that says so, keeps the pages stored before, and the next sync goes on from there', async () => {
    const path = join(tmp.dir, 'held', 'audit.db');
    let holder: Database.Database | null = null;
    const app = openService(path, {
      target: async () => ({ baseUrl: sb.url, apiKey: 'sandbox-owner' }),
      maxBackoffMs: 50,
      perPage: 20,
      lockWait: { attemptMs: 50, giveUpMs: 1500, giveUpImportMs: 1500 },
      // Once two pages are in, another connection takes the write lock and keeps it.
      onSyncProgress: (p) => {
        if (p.pages === 2 && !holder) {
          holder = new Database(path);
          holder.exec('BEGIN IMMEDIATE');
        }
      },
    });
    try {
      const started = performance.now();
      const r = await app.sync();
      expect(r.outcome).toBe('stopped');
      expect(r.error?.kind).toBe('busy');
      expect(r.error?.message).toMatch(
        /^the audit cache stayed locked by another process \(the mediadesk CLI or the app\) for \d+ s; nothing already stored was lost: the events of the pages read so far are cached, and the next sync resumes from where this one stopped$/,
      );
      expect(performance.now() - started).toBeLessThan(30_000);
      expect(r.pages).toBe(2);
      holder!.exec('ROLLBACK');
      holder!.close();
      // The two pages stored before are there, and the walk's place with them.
      expect(app.store.counts().events).toBe(40);
      expect((await app.status()).resumable).toBe(true);
      const again = await app.sync();
      expect(again.outcome).toBe('complete');
      expect(app.store.counts().events).toBe(await sandboxTotal());
    } finally {
      if (holder && (holder as Database.Database).open) (holder as Database.Database).close();
      await app.close();
    }
  });
});
