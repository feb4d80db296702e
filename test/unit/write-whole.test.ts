// The one whole-file writer of the core: real files in a temp folder.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeJsonWhole, writeWhole, writeWholeAsync } from '../../electron/core/write-whole.ts';

const folder = () => mkdtempSync(join(tmpdir(), 'md-write-whole-'));

describe('writeWhole', () => {
  it('replaces the file with the new content, with the mode asked, and leaves no temporary file', async () => {
    const dir = folder();
    const path = join(dir, 'a.json');
    writeFileSync(path, 'old');
    writeJsonWhole(path, { told: ['x'] }, { mode: 0o600 });
    expect(readFileSync(path, 'utf8')).toBe('{\n  "told": [\n    "x"\n  ]\n}\n');
    if (process.platform !== 'win32') expect(statSync(path).mode & 0o777).toBe(0o600);
    await writeWholeAsync(path, Buffer.from([1, 2, 3]));
    expect([...readFileSync(path)]).toEqual([1, 2, 3]);
    expect(readdirSync(dir)).toEqual(['a.json']);
  });

  it('leaves the old file, and no temporary one, when the caller refuses before the rename', () => {
    const dir = folder();
    const path = join(dir, 'presets.json');
    writeFileSync(path, 'kept');
    expect(() =>
      writeWhole(path, 'new', {
        beforeRename: () => {
          throw new Error('lock lost');
        },
      }),
    ).toThrow('lock lost');
    expect(readFileSync(path, 'utf8')).toBe('kept');
    expect(readdirSync(dir)).toEqual(['presets.json']);
  });

  it('says why it could not write, leaving no temporary file (a folder where the file goes)', async () => {
    const dir = folder();
    const path = join(dir, 'told.json');
    mkdirSync(path);
    expect(() => writeWhole(path, '{}')).toThrow(/EISDIR|EPERM|ENOTEMPTY|EEXIST/);
    await expect(writeWholeAsync(path, '{}')).rejects.toThrow(/EISDIR|EPERM|ENOTEMPTY|EEXIST/);
    expect(readdirSync(dir)).toEqual(['told.json']);
  });
});
