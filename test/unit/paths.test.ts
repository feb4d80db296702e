import { describe, expect, it } from 'vitest';
import { baseName, relativeTo, commonDir, dirName, joinPath, subfolderPrefix } from '../../renderer/src/lib/paths.ts';

/** The renderer names files from paths the core gave it; on Windows those are C:\… or \\server\… paths. */
describe('renderer path helpers, POSIX and Windows', () => {
  it("prefixes a job with its subfolder in the path's own separator, and nothing at the root", () => {
    expect(subfolderPrefix('/home/ann/shoot/day 1/a.png', 'day 1')).toBe('day 1/');
    expect(subfolderPrefix('C:\\Users\\ann\\shoot\\day 1\\a.png', 'day 1')).toBe('day 1\\');
    expect(subfolderPrefix('C:\\Users\\ann\\shoot\\a\\b\\a.png', 'a\\b')).toBe('a\\b\\');
    expect(subfolderPrefix('\\\\nas\\photos\\raw\\a.png', 'raw')).toBe('raw\\');
    expect(subfolderPrefix('/home/ann/a.png', '')).toBe('');
    expect(subfolderPrefix('C:\\a.png', null)).toBe('');
  });

  it("takes names and folders apart, and joins in the base's separator", () => {
    expect(baseName('C:\\Users\\ann\\a.png')).toBe('a.png');
    expect(baseName('/home/ann/a.png')).toBe('a.png');
    expect(dirName('C:\\Users\\ann\\a.png')).toBe('C:\\Users\\ann');
    expect(dirName('/home/ann/a.png')).toBe('/home/ann');
    expect(joinPath('C:\\Users\\ann\\', 'out/x.png')).toBe('C:\\Users\\ann\\out\\x.png');
    expect(joinPath('/home/ann/', 'out\\x.png')).toBe('/home/ann/out/x.png');
  });

  it('names files below the folder they share, so two photo.png in different folders read apart', () => {
    const posix = ['/home/ann/shoot/day 1/photo.png', '/home/ann/shoot/day 2/photo.png', '/home/ann/shoot/x.txt'];
    expect(commonDir(posix)).toBe('/home/ann/shoot');
    expect(posix.map((p) => relativeTo(commonDir(posix), p))).toEqual(['day 1/photo.png', 'day 2/photo.png', 'x.txt']);
    const win = ['C:\\Users\\ann\\a\\photo.png', 'C:\\Users\\ann\\b\\photo.png'];
    expect(win.map((p) => relativeTo(commonDir(win), p))).toEqual(['a\\photo.png', 'b\\photo.png']);
    expect(commonDir(['/a/x.png'])).toBe('/a');
    expect(relativeTo(commonDir(['/a/x.png']), '/a/x.png')).toBe('x.png');
    expect(commonDir(['/a/x.png', 'D:\\y.png'])).toBe('');
    expect(relativeTo('/a/b', '/a/bc/x.png')).toBe('/a/bc/x.png');
  });
});
