import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSettingsFile, SettingsService } from '../../electron/core/settings.ts';
import { DeskError } from '../../shared/contract/define.ts';

const home = () => mkdtempSync(join(tmpdir(), 'md-settings-'));

describe('settings', () => {
  it('starts from defaults and persists a change to settings.json', () => {
    const h = home();
    const s = new SettingsService(openSettingsFile(h));
    expect(s.get()).toMatchObject({
      backend: 'sandbox',
      concurrency: 4,
      namingTemplate: '{name}_{tool}.{ext}',
      theme: 'system',
    });
    s.set({ concurrency: 6, theme: 'dark' });
    const again = new SettingsService(openSettingsFile(h));
    expect(again.get()).toMatchObject({ concurrency: 6, theme: 'dark' });
    expect(JSON.parse(readFileSync(join(h, 'settings.json'), 'utf8')).concurrency).toBe(6);
  });

  it('reads a settings.json the desktop app wrote through electron-store unchanged, and writes it back in its format', () => {
    // Written by electron-store 12 (over conf 16) as MediaDesk 0.1's desktop app did: tabs, no final newline.
    const written = readFileSync(resolve(import.meta.dirname, 'fixtures/settings-written-by-0.1.json'), 'utf8');
    const h = home();
    writeFileSync(join(h, 'settings.json'), written);
    const s = new SettingsService(openSettingsFile(h));
    expect(s.get()).toMatchObject({
      outputDir: '/Users/ana/Fotos — Résultats',
      concurrency: 3,
      planTier: 'enterprise',
      perToolConcurrency: { image: 2 },
    });
    expect(s.fileState()).toMatchObject({ unreadable: null, keptAs: null });
    expect(readFileSync(join(h, 'settings.json'), 'utf8')).toBe(written);
    s.set({ concurrency: 3 });
    expect(readFileSync(join(h, 'settings.json'), 'utf8')).toBe(written);
    s.set({ theme: 'dark' });
    expect(readFileSync(join(h, 'settings.json'), 'utf8')).toBe(
      JSON.stringify({ ...JSON.parse(written), theme: 'dark' }, undefined, '\t'),
    );
  });

  it('a change of one setting leaves every other setting as it was', () => {
    const s = new SettingsService(openSettingsFile(home()));
    s.set({ concurrency: 7 });
    s.set({ theme: 'dark' });
    s.set({ outputDir: '/tmp/out' });
    expect(s.get()).toMatchObject({ concurrency: 7, theme: 'dark', outputDir: '/tmp/out' });
  });

  it('rejects a bad value with the field named, and keeps what was stored', () => {
    const h = home();
    const s = new SettingsService(openSettingsFile(h));
    s.set({ concurrency: 5 });
    let err: unknown;
    try {
      s.set({ concurrency: 99, namingTemplate: '{tool}.{ext}' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DeskError);
    expect((err as DeskError).invalid).toEqual(
      expect.arrayContaining([
        { field: 'concurrency', reason: 'must be at most 32' },
        { field: 'namingTemplate', reason: 'must contain {name} or {n} so results do not collide' },
      ]),
    );
    expect(new SettingsService(openSettingsFile(h)).get().concurrency).toBe(5);
  });

  it("the plan tier is the account's: business by default, enterprise accepted, anything else refused in plain words", () => {
    const h = home();
    const s = new SettingsService(openSettingsFile(h));
    expect(s.get().planTier).toBe('business');
    s.set({ planTier: 'enterprise' });
    let err: unknown;
    try {
      s.set({ planTier: 'pro' as never });
    } catch (e) {
      err = e;
    }
    expect((err as DeskError).invalid).toEqual([
      {
        field: 'planTier',
        reason: "must be the account's plan: business or enterprise (it decides the daily limits per tool)",
      },
    ]);
    expect(new SettingsService(openSettingsFile(h)).get().planTier).toBe('enterprise');
  });

  it('an output folder must be a full path to a folder that can be written or created', () => {
    const h = home();
    const s = new SettingsService(openSettingsFile(h));
    s.set({ outputDir: join(h, 'results') });
    const file = join(h, 'a-file');
    writeFileSync(file, 'not a folder');
    const refusal = (outputDir: string) => {
      try {
        s.set({ outputDir, theme: 'dark' });
      } catch (e) {
        expect(e).toBeInstanceOf(DeskError);
        return (e as DeskError).invalid;
      }
      return null;
    };
    expect(refusal('relative/folder')).toEqual([
      { field: 'outputDir', reason: expect.stringMatching(/^must be a full path/) },
    ]);
    expect(refusal(file)).toEqual([{ field: 'outputDir', reason: `${file} is a file, not a folder` }]);
    expect(refusal(join(file, 'inside'))).toEqual([
      { field: 'outputDir', reason: `${join(file, 'inside')} cannot be created: ${file} is a file` },
    ]);
    // Nothing of a refused change is stored.
    expect(new SettingsService(openSettingsFile(h)).get()).toMatchObject({
      outputDir: join(h, 'results'),
      theme: 'system',
    });
    // A folder not made yet is fine: the first download creates it.
    s.set({ outputDir: join(h, 'new', 'deeper') });
    expect(s.get().outputDir).toBe(join(h, 'new', 'deeper'));
  });

  it('a naming template is a file name: no folders, not hidden, nothing Windows refuses in every name', () => {
    const s = new SettingsService(openSettingsFile(home()));
    for (const [namingTemplate, reason] of [
      ['../../esc_{name}.{ext}', 'must be a file name, without / or \\ (results go in the output folder)'],
      ['sub\\{name}.{ext}', 'must be a file name, without / or \\ (results go in the output folder)'],
      ['.{name}.{ext}', 'must not start with a dot (the files would be hidden)'],
      // Windows could hold none of the names these make (shared/file-names.ts).
      [
        '{date}: {name}.{ext}',
        'must not contain : * ? " < > | or control characters (Windows does not allow them in file names)',
      ],
      ['{name}_{tool}.', 'must not end in a dot or a space (Windows drops them, so results would lose their names)'],
      [
        'nul.{name}.{ext}',
        'must not start with nul before its first dot (Windows keeps that name for a device, so no result could be written)',
      ],
    ]) {
      expect(() => s.set({ namingTemplate }), namingTemplate).toThrow(DeskError);
      try {
        s.set({ namingTemplate });
      } catch (e) {
        expect((e as DeskError).invalid).toContainEqual({ field: 'namingTemplate', reason });
      }
    }
    expect(s.get().namingTemplate).toBe('{name}_{tool}.{ext}');
  });

  it('a hand-broken value falls back alone; the other settings survive', () => {
    const h = home();
    writeFileSync(join(h, 'settings.json'), JSON.stringify({ concurrency: 'lots', theme: 'dark' }));
    const s = new SettingsService(openSettingsFile(h));
    expect(s.get()).toMatchObject({ concurrency: 4, theme: 'dark' });
    expect(s.fileState().ignored).toEqual([
      { name: 'concurrency', stored: '"lots"', reason: 'must be a number', known: true },
    ]);
    // Mended in the file, it is no longer mentioned.
    writeFileSync(join(h, 'settings.json'), JSON.stringify({ concurrency: 8, theme: 'dark' }));
    expect(s.fileState().ignored).toEqual([]);
  });

  it("saving one setting keeps what this build cannot use: a newer build's setting, a hand-edited value", () => {
    const h = home();
    const stored = {
      theme: 'high-contrast',
      concurrency: 3,
      exportFormat: { kind: 'xlsx' },
      namingTemplate: '{name}.{ext}',
    };
    writeFileSync(join(h, 'settings.json'), JSON.stringify(stored));
    const s = new SettingsService(openSettingsFile(h));
    expect(s.get()).toMatchObject({ theme: 'system', concurrency: 3 });
    expect(s.set({ concurrency: 6 })).toMatchObject({
      theme: 'system',
      concurrency: 6,
      namingTemplate: '{name}.{ext}',
    });
    expect(JSON.parse(readFileSync(join(h, 'settings.json'), 'utf8'))).toEqual({ ...stored, concurrency: 6 });
    // Setting it here replaces it, as asked.
    s.set({ theme: 'dark' });
    expect(JSON.parse(readFileSync(join(h, 'settings.json'), 'utf8'))).toEqual({
      ...stored,
      concurrency: 6,
      theme: 'dark',
    });
  });

  it('a settings file that is not JSON runs on the defaults, untouched, until a save keeps it aside', () => {
    const h = home();
    const file = join(h, 'settings.json');
    writeFileSync(file, '{"theme": "dark",');
    const s = new SettingsService(openSettingsFile(h));
    expect(s.get().theme).toBe('system');
    expect(s.fileState()).toEqual({
      path: file,
      unreadable: expect.stringMatching(/settings\.json is not valid JSON \(.+\)$/),
      keptAs: null,
      ignored: [],
    });
    // Reading changes nothing on disk.
    expect(readdirSync(h)).toEqual(['settings.json']);
    expect(readFileSync(file, 'utf8')).toBe('{"theme": "dark",');
    s.set({ concurrency: 6 });
    const { keptAs } = s.fileState();
    expect(keptAs).toMatch(/settings\.json\.bad-\d{4}-\d\d-\d\dT[\d-]+Z$/);
    expect(readFileSync(keptAs!, 'utf8')).toBe('{"theme": "dark",');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ concurrency: 6 });
    expect(s.fileState().unreadable).toBeNull();
  });

  it('a settings file broken while running is read as defaults, and read again once fixed', () => {
    const h = home();
    const s = new SettingsService(openSettingsFile(h));
    s.set({ concurrency: 6 });
    writeFileSync(join(h, 'settings.json'), '{ "concurrency": ');
    expect(s.get().concurrency).toBe(4);
    expect(s.fileState().unreadable).toMatch(/is not valid JSON/);
    writeFileSync(join(h, 'settings.json'), JSON.stringify({ concurrency: 5 }));
    expect(s.get().concurrency).toBe(5);
    expect(s.fileState()).toMatchObject({ unreadable: null, keptAs: null });
  });

  it('a settings file holding JSON that is not an object is unreadable, untouched, until a save keeps it aside', () => {
    const h = home();
    const file = join(h, 'settings.json');
    for (const [text, held] of [
      ['["dark"]', 'a list'],
      ['7', '7'],
      ['null', 'null'],
    ]) {
      writeFileSync(file, text);
      const s = new SettingsService(openSettingsFile(h));
      expect(s.get().concurrency).toBe(4);
      expect(s.fileState().unreadable).toBe(`${file} does not hold a JSON object (it holds ${held})`);
      expect(readFileSync(file, 'utf8')).toBe(text);
    }
    const s = new SettingsService(openSettingsFile(h));
    s.set({ concurrency: 6 });
    expect(readFileSync(s.fileState().keptAs!, 'utf8')).toBe('null');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ concurrency: 6 });
  });

  it('reading the settings of a data folder not made yet makes it, and writes no file', () => {
    const h = join(home(), 'not', 'yet');
    const s = new SettingsService(openSettingsFile(h));
    expect(s.get().concurrency).toBe(4);
    expect(readdirSync(h)).toEqual([]);
  });

  it('a settings path that is a folder says so', () => {
    const h = home();
    mkdirSync(join(h, 'settings.json'));
    const s = new SettingsService(openSettingsFile(h));
    expect(s.get().concurrency).toBe(4);
    expect(s.fileState().unreadable).toBe(`${join(h, 'settings.json')} cannot be read: it is a folder`);
  });
});
