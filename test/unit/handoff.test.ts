// Files, folders and mediadesk:// links handed to the desktop app (issue #44): the argv of a first or
// second start, macOS open-file, links. Real files in a temporary folder; no Electron.
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  givenArgs,
  grantHandOff,
  handOffFiles,
  handOffFromArgv,
  HANDOFF_EXTENSIONS,
  linkHandOff,
  handOffsToSend,
  mergeHandOffs,
  parseLink,
} from '../../electron/core/handoff.ts';
import { PathPolicy } from '../../electron/core/path-policy.ts';
import { EVENTS, handOffSchema } from '../../shared/contract/index.ts';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'md-handoff-')));
const shoot = join(root, 'Summer shoot 2024');
const cyr = join(root, 'Фото', 'Ölçü 写真');
mkdirSync(shoot, { recursive: true });
mkdirSync(cyr, { recursive: true });
writeFileSync(join(shoot, 'beach day.JPG'), 'x');
writeFileSync(join(shoot, 'clip.mp4'), 'x');
writeFileSync(join(shoot, 'notes.txt'), 'x');
writeFileSync(join(shoot, 'README'), 'x');
writeFileSync(join(cyr, 'café.png'), 'x');
const packedExe = '/Applications/MediaDesk.app/Contents/MacOS/MediaDesk';

describe('argv of a start', () => {
  it('takes paths after the executable when packed, after `electron APP` in development', () => {
    expect(givenArgs([packedExe, 'a.png'], true).paths).toEqual(['a.png']);
    expect(givenArgs(['/x/electron', '.', 'a.png'], false).paths).toEqual(['a.png']);
    expect(givenArgs(['/x/electron', 'out/main/index.js'], false).paths).toEqual([]);
  });

  it("leaves out Electron's and macOS's own flags, keeps --tool, and `--` ends the options", () => {
    const g = givenArgs(
      [
        packedExe,
        '--allow-file-access-from-files',
        '--original-process-start-time=13350000000000000',
        '-psn_0_1234',
        '--tool',
        'upscaler-precision',
        'a.png',
        'mediadesk://queue?batch=b1',
        '--',
        '--odd.png',
      ],
      true,
    );
    expect(g).toEqual({
      paths: ['a.png', '--odd.png'],
      links: ['mediadesk://queue?batch=b1'],
      tool: 'upscaler-precision',
    });
    expect(givenArgs([packedExe, '--tool=hires'], true).tool).toBe('hires');
  });

  it('a second start: relative paths resolved against its working folder, spaces and non-ASCII names kept', () => {
    const [h] = handOffFromArgv(
      [packedExe, '--enable-features=X', 'beach day.JPG', '../Фото/Ölçü 写真/café.png', '.', 'missing.png'],
      { packed: true, cwd: shoot },
    );
    expect(h).toEqual({
      screen: 'studio',
      tool: null,
      preset: null,
      inputs: [
        { path: join(shoot, 'beach day.JPG'), kind: 'file' },
        { path: join(cyr, 'café.png'), kind: 'file' },
        { path: shoot, kind: 'folder' },
      ],
      refused: [{ path: join(shoot, 'missing.png'), reason: 'does not exist' }],
    });
    expect(handOffSchema.parse(h)).toEqual(h);
  });

  it('refuses what no tool takes, names it, and takes videos and each path once', () => {
    const h = handOffFiles(['notes.txt', 'README', 'clip.mp4', join(shoot, 'clip.mp4')], shoot);
    expect(h.inputs).toEqual([{ path: join(shoot, 'clip.mp4'), kind: 'file' }]);
    expect(h.refused.map((r) => [r.path, r.reason.split(' (')[0]])).toEqual([
      [join(shoot, 'notes.txt'), 'is not an image or video a tool takes'],
      [join(shoot, 'README'), 'is not an image or video a tool takes'],
    ]);
    expect(h.refused[0].reason).toContain('.txt');
    expect(HANDOFF_EXTENSIONS.has('jfif')).toBe(true);
    expect(HANDOFF_EXTENSIONS.has('mp3')).toBe(false);
  });

  it('refuses a special file, a path with NUL, and an unknown or non-Studio --tool (the files still go)', () => {
    const fifo = '/dev/null';
    const h = handOffFiles([fifo, 'a\0b.png', 'beach day.JPG'], shoot, 'video-upscaler');
    expect(h.tool).toBeNull();
    expect(h.inputs).toHaveLength(1);
    expect(h.refused).toEqual([
      { path: '--tool video-upscaler', reason: '"video-upscaler" is not a Studio tool' },
      { path: fifo, reason: 'is not a file or folder' },
      { path: 'a\0b.png', reason: 'is not a path' },
    ]);
    expect(handOffFiles([], shoot, '<script>').refused[0].reason).toBe('"<script>" is not a tool of the catalogue');
  });

  it('a plain start hands nothing over', () => {
    expect(handOffFromArgv([packedExe, '--no-sandbox'], { packed: true, cwd: root })).toEqual([]);
  });
});

