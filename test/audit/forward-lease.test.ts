import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { ForwardLeases, LEASE_MS } from '../../electron/core/audit/forward/lease.ts';
import { openSettingsFile, SettingsService } from '../../electron/core/settings.ts';
import { sinkSecretEnv } from '../../electron/core/secrets.ts';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { SANDBOX_HEC_TOKEN } from '../../electron/sandbox/siem.ts';
import { BIN, runCli } from '../cli.ts';
import { fillArchive, json } from './forward-helpers.ts';
import { tempDir } from './helpers.ts';

/** 20 requests of 100 events a run (the 20,000 events of 1,000 a request it took before). */
const EVENTS = 2000;
let sandbox: RunningSandbox;
const t = tempDir('md-forward-lease-');
beforeAll(async () => {
  sandbox = await startSandbox({ seed: 46 });
});
afterAll(async () => {
  await sandbox.close();
  t.cleanup();
});

/** `mediadesk audit forward` in a process of its own; its stderr as it comes. */
function forward(env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [BIN, 'audit', 'forward'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const run = { child, err: '', out: '', exit: null as Promise<number | null> | null };
  child.stdout!.on('data', (d) => (run.out += d));
  child.stderr!.on('data', (d) => (run.err += d));
  run.exit = new Promise((res) => child.once('exit', (code) => res(code)));
  return run as { child: ChildProcess; err: string; out: string; exit: Promise<number | null> };
}

const hec = () =>
  json<{ hec: { events: number; duplicates: number; unique: number } }>(`${sandbox.url}/__sandbox/siem`).then(
    (s) => s.hec,
  );

it(
  'lets one of two CLI processes forward a sink; the other names its pid, and a SIGKILLed holder hands over',
  { timeout: 300_000 },
  async () => {
    const dbPath = join(t.dir, 'audit.db');
    fillArchive(dbPath, EVENTS).store.close();
    new SettingsService(openSettingsFile(t.dir)).set({
      auditSinks: [
        { kind: 'splunk-hec', id: 'hec', url: sandbox.url, source: 'mediadesk', sourcetype: 'x', enabled: true },
      ],
    });
    const env = {
      MEDIADESK_HOME: t.dir,
      MEDIADESK_AUDIT_FORWARD_BATCH: '100',
      [sinkSecretEnv('hec')]: SANDBOX_HEC_TOKEN,
    };

    // The holder waits in a retry (every request answered 503, Retry-After 600 s), holding the lease.
    await json(`${sandbox.url}/__sandbox/faults`, { siemRate503: 1, retryAfterSec: 600 });
    const holder = forward(env);
    await vi.waitFor(() => expect(holder.err).toMatch(/trying again in/), { timeout: 60_000, interval: 50 });
    const second = forward(env);
    expect(await second.exit).toBe(75);
    expect(second.err).toContain(
      `another process (pid ${holder.child.pid}) is forwarding to sink hec; nothing was sent`,
    );
    expect(second.err).not.toMatch(/trying again/);
    const status = await runCli(['audit', 'forward', '--status'], { env });
    expect(status.out).toContain(`another process (pid ${holder.child.pid} on `);

    // Killed, it hands over at once (its pid is gone from this machine); every event arrives once.
    await json(`${sandbox.url}/__sandbox/faults`, { siemRate503: 0, retryAfterSec: 1 });
    holder.child.kill('SIGKILL');
    await holder.exit;
    const after = forward(env);
    expect(await after.exit).toBe(0);
    expect(after.out).toContain(`hec: complete, ${EVENTS} delivered`);
    expect(await hec()).toMatchObject({ events: EVENTS, duplicates: 0, unique: EVENTS });

    // Two started together over more events: the stand-in receives each once.
    fillArchive(dbPath, EVENTS, EVENTS).store.close();
    const [a, b] = [forward(env), forward(env)];
    const codes = [await a.exit, await b.exit];
    expect(codes.sort()).toEqual(codes.includes(75) ? [0, 75] : [0, 0]);
    expect(await hec()).toMatchObject({ events: 2 * EVENTS, duplicates: 0, unique: 2 * EVENTS });
  },
);

it('hands a lease over once it expires, and the old holder learns it lost it', () => {
  const service = fillArchive(join(t.dir, 'leases.db'), 1);
  const db = service.store.db;
  const here = new ForwardLeases(db, { host: 'a', pid: 1 });
  const there = new ForwardLeases(db, { host: 'b', pid: 2 });
  expect(here.acquire('s', 0)).toBeNull();
  expect(there.acquire('s', LEASE_MS - 1)).toEqual({ host: 'a', pid: 1, expiresAt: LEASE_MS });
  expect(here.renew('s', 1000)).toBe(true);
  expect(there.acquire('s', 1000 + LEASE_MS)).toBeNull();
  expect(here.renew('s', 1000 + LEASE_MS)).toBe(false);
  // Released, another takes it at once; a holder on this machine whose pid is gone hands over too.
  there.release('s');
  expect(here.acquire('s', 0)).toBeNull();
  const gone = new ForwardLeases(db, { pid: 2 ** 22 + 7 });
  expect(gone.acquire('t', 0)).toBeNull();
  expect(new ForwardLeases(db).acquire('t', 1)).toBeNull();
  service.close();
});
