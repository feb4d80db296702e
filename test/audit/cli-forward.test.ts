import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { openSettingsFile, SettingsService } from '../../electron/core/settings.ts';
import { runCli } from '../cli.ts';
import { makeEvent, tempDir } from './helpers.ts';

const t = tempDir('md-cli-forward-');
afterAll(() => t.cleanup());
const env = { MEDIADESK_HOME: join(t.dir, 'home'), MEDIADESK_KEYCHAIN_SERVICE: 'mediadesk-test-cli-forward' };
const cli = (...args: string[]) => runCli(args, { env });

it(
  'adds a file sink, forwards after an import when the setting asks, and tells each sink state',
  { timeout: 120_000 },
  async () => {
    const folder = join(t.dir, 'siem');
    const added = await cli('audit', 'sinks', 'add', 'files', '--kind', 'file', '--folder', folder);
    expect(added).toMatchObject({ code: 0, out: 'sink files saved\n' });
    new SettingsService(openSettingsFile(env.MEDIADESK_HOME)).set({ forwardAfterAuditSync: true });

    const file = t.file('events.ndjson', [0, 1, 2, 3, 4].map((i) => JSON.stringify(makeEvent(i))).join('\n') + '\n');
    const imported = await cli('audit', 'import', file);
    expect(imported.code).toBe(0);
    expect(imported.err).toContain('forwarded to files: complete, 5 delivered, 0 refused');
    const hours = readdirSync(join(folder, '2026', '03', '01'));
    expect(hours.length).toBeGreaterThan(0);

    const status = await cli('audit', 'forward', '--status', '--json');
    expect(JSON.parse(status.out).sinks).toEqual([
      expect.objectContaining({ id: 'files', kind: 'file', state: 'up-to-date', behind: 0, delivered: 5 }),
    ]);
    const list = await cli('audit', 'sinks', 'list');
    expect(list.out).toMatch(/^files +file +up to date; 5 delivered, 0 refused/);
  },
);

it('refuses a bad sink with the reason, and a sink it does not know', async () => {
  const bad = await cli('audit', 'sinks', 'add', 'Bad', '--kind', 'splunk-hec', '--url', 'http://splunk.example.com');
  expect(bad.code).toBe(2);
  expect(bad.err).toContain('id must be 1 to 40 lowercase letters');
  expect(bad.err).toContain('url must be https://');
  const unknown = await cli('audit', 'forward', '--sink', 'nope');
  expect(unknown.code).toBe(2);
  expect(unknown.err).toContain('no audit sink "nope"');
});

it('says a HEC sink without a token cannot forward, and removes it', async () => {
  expect((await cli('audit', 'sinks', 'add', 'hec', '--kind', 'splunk-hec', '--url', 'https://127.0.0.1:1')).code).toBe(
    0,
  );
  const r = await cli('audit', 'forward', '--sink', 'hec');
  expect(r.code).toBe(1);
  expect(r.out).toContain('hec: failed, 0 delivered');
  expect(r.out).toContain('has no HEC token');
  expect((await cli('audit', 'sinks', 'remove', 'hec')).code).toBe(0);
  expect((await cli('audit', 'sinks', 'list', '--json')).out).not.toContain('"hec"');
});
