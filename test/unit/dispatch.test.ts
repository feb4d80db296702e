import { mkdtempSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createCore } from '../../electron/core/index.ts';
import { MemorySecretStore } from '../../electron/core/secrets.ts';
import { startSandbox } from '../../electron/sandbox/index.ts';

const core = await createCore({ home: mkdtempSync(join(tmpdir(), 'md-core-')), host: 'web', secrets: new MemorySecretStore(), startSandbox: () => startSandbox({ port: 0 }), env: {} });
afterAll(() => core.close());

describe('the dispatcher every transport calls', () => {
  it('refuses an unknown command', async () => {
    expect(await core.dispatch('settings.drop', {})).toEqual({ ok: false, error: { code: 'not_found', message: 'unknown command "settings.drop"' } });
  });

  it('refuses a payload that breaks the contract, naming the field, before any handler runs', async () => {
    const r = await core.dispatch('settings.set', { concurrency: 'many', apiKey: 'sk-x' });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('invalid');
      expect(r.error.invalid?.map((p) => p.field)).toEqual(expect.arrayContaining(['concurrency']));
    }
    expect(core.settings.get().concurrency).toBe(4);
  });

  it('a partial settings change through the contract keeps the other settings', async () => {
    await core.dispatch('settings.set', { concurrency: 9 });
    await core.dispatch('settings.set', { theme: 'light' });
    expect(core.settings.get()).toMatchObject({ concurrency: 9, theme: 'light' });
  });

  it('reports where results go: Settings\' output folder, else a MediaDesk folder in the user\'s home', async () => {
    const info = async () => ((await core.dispatch('app.info', {})) as { result: { outputDir: string } }).result.outputDir;
    expect(await info()).toBe(join(homedir(), 'MediaDesk'));
    await core.dispatch('settings.set', { outputDir: '/tmp/md-out' });
    expect(await info()).toBe('/tmp/md-out');
    await core.dispatch('settings.set', { outputDir: '' });
  });

  it('tells only whether a key is set, never the key; the Sandbox answers while none is', async () => {
    const before = await core.dispatch('app.info', {});
    expect(before.ok && (before.result as { backend: { effective: string } }).backend.effective).toBe('sandbox');
    await core.dispatch('key.set', { key: 'sk-secret-value-1' });
    await core.dispatch('settings.set', { backend: 'live', baseUrl: 'https://api.example.com' });
    const status = await core.dispatch('key.status', {});
    expect(status).toEqual({ ok: true, result: { set: true, keychain: 'memory' } });
    const info = await core.dispatch('app.info', {});
    expect(JSON.stringify(info)).not.toContain('sk-secret-value-1');
    expect(info.ok && (info.result as { backend: { effective: string } }).backend.effective).toBe('live');
    await core.dispatch('key.clear', {});
    const after = await core.dispatch('app.info', {});
    expect(after.ok && (after.result as { backend: { effective: string; reason: string } }).backend.reason).toMatch(/no API key is set/);
  });

  it('the Sandbox backend starts in-process and answers over real HTTP with the chosen demo identity', async () => {
    await core.dispatch('settings.set', { backend: 'sandbox', sandboxKey: 'sandbox-member' });
    const t = await core.backend.target();
    expect(t.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(t.apiKey).toBe('sandbox-member');
    const res = await fetch(`${t.baseUrl}/v1/analytics/audit-logs/events`, { headers: { 'x-service-api-key': t.apiKey } });
    expect(res.status).toBe(403);
  });
});
