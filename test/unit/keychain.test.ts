import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KeychainStore } from '../../electron/core/secrets.ts';

/**
 * Against the real Secret Service (gnome-keyring in a D-Bus session, as scripts/test.sh starts it).
 * Without a session bus there is no keychain to talk to: the suite says so and skips.
 */
const hasBus = Boolean(process.env.DBUS_SESSION_BUS_ADDRESS);
if (!hasBus) {
  console.warn('SKIPPED keychain round trip: no D-Bus session bus (run the tests through scripts/test.sh, which starts gnome-keyring under dbus-run-session)');
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
    const cli = (args: string[], input?: string) => spawnSync(process.execPath, ['bin/mediadesk.js', ...args], { env, input, encoding: 'utf8' });

    const refused = cli(['key', 'set', 'sk-on-the-command-line']);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/read from standard input, never from the command line/);

    const set = cli(['key', 'set'], 'sk-cli-secret-98765\n');
    expect(set.status, set.stderr).toBe(0);
    expect(cli(['key', 'status']).stdout).toMatch(/an API key is set \(stored in the OS keychain\)/);
    expect(cli(['settings', 'set', 'backend=live']).status).toBe(0);

    for (const f of readdirSync(home)) {
      expect(readFileSync(join(home, f)).includes('sk-cli-secret-98765'), f).toBe(false);
    }
    expect(cli(['key', 'clear']).status).toBe(0);
    expect(cli(['key', 'status']).stdout).toMatch(/no API key is set/);
  });
});
