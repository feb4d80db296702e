import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PresetStore } from '../../electron/core/presets/store.ts';

/** The presets file in a real temp data folder. */
const home = () => mkdtempSync(join(tmpdir(), 'presets-store-'));

describe('PresetStore', () => {
  it("keeps the tool's settings without its input, and refuses a name taken in another case unless replaced", () => {
    const store = new PresetStore(home());
    const p = store.save({ name: ' Soft ', tool: 'upscaler-precision', params: { image: '/x.png', sharpen: 2 } });
    expect([p.name, p.params]).toEqual(['Soft', { sharpen: 2 }]);
    expect(() => store.save({ name: 'SOFT', tool: 'upscaler-precision', params: {} })).toThrow(
      'a preset named "Soft" exists already; choose another name',
    );
    store.save({ name: 'soft', tool: 'upscaler-precision', params: { sharpen: 5 }, replace: true });
    expect(store.list().map((x) => [x.name, x.params])).toEqual([['soft', { sharpen: 5 }]]);
  });

  it('a presets file it cannot read is left as it is and every change refused', () => {
    const dir = home();
    const store = new PresetStore(dir);
    writeFileSync(store.path, '{"mediadeskPresets": 1, "presets": [oops');
    expect(() => store.save({ name: 'A', tool: 'upscaler-precision', params: {} })).toThrow(
      /presets\.json cannot be read .*; it is left as it is/,
    );
    expect(() =>
      store.importText(
        JSON.stringify({ mediadeskPresets: 1, presets: [{ name: 'B', tool: 'upscaler-precision', params: {} }] }),
        'x.json',
      ),
    ).toThrow(/it is left as it is/);
    expect(readFileSync(store.path, 'utf8')).toBe('{"mediadeskPresets": 1, "presets": [oops');
  });

  it('a name over 60 characters or with a line break is refused, saying why', () => {
    const store = new PresetStore(home());
    expect(() => store.save({ name: 'x'.repeat(61), tool: 'upscaler-precision', params: {} })).toThrow(
      "a preset's name is at most 60 characters",
    );
    expect(() => store.save({ name: 'a\nb', tool: 'upscaler-precision', params: {} })).toThrow(
      "a preset's name cannot hold line breaks or control characters",
    );
  });
});
