import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../cli.ts';
import { control, creates, makeImages, sandboxAndFolder } from './helpers.ts';

/** Presets from a terminal, as a child process against the Sandbox over HTTP, on real files. */
const at = sandboxAndFolder('presets-cli', 30);

const cli = (args: string[], home = 'home') => runCli(args, { env: cliEnv(join(at.dir, home), at.url), cwd: at.dir });

describe('mediadesk presets', () => {
  it('saves, lists, refuses a taken name and a bad value, removes', async () => {
    const saved = await cli([
      'presets',
      'save',
      'Big soft',
      'upscaler-precision',
      '-p',
      'scale_factor=4',
      '-p',
      'sharpen=3',
    ]);
    expect([saved.code, saved.out]).toEqual([0, 'saved preset Big soft for upscaler-precision\n']);
    const again = await cli(['presets', 'save', 'big SOFT', 'upscaler-precision']);
    expect([again.code, again.err]).toEqual([
      2,
      'mediadesk presets: a preset named "Big soft" exists already; choose another name\n',
    ]);
    const bad = await cli(['presets', 'save', 'Huge', 'upscaler-precision', '-p', 'scale_factor=40']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/^mediadesk presets: Huge: scale_factor .*16/);
    const blank = await cli(['presets', 'save', '  ', 'upscaler-precision']);
    expect([blank.code, blank.err]).toEqual([2, 'mediadesk presets: a preset needs a name\n']);
    const list = await cli(['presets', 'list', '--json']);
    expect(JSON.parse(list.out).map((p: { name: string; params: unknown }) => [p.name, p.params])).toEqual([
      ['Big soft', { scale_factor: 4, sharpen: 3 }],
    ]);
    const gone = await cli(['presets', 'remove', 'Nope']);
    expect([gone.code, gone.err]).toEqual([2, 'mediadesk presets: no preset named "Nope"\n']);
  });

  it('exports, and imports into a fresh data folder: bad entries refused by name, good ones kept', async () => {
    await cli(['presets', 'save', 'Photo x2', 'upscaler-precision', '-p', 'flavor=photo'], 'home-export');
    const file = join(at.dir, 'presets.json');
    const exported = await cli(['presets', 'export', file], 'home-export');
    expect([exported.code, exported.out]).toEqual([0, `wrote ${file}: 1 preset\n`]);
    const text = JSON.parse(readFileSync(file, 'utf8'));
    text.presets.push(
      { name: 'Too big', tool: 'upscaler-precision', params: { scale_factor: 99 } },
      { name: 'Odd', tool: 'upscaler-precision', params: { colour: 'red' } },
      { name: 'Ghost', tool: 'no-such-tool', params: {} },
      { tool: 'upscaler-precision', params: {} },
    );
    writeFileSync(file, JSON.stringify(text));
    const fresh = 'home-import';
    await cli(['presets', 'save', 'Kept', 'upscaler-precision', '-p', 'sharpen=9'], fresh);
    const imported = await cli(['presets', 'import', file], fresh);
    expect(imported.code).toBe(2);
    expect(imported.out).toBe('added Photo x2 (upscaler-precision)\n1 added, 4 refused\n');
    expect(imported.err.split('\n')).toEqual([
      expect.stringMatching(/^refused Too big: scale_factor .*16/),
      'refused Odd: Precision upscaler has no setting "colour"',
      'refused Ghost: no tool "no-such-tool"',
      'refused preset 5: needs a name, a tool and its settings',
      '',
    ]);
    // The import again: the name is taken now; and a file that is not JSON. Neither loses what is stored.
    const twice = await cli(['presets', 'import', file], fresh);
    expect(twice.err).toMatch(/^refused Photo x2: a preset of that name exists already$/m);
    writeFileSync(join(at.dir, 'not.json'), '{ nope');
    const notJson = await cli(['presets', 'import', join(at.dir, 'not.json')], fresh);
    expect([notJson.code, notJson.err]).toEqual([
      2,
      expect.stringMatching(/^mediadesk presets: not\.json is not valid JSON/),
    ]);
    const list = await cli(['presets', 'list', '--json'], fresh);
    expect(JSON.parse(list.out).map((p: { name: string }) => p.name)).toEqual(['Kept', 'Photo x2']);
  });
});

describe('mediadesk run --preset', () => {
  it("sends the preset's settings, with an explicit --param over it; a preset of another tool is refused", async () => {
    await cli(['presets', 'save', 'Four', 'upscaler-precision', '-p', 'scale_factor=4', '-p', 'flavor=sublime']);
    const input = join(at.dir, 'shoot');
    await makeImages(input, ['a.png']);
    const out = join(at.dir, 'out');
    const r = await cli(['run', 'upscaler-precision', input, '--out', out, '--preset', 'four', '-p', 'scale_factor=3']);
    expect(r.code).toBe(0);
    const jobs = JSON.parse((await cli(['jobs', 'list', '--json'])).out);
    expect(jobs.jobs ?? jobs).toEqual([
      expect.objectContaining({ params: expect.objectContaining({ scale_factor: 3, flavor: 'sublime', sharpen: 7 }) }),
    ]);
    const before = creates(await control(at.url, 'stats'));
    const other = await cli(['run', 'skin-creative', input, '--out', out, '--preset', 'Four']);
    expect([other.code, other.err]).toEqual([
      2,
      'mediadesk run: preset "Four" is for upscaler-precision, not skin-creative\n',
    ]);
    const missing = await cli(['run', 'upscaler-precision', input, '--out', out, '--preset', 'Five']);
    expect([missing.code, missing.err]).toEqual([
      2,
      'mediadesk run: no preset named "Five" (mediadesk presets list shows them)\n',
    ]);
    expect(creates(await control(at.url, 'stats'))).toBe(before);
  });
});