describe('mediadesk:// links', () => {
  const folderLink = `mediadesk://studio?tool=upscaler-precision&folder=${encodeURIComponent(cyr)}&preset=Soft%20skin`;

  it('studio: a tool, a folder with non-ASCII name and spaces, a preset', () => {
    expect(parseLink(folderLink)).toEqual({
      screen: 'studio',
      tool: 'upscaler-precision',
      preset: 'Soft skin',
      inputs: [{ path: cyr, kind: 'folder' }],
      refused: [],
    });
    expect(parseLink('mediadesk://studio')).toMatchObject({ tool: null, inputs: [] });
  });

  it('queue and audit: an id each', () => {
    expect(parseLink('mediadesk://queue?batch=2f1c-77ab')).toEqual({ screen: 'queue', batchId: '2f1c-77ab' });
    expect(parseLink('mediadesk://audit/?event=evt_01J9:3')).toEqual({ screen: 'audit', eventId: 'evt_01J9:3' });
  });

  it.each([
    ['mediadesk://studio?folder=../../etc', 'folder steps up with ".."'],
    ['mediadesk://studio?folder=..%2F..%2Fetc', 'folder is not an absolute path'],
    [`mediadesk://studio?folder=${encodeURIComponent(`${root}/x/../..`)}`, 'folder steps up with ".."'],
    ['mediadesk://studio?folder=C:%5CUsers%5C..%5C..%5CWindows', 'folder steps up with ".."'],
    [`mediadesk://studio?folder=${encodeURIComponent(join(root, 'none'))}`, 'does not exist'],
    [`mediadesk://studio?folder=${encodeURIComponent(join(shoot, 'clip.mp4'))}`, 'is not a folder'],
    ['mediadesk://studio?folder=%2Ftmp%0Aevil', 'folder holds control characters'],
    ['mediadesk://studio?tool=%3Cscript%3Ealert(1)%3C%2Fscript%3E', 'tool is not a tool of the catalogue'],
    ['mediadesk://studio?tool=video-2x', 'tool is not a Studio tool'],
    [`mediadesk://studio?tool=${'a'.repeat(500)}`, 'tool is longer than a tool id'],
    [`mediadesk://studio?preset=${'p'.repeat(61)}`, "a preset's name is at most 60 characters"],
    [`mediadesk://studio?folder=/${'d'.repeat(5000)}`, 'folder is longer than 4096 characters'],
    [`mediadesk://studio?folder=/${'d'.repeat(9000)}`, 'the link is longer than 8192 characters'],
    ['mediadesk://studio?tool=hires&tool=editor', 'tool is given more than once'],
    ['mediadesk://studio?run=1', 'Unrecognized key: "run"'],
    ['mediadesk://studio?tool=hires&start=true', 'Unrecognized key: "start"'],
    ['mediadesk://queue?batch=../../x', 'batch is not an id'],
    ['mediadesk://queue', 'batch'],
    [`mediadesk://audit?event=${'e'.repeat(129)}`, 'event is longer than an id'],
    ['mediadesk://settings?key=abc', 'mediadesk://settings is not a link MediaDesk opens'],
    ['mediadesk://studio/etc/passwd', 'takes parameters only'],
    ['https://studio?tool=hires', 'not a mediadesk:// link'],
  ])('%s is refused: %s', (link, reason) => {
    expect(() => parseLink(link)).toThrow(reason);
  });

  it('a refused link opens nothing but the Studio saying why', () => {
    const h = linkHandOff('mediadesk://studio?folder=../../etc');
    expect(h).toEqual({
      screen: 'studio',
      tool: null,
      preset: null,
      inputs: [],
      refused: [
        {
          path: 'mediadesk://studio?folder=../../etc',
          reason: 'mediadesk://studio: folder is not an absolute path; folder steps up with ".."',
        },
      ],
    });
    expect(handOffSchema.safeParse(h).success).toBe(true);
  });

  it('links on the command line (Windows and Linux deliver them so) follow the files', () => {
    const hs = handOffFromArgv([packedExe, 'mediadesk://queue?batch=b1', folderLink], { packed: true, cwd: root });
    expect(hs.map((h) => h.screen)).toEqual(['queue', 'studio']);
  });
});

