import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type Core } from '../../electron/core/index.ts';
import { CachedSecretStore, keyFingerprint, MemorySecretStore } from '../../electron/core/secrets.ts';
import { TestClock } from '../clock.ts';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';

/** The OS keychain's stand-in, counting reads: each one is a synchronous round trip to the OS. */
class CountingStore extends MemorySecretStore {
  reads = 0;
  override async get() {
    this.reads++;
    return super.get();
  }
}

let sb: RunningSandbox;
let core: Core;
const keychain = new CountingStore();
beforeAll(async () => {
  sb = await startSandbox({ port: 0 });
  core = await createCore({
    home: mkdtempSync(join(tmpdir(), 'md-keycache-')),
    host: 'web',
    secrets: keychain,
    startSandbox: () => startSandbox({ port: 0 }),
    env: {},
  });
});
afterAll(async () => {
  await core.close();
  await sb.close();
});

const info = async () =>
  ((await core.dispatch('app.info', {})) as { result: { backend: { effective: string; identity: string } } }).result
    .backend;

describe('the API key, read from the keychain', () => {
  it("is read once for a burst of requests, not once per request; this process's own set and clear apply at once", async () => {
    await core.dispatch('settings.set', { backend: 'live', baseUrl: sb.url });
    expect((await core.dispatch('key.set', { key: 'sandbox-owner' })).ok).toBe(true);
    expect((await info()).identity).toBe(`live ${sb.url} key ${keyFingerprint('sandbox-owner')}`);
    const before = keychain.reads;
    for (let i = 0; i < 20; i++) expect((await core.dispatch('creations.list', {})).ok).toBe(true);
    expect(keychain.reads - before).toBeLessThanOrEqual(1);
    expect((await core.dispatch('key.clear', {})).ok).toBe(true);
    expect((await info()).effective).toBe('sandbox');
  });

  it("a key another process stores (the CLI's key set) is seen within two seconds, and not read again sooner", async () => {
    const keychain = new CountingStore();
    const clock = new TestClock();
    const cached = new CachedSecretStore(keychain, 2000, clock);
    expect(await cached.get()).toBe(null);
    await keychain.set('sandbox-owner');
    clock.advance(1999);
    expect([await cached.get(), keychain.reads]).toEqual([null, 1]);
    clock.advance(1);
    expect([await cached.get(), keychain.reads]).toEqual(['sandbox-owner', 2]);
  });
});
