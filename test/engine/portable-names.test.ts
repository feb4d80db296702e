import { existsSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { control, creates, engineSuite, makeImages, settle } from './helpers.ts';

/**
 * Inputs named as Linux and macOS allow but Windows does not (a device name, a trailing dot or
 * space, in files and folders): their results get names every system holds, so an output on an
 * exFAT or NTFS drive, or copied to a PC, takes them. Linux takes the raw names, so the names
 * written here are the proof.
 */
const sb = engineSuite('portable', 100);

const files = (dir: string): string[] =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((d) => d.isFile())
        .map((d) => relative(dir, join(d.parentPath, d.name)))
        .sort()
    : [];

describe('result names valid on every system', () => {
  it('inputs and sub-folders named like Windows devices or ending in a dot or space get portable results, done, and skipped next time', async () => {
    const dir = sb.folder();
    const input = join(dir, 'in');
    const out = join(dir, 'out');
    await makeImages(input, ['con.png', 'Aux.png', 'nul/a.png', 'draft. /b.png']);
    const e = sb.engine(join(dir, 'home'), { settings: { namingTemplate: '{name}.{ext}' } });
    const r = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
    expect(r.queued).toBe(4);
    e.start();
    await settle(e, r.jobIds);
    expect(e.store.byIds(r.jobIds).map((j) => [j.state, j.error])).toEqual(Array(4).fill(['done', null]));
    expect(files(out)).toEqual(['Aux_.png', 'con_.png', join('draft', 'b.png'), join('nul_', 'a.png')]);
    const again = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
    expect([again.queued, again.skipped.length]).toEqual([0, 4]);
    expect(creates(await control(sb.url, 'stats'))).toBe(4);
  });

  it('a result name that would end in a dot (`photo. .png` under a template without {ext}) loses the dot and spaces', async () => {
    const dir = sb.folder();
    const input = join(dir, 'in');
    const out = join(dir, 'out');
    await makeImages(input, ['photo. .png']);
    const e = sb.engine(join(dir, 'home'), { settings: { namingTemplate: '{tool} {name}' } });
    const r = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
    e.start();
    await settle(e, r.jobIds);
    expect(e.store.byIds(r.jobIds).map((j) => j.state)).toEqual(['done']);
    expect(files(out)).toEqual(['upscaler-precision photo']);
  });

  it('on Windows, an input whose result would have a path over 259 characters is rejected by name before it is paid; the rest runs', async () => {
    const dir = sb.folder();
    const input = join(dir, 'in');
    // An output folder of 225 characters: `a`'s result path fits with room for a `-2`, `bbbbbbbb`'s does not.
    const out = join(dir, 'o'.repeat(253 - dir.length - '/_upscaler-precision.webp'.length - 2 - 2));
    const long = 'b'.repeat(8);
    await makeImages(input, ['a.png', `${long}.png`]);
    const e = sb.engine(join(dir, 'home'), { platform: 'win32' });
    const r = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
    const result = join(out, `${long}_upscaler-precision.webp`);
    expect(r.rejected).toEqual([
      {
        path: join(input, `${long}.png`),
        reason: `its results cannot be written: ${result} would be ${result.length} characters long, more than 253 (Windows allows 259 in a path, and its name may still get a number); Explorer and most programs could not open it; choose an output folder with a shorter path or a shorter naming template, or shorten the name`,
      },
    ]);
    expect(r.queued).toBe(1);
    e.start();
    await settle(e, r.jobIds);
    expect(e.store.byIds(r.jobIds).map((j) => j.state)).toEqual(['done']);
    expect(creates(await control(sb.url, 'stats'))).toBe(1);
    // Elsewhere the same folders take both.
    const linux = sb.engine(join(dir, 'home2'), { platform: 'linux' });
    expect((await linux.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out })).rejected).toEqual([]);

    // A job without an input file (job-<id>_context-t2i.webp) is refused as a whole, nothing queued.
    const deeper = join(out, 'p'.repeat(20));
    await expect(
      e.startBatch({ tool: 'context-t2i', params: { prompt: 'a fox' }, outDir: deeper }),
    ).rejects.toMatchObject({
      code: 'invalid',
      message: expect.stringMatching(
        /^output folder: its results cannot be written: .*job-00000000_context-t2i\.webp would be 2\d\d characters long/,
      ),
    });
    expect(creates(await control(sb.url, 'stats'))).toBe(1);
  });

  it("an input whose results' sub-folder cannot be made is rejected by name before it is paid; the rest runs", async () => {
    const dir = sb.folder();
    const input = join(dir, 'in');
    const out = join(dir, 'out');
    await makeImages(input, ['a.png', 'shoot/b.png']);
    mkdirSync(out);
    writeFileSync(join(out, 'shoot'), 'a file where the folder would go');
    const e = sb.engine(join(dir, 'home'));
    const r = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
    expect(r.queued).toBe(1);
    expect(r.rejected).toEqual([
      {
        path: join(input, 'shoot', 'b.png'),
        reason: `its results cannot be written: ${join(out, 'shoot')} is a file, not a folder`,
      },
    ]);
    e.start();
    await settle(e, r.jobIds);
    expect(e.store.byIds(r.jobIds).map((j) => j.state)).toEqual(['done']);
    expect(creates(await control(sb.url, 'stats'))).toBe(1);
  });
});
