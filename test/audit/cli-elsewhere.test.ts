import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dbPaths } from '../../electron/core/paths.ts';
import { BIN, runCli } from '../cli.ts';
import { until } from '../wait.ts';
import { makeEvent, openService, tempDir } from './helpers.ts';

// The app's service in this process, the real CLI (or another service) in its own, one cache file.
const tmp = tempDir('md-audit-elsewhere-');
afterAll(() => tmp.cleanup());
const ndjson = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => JSON.stringify(makeEvent(from + i))).join('\n') + '\n';

/** Waits until `f` returns true (the other process has got that far), failing after `ms`. */
const untilThere = (f: () => boolean | Promise<boolean>, what: string, ms = 20_000) =>
  until(f, { what, timeout: ms, interval: 50 });

describe('audit.status while another process loads the cache', () => {
  it('says so while the CLI imports, keeps the counts it had until that import ends, then counts its events and says nothing runs', async () => {
    const home = join(tmp.dir, 'import');
    const env = { MEDIADESK_HOME: home, MEDIADESK_API_URL: 'http://127.0.0.1:9', MEDIADESK_API_KEY: 'unused' };
    const app = openService(dbPaths(home).audit);
    try {
      await app.import([tmp.file('first.ndjson', ndjson(0, 10))]);
      const before = await app.status();
      expect(before).toMatchObject({ events: 10, elsewhere: { importing: false, syncing: false } });

      // An export piped into the CLI and left open: its import runs until the pipe closes.
      const cli = spawn(process.execPath, [BIN, 'audit', 'import', '-'], {
        env: { ...process.env, ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let out = '';
      cli.stdout.on('data', (d) => (out += d));
      const exited = new Promise<number | null>((resolve) => cli.once('exit', resolve));
      // One batch of 5,000 committed, 1,000 more held by the CLI: the cache has changed under the app.
      cli.stdin.write(ndjson(10, 6000));
      await untilThere(async () => (await app.status()).elsewhere.importing, 'the app sees the import');
      await untilThere(
        () => (app.store.db.prepare('SELECT count(*) FROM events').pluck().get() as number) > 10,
        'the first batch is in',
      );

      const during = await app.status();
      expect(during.elsewhere).toEqual({ importing: true, syncing: false });
      // Held as counted before: each poll meanwhile would count a cache that is being filled.
      expect([during.events, during.newest]).toEqual([before.events, before.newest]);
      // The CLI's own status says the same of the import running beside it.
      expect((await runCli(['audit', 'status'], { env })).out).toContain(
        'another process is importing into this cache now\n',
      );
      // The app's own import meanwhile is neither refused nor queued: it goes in beside the CLI's,
      // and its end counts the cache as it is (the CLI's first batch included).
      const [mine] = await app.importTracked([tmp.file('beside.ndjson', ndjson(7000, 5))]);
      expect(mine).toMatchObject({ accepted: 5, duplicates: 0, rejected: 0 });
      expect(await app.status()).toMatchObject({ events: 5015, elsewhere: { importing: true, syncing: false } });

      cli.stdin.end();
      expect(await exited, out).toBe(0);
      expect(out).toBe('standard input (ndjson): 6000 item(s), 6000 added, 0 already cached, 0 rejected\n');
      const after = await app.status();
      expect(after.elsewhere).toEqual({ importing: false, syncing: false });
      expect(after.events).toBe(6015);
      expect(after.newest).toBe(makeEvent(7004).date);
    } finally {
      await app.close();
    }
  });

  it('says so while another process syncs, and not once that process is gone, even killed mid-sync', async () => {
    const dbPath = join(tmp.dir, 'sync', 'audit.db');
    const app = openService(dbPath);
    const script = join(tmp.dir, 'child-sync.ts');
    // A sync waiting for its API key, as one waits on the keychain or the network.
    writeFileSync(
      script,
      `
      import { AuditService } from ${JSON.stringify(join(import.meta.dirname, '../../electron/core/audit/service.ts'))};
      const service = new AuditService({ dbPath: ${JSON.stringify(dbPath)}, target: () => new Promise(() => {}) });
      void service.sync();
      process.stdout.write('go\\n');
    `,
    );
    const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve) =>
        child.stdout.on('data', (d: Buffer) => String(d).includes('go') && resolve()),
      );
      expect((await app.status()).elsewhere).toEqual({ importing: false, syncing: true });
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await gone;
      // Its record is still in the file (no chance to remove it), but its process is gone.
      expect(
        app.store.db.prepare("SELECT count(*) FROM audit_meta WHERE key GLOB 'activity_sync_*'").pluck().get(),
      ).toBe(1);
      expect((await app.status()).elsewhere).toEqual({ importing: false, syncing: false });
      // The next task recorded here clears it.
      await app.import([tmp.file('after-sync.ndjson', ndjson(0, 3))]);
      expect(app.store.db.prepare("SELECT count(*) FROM audit_meta WHERE key GLOB 'activity_*'").pluck().get()).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await app.close();
    }
  });
});
