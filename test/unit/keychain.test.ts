import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createServer, type AddressInfo } from 'node:net';
import { createCore } from '../../electron/core/index.ts';
import { KeychainStore, keyFingerprint } from '../../electron/core/secrets.ts';
import { startSandbox } from '../../electron/sandbox/index.ts';

/**
 * Against the real Secret Service (gnome-keyring in a D-Bus session, as scripts/test.sh starts it).
 * Without a session bus there is no keychain to talk to: the suite says so and skips.
 */
const hasBus = Boolean(process.env.DBUS_SESSION_BUS_ADDRESS);
if (!hasBus) {
  console.warn(
    'SKIPPED keychain round trip: no D-Bus session bus (run the tests through scripts/test.sh, which starts gnome-keyring under dbus-run-session)',
  );
}
const service = `MediaDesk-test-${process.pid}-${Date.now()}`;

describe.skipIf(!hasBus)('OS keychain (Secret Service)', () => {
  it('stores, reads and clears the API key', async () => {
    const store = new KeychainStore(service);
    expect(await store.get()).toBeNull();
    await store.set('sk-live-round-trip-123');
    expect(await new KeychainStore(service).get()).toBe('sk-live-round-trip-123');
    await store.clear();
    expect(await store.get()).toBeNull();
  });

  it('the CLI reads the key from stdin into the keychain, and it never lands in the data folder', () => {
    const home = mkdtempSync(join(tmpdir(), 'md-key-'));
    const env = { ...process.env, MEDIADESK_HOME: home, MEDIADESK_KEYCHAIN_SERVICE: service };
    const cli = (args: string[], input?: string) =>
      spawnSync(process.execPath, ['bin/mediadesk.js', ...args], { env, input, encoding: 'utf8' });

    const refused = cli(['key', 'set', 'sk-on-the-command-line']);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/read from standard input, never from the command line/);

    const set = cli(['key', 'set'], 'sk-cli-secret-98765\n');
    expect(set.status, set.stderr).toBe(0);
    // Told apart by its fingerprint; none of the key is shown.
    const fp = keyFingerprint('sk-cli-secret-98765');
    expect(set.stdout).toBe(`API key ${fp} stored in the OS keychain\n`);
    expect(cli(['key', 'status']).stdout).toBe(`an API key is set (key ${fp}, stored in the OS keychain)\n`);
    expect(cli(['settings', 'set', 'backend=live']).status).toBe(0);

    for (const f of readdirSync(home)) {
      expect(readFileSync(join(home, f)).includes('sk-cli-secret-98765'), f).toBe(false);
    }
    expect(cli(['key', 'clear']).status).toBe(0);
    expect(cli(['key', 'status']).stdout).toMatch(/no API key is set/);
  });
});

describe.skipIf(!hasBus)('the core over the OS keychain', () => {
  it('a key stored or removed is reported so while the built-in Sandbox cannot start', async () => {
    // The built-in Sandbox cannot start: its port is taken. The status after each change says so.
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as AddressInfo).port;
    const home = mkdtempSync(join(tmpdir(), 'md-core-key-'));
    const core = await createCore({
      home,
      host: 'web',
      secrets: new KeychainStore(service),
      startSandbox: () => startSandbox({ port }),
      env: {},
      runQueue: false,
    });
    try {
      await expect(core.backend.target()).rejects.toThrow(/EADDRINUSE/);
      expect(await core.dispatch('app.info', {})).toMatchObject({
        ok: true,
        result: { backend: { reason: expect.stringMatching(/could not start/) } },
      });

      expect(await core.dispatch('key.set', { key: 'sk-core-status-fails-1' })).toEqual({
        ok: true,
        result: { ok: true },
      });
      expect(await new KeychainStore(service).get()).toBe('sk-core-status-fails-1');
      expect(await core.dispatch('key.clear', {})).toEqual({ ok: true, result: { ok: true } });
      expect(await new KeychainStore(service).get()).toBeNull();
      expect(await core.dispatch('key.status', {})).toEqual({
        ok: true,
        result: { set: false, keychain: 'os', fingerprint: null, keychainProblem: null },
      });
    } finally {
      await new KeychainStore(service).clear().catch(() => {});
      await core.close().catch(() => {});
      taken.close();
      rmSync(home, { recursive: true, force: true });
    }
  });
});