describe('hand-offs that come together', () => {
  it("macOS's open-file, once per file, joins into one Studio hand-off; a link between keeps its place", () => {
    const one = (p: string) => handOffFiles([p], shoot);
    const merged = mergeHandOffs([
      one('beach day.JPG'),
      one('clip.mp4'),
      one('notes.txt'),
      one('clip.mp4'),
      parseLink('mediadesk://queue?batch=b1'),
      one('beach day.JPG'),
    ]);
    expect(merged.map((h) => h.screen)).toEqual(['studio', 'queue', 'studio']);
    expect(merged[0]).toMatchObject({
      inputs: [
        { path: join(shoot, 'beach day.JPG'), kind: 'file' },
        { path: join(shoot, 'clip.mp4'), kind: 'file' },
      ],
      refused: [{ path: join(shoot, 'notes.txt') }],
    });
  });

  it('with links off in Settings > System, a link is dropped and counted; files still go', () => {
    const held = [
      { h: handOffFiles(['beach day.JPG'], shoot), link: false },
      { h: linkHandOff(`mediadesk://studio?folder=${encodeURIComponent(cyr)}`), link: true },
      { h: parseLink('mediadesk://queue?batch=b1'), link: true },
    ];
    const off = handOffsToSend(held, false);
    expect(off.dropped).toBe(2);
    expect(off.send).toEqual([held[0].h]);
    const on = handOffsToSend(held, true);
    expect(on.dropped).toBe(0);
    // The link's folder joins the files' Studio hand-off, as one Open with.
    expect(on.send.map((h) => h.screen)).toEqual(['studio', 'queue']);
    expect(on.send[0]).toMatchObject({ inputs: [{ kind: 'file' }, { path: cyr, kind: 'folder' }] });
  });
});

describe('what a hand-off grants and tells the window', () => {
  it('the files and folders it takes become inputs the person gave; what it refused does not', () => {
    const policy = new PathPolicy({
      inbox: join(root, 'inbox'),
      outputRoot: () => join(root, 'out'),
      usedOutputs: () => [],
    });
    expect(() => policy.checkInput('inputs', join(cyr, 'café.png'))).toThrow('is not a file or folder you gave');
    grantHandOff(parseLink(`mediadesk://studio?folder=${encodeURIComponent(cyr)}`), (p) => policy.grant(p));
    grantHandOff(handOffFiles(['beach day.JPG', 'notes.txt'], shoot), (p) => policy.grant(p));
    expect(() => policy.checkInput('inputs', join(cyr, 'café.png'))).not.toThrow();
    expect(() => policy.checkInput('inputs', join(shoot, 'beach day.JPG'))).not.toThrow();
    expect(() => policy.checkInput('inputs', join(shoot, 'notes.txt'))).toThrow('is not a file or folder you gave');
    expect(() => policy.checkInput('inputs', join(shoot, 'clip.mp4'))).toThrow('is not a file or folder you gave');
  });

  it('the contract event studio.handOff takes only valid hand-offs', () => {
    expect(EVENTS['studio.handOff']).toBe(handOffSchema);
    expect(handOffSchema.safeParse({ screen: 'queue', batchId: 'b-1' }).success).toBe(true);
    expect(handOffSchema.safeParse({ screen: 'queue', batchId: '<img onerror=x>' }).success).toBe(false);
    expect(handOffSchema.safeParse({ screen: 'settings' }).success).toBe(false);
    const studio = { screen: 'studio', tool: 'nope', preset: null, inputs: [], refused: [] };
    expect(handOffSchema.safeParse(studio).success).toBe(false);
    expect(handOffSchema.safeParse({ ...studio, tool: 'hires' }).success).toBe(true);
    expect(handOffSchema.safeParse({ ...studio, tool: null, inputs: [{ path: '/a', kind: 'device' }] }).success).toBe(
      false,
    );
  });
});
