import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { portableName, sameFileKey, templateNameProblem, windowsPathProblem } from '../../shared/file-names.ts';
import {
  outputDirOf,
  renderName,
  resultNameReader,
  resultPathProblem,
  withCollisionSuffix,
} from '../../electron/core/downloads/naming.ts';
import { hold, release } from '../../electron/core/engine/results.ts';
import { TOOLS } from '../../shared/catalogue/index.ts';

/**
 * Names made from user data must be valid on Windows, macOS and Linux, though the tests run on
 * Linux only (which takes almost any name): these are Windows' rules, kept by our own code.
 */
const parts = (name: string) => ({
  name,
  tool: 'upscaler-precision',
  ext: 'png',
  batch: 'abcdef1234',
  date: new Date('2026-03-04T10:00:00Z'),
});

describe('portable file names', () => {
  it('a Windows device name, with any extension and in any case, gets a `_` after it; a name only starting like one is kept', () => {
    expect(
      ['con', 'con.png', 'AUX.png', 'Nul.tar.gz', 'com1.jpg', 'LPT9', 'com¹.png', 'prn .png', 'CONOUT$.txt'].map((n) =>
        portableName(n, 'x'),
      ),
    ).toEqual([
      'con_',
      'con_.png',
      'AUX_.png',
      'Nul_.tar.gz',
      'com1_.jpg',
      'LPT9_',
      'com¹_.png',
      'prn_ .png',
      'CONOUT$_.txt',
    ]);
    expect(
      ['Aux_upscale.png', 'console.png', 'com10.png', 'lpt.png', 'nullify', 'my con.png'].map((n) =>
        portableName(n, 'x'),
      ),
    ).toEqual(['Aux_upscale.png', 'console.png', 'com10.png', 'lpt.png', 'nullify', 'my con.png']);
  });

  it('trailing dots and spaces go (Windows drops them), unsafe characters become `_`, and a name of dots is the fallback', () => {
    expect(
      ['photo. ', 'photo.', 'draft . .', ' a:b*c?.png', 'tab\there', '.hidden', '...', ' . ', ''].map((n) =>
        portableName(n, 'fallback'),
      ),
    ).toEqual(['photo', 'photo', 'draft', 'a_b_c_.png', 'tab_here', '_hidden', 'fallback', 'fallback', 'fallback']);
    // A device name revealed by the dots going is caught too.
    expect(portableName('nul. ', 'x')).toBe('nul_');
  });

  it('renders results of inputs named like a device, or ending in a dot or space, with names every system can hold', () => {
    expect(renderName('{name}.{ext}', parts('con'), 0)).toBe('con_.png');
    expect(renderName('{name}.{ext}', parts('con'), 1)).toBe('con__2.png');
    expect(renderName('{name}', parts('photo. '), 0)).toBe('photo');
    expect(renderName('{name}', parts('photo. '), 1)).toBe('photo_2');
    expect(renderName('{date} {name}', parts('...'), 0)).toBe('2026-03-04');
    // The default template never made such names: `con_upscaler-precision.png` is fine everywhere.
    expect(renderName('{name}_{tool}.{ext}', parts('con'), 0)).toBe('con_upscaler-precision.png');
    expect(renderName('{name}_{tool}.{ext}', parts('photo. '), 0)).toBe('photo. _upscaler-precision.png');
    // A collision suffix keeps a portable name portable.
    expect(withCollisionSuffix('/o/con_.png', 2)).toBe('/o/con_-2.png');
  });

  it("an input's sub-folders become output folders with portable names", () => {
    expect(outputDirOf('/out', '')).toBe('/out');
    expect(outputDirOf('/out', join('shoot', 'aux', 'draft. ', 'a:b'))).toBe(
      join('/out', 'shoot', 'aux_', 'draft', 'a_b'),
    );
    expect(outputDirOf('/out', join('...', 'x'))).toBe(join('/out', '_', 'x'));
  });

  it('a name in another case or Unicode form is the same file to macOS and Windows, and held as one', () => {
    expect(sameFileKey('/o/Photo_X.png')).toBe(sameFileKey('/o/photo_x.png'));
    expect(sameFileKey('/o/Cafe\u0301.png')).toBe(sameFileKey('/o/Caf\u00e9.png'));
    expect(sameFileKey('/o/a.png')).not.toBe(sameFileKey('/o/b.png'));
    try {
      expect(hold('job-a', ['/o/Photo_upscaler-precision.png', '/o/Caf\u00e9_upscaler-precision.png'])).toBe(true);
      // Another job's download into either name would stream into the same `.part` file there.
      expect(hold('job-b', ['/o/photo_upscaler-precision.png'])).toBe(false);
      expect(hold('job-b', ['/o/Cafe\u0301_upscaler-precision.png'])).toBe(false);
      expect(hold('job-b', ['/o/other_upscaler-precision.png'])).toBe(true);
      release('job-a');
      expect(hold('job-b', ['/o/photo_upscaler-precision.png'])).toBe(true);
    } finally {
      release('job-a');
      release('job-b');
    }
  });

  it('reads back a result name macOS lists in NFD, with a template holding accents', () => {
    const read = resultNameReader(['{name}_größer_{tool}.{ext}', '{name}_{tool}.{ext}'], TOOLS);
    const nfd = (s: string) => s.normalize('NFD');
    expect(read(nfd('Café_upscaler-precision.png'))).toEqual({ name: 'Café', tool: 'upscaler-precision' });
    expect(read(nfd('Café_größer_upscaler-precision.png'))).toEqual({ name: 'Café', tool: 'upscaler-precision' });
  });
});

