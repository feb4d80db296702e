import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lock } from 'proper-lockfile';
import { describe, expect, it } from 'vitest';
import { PresetStore } from '../../electron/core/presets/store.ts';

/** The presets file in a real temp data folder. */
const home = () => mkdtempSync(join(tmpdir(), 'presets-store-'));

describe('PresetStore', () => {
  it("keeps the tool's settings without its input, and refuses a name taken in another case unless replaced", async () => {
    const store = new PresetStore(home());
    const p = await store.save({ name: ' Soft ', tool: 'upscaler-precision', params: { image: '/x.png', sharpen: 2 } });
    expect([p.name, p.params]).toEqual(['Soft', { sharpen: 2 }]);
    await expect(store.save({ name: 'SOFT', tool: 'upscaler-precision', params: {} })).rejects.toThrow(
      'a preset named "Soft" exists already; choose another name',
    );
    await store.save({ name: 'soft', tool: 'upscaler-precision', params: { sharpen: 5 }, replace: true });
    expect(store.list().map((x) => [x.name, x.params])).toEqual([['soft', { sharpen: 5 }]]);
  });

  it('a presets file it cannot read is left as it is and every change refused', async () => {
    const dir = home();
    const store = new PresetStore(dir);
    writeFileSync(store.path, '{"mediadeskPresets": 1, "presets": [oops');
    await expect(store.save({ name: 'A', tool: 'upscaler-precision', params: {} })).rejects.toThrow(
      /presets\.json cannot be read .*; it is left as it is/,
    );
    await expect(
      store.importText(
        JSON.stringify({ mediadeskPresets: 1, presets: [{ name: 'B', tool: 'upscaler-precision', params: {} }] }),
        'x.json',
      ),
    ).rejects.toThrow(/it is left as it is/);
    expect(readFileSync(store.path, 'utf8')).toBe('{"mediadeskPresets": 1, "presets": [oops');
  });

  it('a name over 60 characters or with a line break is refused, saying why', async () => {
    const store = new PresetStore(home());
    await expect(store.save({ name: 'x'.repeat(61), tool: 'upscaler-precision', params: {} })).rejects.toThrow(
      "a preset's name is at most 60 characters",
    );
    await expect(store.save({ name: 'a\nb', tool: 'upscaler-precision', params: {} })).rejects.toThrow(
      "a preset's name cannot hold line breaks or control characters",
    );
  });
});

/** `fixtures/save-presets.ts` as a process of its own, as the app, the web host and the CLI each are. */
function savePresets(home: string, prefix: string, count: number): Promise<string> {
  const child = spawn(
    process.execPath,
    [join(import.meta.dirname, 'fixtures', 'save-presets.ts'), home, prefix, `${count}`],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return new Promise((res, rej) => child.once('exit', (code) => (code === 0 ? res(out) : rej(new Error(out)))));
}

describe('PresetStore between processes', () => {
  it('two processes saving and removing presets at once keep every one the other saved', async () => {
    const dir = home();
    await Promise.all([savePresets(dir, 'A', 40), savePresets(dir, 'B', 40)]);
    const names = new PresetStore(dir).list().map((p) => p.name);
    const expected = ['A', 'B'].flatMap((x) => Array.from({ length: 40 }, (_, i) => `${x} ${i}`));
    expect(names.sort()).toEqual(expected.sort());
  }, 120_000);

  it('waits for a change in another process, and gives up after its wait saying why, the file untouched', async () => {
    const dir = home();
    const store = new PresetStore(dir, { lockWaitMs: 400 });
    await store.save({ name: 'Kept', tool: 'upscaler-precision', params: {} });
    const before = readFileSync(store.path, 'utf8');
    const release = await lock(store.path, { realpath: false });
    await expect(store.save({ name: 'Late', tool: 'upscaler-precision', params: {} })).rejects.toThrow(
      "the presets were not changed: another MediaDesk (the app, a browser tab's host or a terminal command) is changing them and did not finish within 0.4 seconds; try again",
    );
    expect(readFileSync(store.path, 'utf8')).toBe(before);
    // Released while a change waits: that change goes through.
    const waiting = new PresetStore(dir, { lockWaitMs: 5000 }).remove('Kept');
    setTimeout(() => void release(), 300);
    await waiting;
    expect(store.list()).toEqual([]);
  });

  it('a lock left by a process that crashed is taken over once it is stale', async () => {
    const dir = home();
    const store = new PresetStore(dir);
    mkdirSync(`${store.path}.lock`);
    const minuteAgo = new Date(Date.now() - 60_000);
    utimesSync(`${store.path}.lock`, minuteAgo, minuteAgo);
    await store.save({ name: 'After a crash', tool: 'upscaler-precision', params: {} });
    expect(store.list().map((p) => p.name)).toEqual(['After a crash']);
  });
});