/** A session bus that is not there: the keychain cannot answer, in CI's D-Bus session too. */
describe.skipIf(process.platform !== 'linux')('the CLI without an OS keychain', () => {
  const home = mkdtempSync(join(tmpdir(), 'md-nokey-'));
  afterAll(() => rmSync(home, { recursive: true, force: true }));
  const env = {
    ...process.env,
    MEDIADESK_HOME: home,
    MEDIADESK_KEYCHAIN_SERVICE: service,
    DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(home, 'no-bus')}`,
  };
  const cli = (args: string[], input?: string) =>
    spawnSync(process.execPath, ['bin/mediadesk.js', ...args], { env, input, encoding: 'utf8' });

  it('key status says the keychain is unavailable; key set and key clear fail and say why', () => {
    const status = cli(['key', 'status']);
    expect(status.status).toBe(0);
    expect(status.stdout).toMatch(/the OS keychain is unavailable/);
    const set = cli(['key', 'set'], 'sk-nowhere-to-go-123\n');
    expect(set.status).toBe(1);
    expect(set.stderr).toMatch(/^mediadesk key: key not stored: the OS keychain is unavailable/);
    const clear = cli(['key', 'clear']);
    expect(clear.stdout).toBe('');
    expect(clear.stderr).toMatch(
      /^mediadesk key: key not cleared: the OS keychain is unavailable: it did not answer \(.+\)/,
    );
    expect(clear.status).toBe(1);
  });

  it('key status says when the environment names the server and key, which win over the keychain', () => {
    const withEnv = spawnSync(process.execPath, ['bin/mediadesk.js', 'key', 'status'], {
      env: { ...env, MEDIADESK_API_URL: 'https://api.example.com', MEDIADESK_API_KEY: 'sk-env-123' },
      encoding: 'utf8',
    });
    expect(withEnv.status).toBe(0);
    expect(withEnv.stderr).toBe(
      `MEDIADESK_API_URL and MEDIADESK_API_KEY are set: commands here use https://api.example.com with key ${keyFingerprint('sk-env-123')} from the environment, whatever the keychain holds\n`,
    );
    expect(cli(['key', 'status', 'now']).status).toBe(2);
  });
});

/**
 * gnome-keyring aborts when clients come and go side by side (gnome-keyring#196), and D-Bus starts
 * another: a key in use goes on working. In a keyring session of its own (scripts/keyring-session.sh,
 * whose D-Bus starts the daemon unlocked), the daemon is killed between two calls of one store, then
 * with another process's read in flight; then stopped while a read waits on it, which must leave the
 * event loop turning (in the desktop app the core shares Electron's main thread).
 */
if (!process.env.MEDIADESK_TEST_KEYRING) {
  console.warn('SKIPPED keychain daemon restart: run the tests through scripts/test.sh, which has gnome-keyring');
}
describe.skipIf(!process.env.MEDIADESK_TEST_KEYRING)('a keychain daemon that ends and is started again', () => {
  it('the next call, and the call it had in flight, read the key stored before; a call waiting on it holds no thread', () => {
    const r = spawnSync(
      'bash',
      ['scripts/keyring-session.sh', process.execPath, 'test/unit/fixtures/keychain-daemon-ends.ts'],
      {
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      afterRestart: { value: 'sk-survives-the-daemon' },
      inFlight: { value: 'sk-survives-the-daemon' },
      whileWaiting: { value: 'sk-survives-the-daemon' },
    });
  });
});

describe.skipIf(!process.env.MEDIADESK_TEST_KEYRING)('a keychain that is locked, or has no keyring', () => {
  it("mediadesk key says so in plain words and what to do, and keeps the library's own words after", () => {
    const r = spawnSync('bash', ['scripts/keyring-session.sh', 'bash', 'test/unit/fixtures/keychain-locked.sh'], {
      encoding: 'utf8',
      env: { ...process.env, NODE: process.execPath },
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const locked =
      'the OS keychain is locked, and the prompt to unlock it was dismissed or could not be shown: unlock it (on Linux, the "login" keyring) and try again (Couldn\'t access platform storage: Secret Service: unlock prompt was dismissed)';
    expect(r.stdout.split('\n')).toEqual([
      `API key ${keyFingerprint('sk-unlocked-12345')} stored in the OS keychain`,
      'exit 0',
      `mediadesk key: key not stored: ${locked}`,
      'exit 1',
      `no API key can be read: ${locked}`,
      'exit 0',
      `mediadesk key: key not cleared: ${locked}`,
      'exit 1',
      'mediadesk key: key not stored: the OS keychain has no default keyring to keep the key in: create one (on Linux, a "login" keyring, in Passwords and Keys) and try again (Couldn\'t access platform storage: Secret Service: no result found)',
      'exit 1',
      '',
    ]);
  });
});