describe('naming templates that could only make invalid names', () => {
  it('are refused with the reason; templates that vary by input are taken', () => {
    expect(['{name}:{tool}.{ext}', '{name}?.{ext}', '{name}|{n}'].map(templateNameProblem)).toEqual(
      Array(3).fill('must not contain : * ? " < > | or control characters (Windows does not allow them in file names)'),
    );
    expect(['{name}.', '{name}_{tool} ', '{n}..'].map(templateNameProblem)).toEqual(
      Array(3).fill('must not end in a dot or a space (Windows drops them, so results would lose their names)'),
    );
    expect(['con.{name}.{ext}', 'AUX .{name}', 'lpt1.{n}'].map(templateNameProblem)).toEqual([
      'must not start with con before its first dot (Windows keeps that name for a device, so no result could be written)',
      'must not start with AUX before its first dot (Windows keeps that name for a device, so no result could be written)',
      'must not start with lpt1 before its first dot (Windows keeps that name for a device, so no result could be written)',
    ]);
    expect(
      [
        '{name}_{tool}.{ext}',
        'con_{name}.{ext}',
        'console {name}.{ext}',
        '{name}.con.{ext}',
        '{date} {name}',
        '{name}',
      ].map(templateNameProblem),
    ).toEqual(Array(6).fill(null));
  });
});

describe("Windows' 260-character path limit", () => {
  const at = (n: number, tail = '') => `C:\\${'p'.repeat(n - 3 - tail.length)}${tail}`;

  it('refuses on win32 a path over 259 UTF-16 units, a character beyond the basic plane counting two; never elsewhere', () => {
    expect(windowsPathProblem(at(259), 'win32')).toBeNull();
    expect(windowsPathProblem(at(260), 'win32')).toBe(
      `${at(260)} would be 260 characters long, more than the 259 Windows allows in a path; Explorer and most programs could not open it`,
    );
    // 257 code points, 259 UTF-16 units: fits; one more unit does not.
    expect(windowsPathProblem(at(259, '📷'), 'win32')).toBeNull();
    expect(windowsPathProblem(at(260, '📷'), 'win32')).toMatch(/would be 260 characters long/);
    for (const platform of ['linux', 'darwin']) expect(windowsPathProblem(at(400), platform)).toBeNull();
  });

  it('keeps room for the number a name may still get', () => {
    expect(windowsPathProblem(at(253), 'win32', 6)).toBeNull();
    expect(windowsPathProblem(at(254), 'win32', 6)).toBe(
      `${at(254)} would be 254 characters long, more than 253 (Windows allows 259 in a path, and its name may still get a number); Explorer and most programs could not open it`,
    );
  });

  it("a result's path: its template's name with the tool's longest extension, in its input's sub-folder", () => {
    // Paths as this system writes them (the tests run on Linux); a separator is one character on Windows too.
    const o = {
      outDir: join('/', 'o'.repeat(150)),
      relDir: 'shoot',
      template: '{name}_{tool}.{ext}',
      tool: 'upscaler-precision',
      kind: 'image' as const,
    };
    const name = 'n'.repeat(253 - o.outDir.length - '/shoot/_upscaler-precision.webp'.length);
    expect(resultPathProblem({ ...o, inputPath: join('/in', 'shoot', `${name}.png`) }, 'win32')).toBeNull();
    expect(resultPathProblem({ ...o, inputPath: join('/in', 'shoot', `${name}n.png`) }, 'win32')).toMatch(
      new RegExp(`shoot/${name}n_upscaler-precision\\.webp would be 254 characters long`),
    );
    expect(resultPathProblem({ ...o, inputPath: join('/in', 'shoot', `${name}n.png`) }, 'linux')).toBeNull();
  });
});
