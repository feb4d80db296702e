import { describe, expect, it } from 'vitest';
import { copyingText, failedText, looseFiles, NothingCopied } from '../../renderer/src/lib/upload.ts';

/** What the browser's drop upload tells the user, and which files it counts as on the host. */
describe('drop upload helpers', () => {
  const fail = (relPath: string) => ({ relPath, message: 'the browser could not read it' });

  it('names the first three failed files, then how many more', () => {
    expect(failedText([fail('a.png')])).toBe('a.png: the browser could not read it');
    expect(failedText(['a.png', 'sub/b.png', 'c.png', 'd.png', 'e.png'].map(fail))).toBe(
      'a.png: the browser could not read it; sub/b.png: the browser could not read it; c.png: the browser could not read it; and 2 more',
    );
    expect(new NothingCopied([fail('a.png')]).message).toBe(
      'No file could be copied: a.png: the browser could not read it',
    );
  });

  it('counts settled files while copying, and says how many failed', () => {
    expect(copyingText({ copied: 0, failed: 0, total: 200 })).toBe('Copying 0 of 200 files…');
    expect(copyingText({ copied: 35, failed: 2, total: 200 })).toBe('Copying 37 of 200 files… (2 could not be copied)');
    expect(copyingText({ copied: 1, failed: 0, total: 1 })).toBe('Copying 1 of 1 file…');
  });

  it('gives loose files of one name paths of their own, so both arrive', () => {
    const files = ['export.json', 'other.csv', 'export.json', 'export.json'].map((n) => new File(['x'], n));
    expect(looseFiles(files).map((f) => f.relPath)).toEqual([
      'export.json',
      'other.csv',
      '2/export.json',
      '3/export.json',
    ]);
  });
});
