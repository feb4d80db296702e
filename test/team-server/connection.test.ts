import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore } from '../../electron/core/index.ts';
import { MemorySecretStore, type SecretStore } from '../../electron/core/secrets.ts';
import { splitTeamUrl } from '../../electron/core/team-server/config.ts';
import { TeamServer } from '../../electron/core/team-server/connection.ts';
import { migrateTeam, TEAM_MIGRATIONS } from '../../electron/core/team-server/migrations.ts';
import { DEFAULT_SETTINGS, settingsPatchSchema } from '../../shared/settings.ts';
import { cleanup, tmp } from '../engine/helpers.ts';
import { pgMissing, startPg, type TestPg } from '../pg.ts';

const missing = pgMissing();
if (missing) console.log(`team server tests skipped: ${missing}`);

describe('the team server URL', () => {
  it('keeps the password out of the URL Settings store, and says what is wrong with a bad one', () => {
    expect(splitTeamUrl('postgres://studio:s3cr%40t@db.lan:5433/mediadesk?sslmode=require')).toEqual({
      url: 'postgres://studio@db.lan:5433/mediadesk?sslmode=require',
      password: 's3cr@t',
    });
    expect(() => splitTeamUrl('http://db.lan/x')).toThrow(/must start with postgres:\/\//);
    expect(() => splitTeamUrl('postgres://db.lan')).toThrow(/must name the database/);
    const stored = settingsPatchSchema.safeParse({ teamServer: 'postgres://u:pw@db.lan/m' });
    expect(stored.success).toBe(false);
    expect(JSON.stringify(stored.error?.issues)).toContain('must not hold the password');
    expect(DEFAULT_SETTINGS.teamServer).toBe('');
  });
});

describe.skipIf(missing)('on a real PostgreSQL', () => {
  let pg: TestPg;
  let dir: string;
  beforeAll(async () => {
    pg = await startPg();
    dir = tmp('team-conn');
  });
  afterAll(async () => {
    await pg?.close();
    cleanup(dir);
  });

  it('two machines migrating at once make the schema once, and a newer schema is refused untouched', async () => {
    const url = await pg.createDb('migrate');
    const servers = [0, 1, 2].map(
      () => new TeamServer({ target: async () => ({ connect: url, shown: url, from: 'env' }) }),
    );
    const statuses = await Promise.all(servers.map((s) => s.status()));
    for (const s of statuses) expect(s).toMatchObject({ reachable: true, schemaVersion: TEAM_MIGRATIONS.length });
    // prefer: this server offers no TLS, so it is spoken to in the clear.
    expect(statuses[0].tls).toBe(false);
    const rows = await servers[0].with((c) => c.query('SELECT version FROM mediadesk.migrations ORDER BY version'));
    expect(rows.rows.map((r) => r.version)).toEqual(TEAM_MIGRATIONS.map((m) => m.version));
    await servers[0].with((c) => c.query("INSERT INTO mediadesk.migrations (version, name) VALUES (99, 'newer')"));
    await expect(servers[1].with((c) => migrateTeam(c))).rejects.toThrow(/version 99, newer than this MediaDesk/);
    for (const s of servers) await s.close();
  });

  it('says why it cannot connect: nobody listening, a database that is not there', async () => {
    const none = new TeamServer({
      target: async () => ({ connect: 'postgres://postgres@127.0.0.1:9/x', shown: 'x', from: 'env' }),
    });
    expect(await none.status()).toMatchObject({ reachable: false, error: expect.stringMatching(/refused/) });
    const url = `postgres://postgres@127.0.0.1:${pg.port}/nothere`;
    const missingDb = new TeamServer({ target: async () => ({ connect: url, shown: url, from: 'env' }) });
    expect(await missingDb.status()).toMatchObject({
      reachable: false,
      error: expect.stringMatching(/does not exist/),
    });
  });

  it('connect keeps the URL in Settings and the password in the keychain, never in a file', async () => {
    const url = await pg.createDb('connect');
    const withPw = url.replace('postgres@', 'postgres:team-pw-123@');
    const keychain = new MemorySecretStore();
    const teamSecrets: SecretStore = {
      kind: 'os',
      note: 'a keychain for the test',
      problem: null,
      get: () => keychain.get(),
      set: (v) => keychain.set(v),
      clear: () => keychain.clear(),
    };
    const home = join(dir, 'connect');
    const core = await createCore({
      home,
      host: 'cli',
      env: {},
      secrets: new MemorySecretStore(),
      teamSecrets,
      startSandbox: async () => {
        throw new Error('no Sandbox here');
      },
      runQueue: false,
    });
    try {
      const r = await core.dispatch('teamServer.connect', { url: withPw });
      expect(r.ok && r.result).toMatchObject({ configured: true, reachable: true, url, from: 'settings' });
      expect(await keychain.get()).toBe('team-pw-123');
      expect(readFileSync(join(home, 'settings.json'), 'utf8')).not.toContain('team-pw-123');
      expect(core.settings.get().teamServer).toBe(url);
      const bad = await core.dispatch('teamServer.connect', { url: 'mysql://db/x' });
      expect(bad.ok).toBe(false);
      expect(!bad.ok && bad.error.message).toMatch(/postgres:\/\//);
    } finally {
      await core.close();
    }
  });
});
