import { chmodSync, linkSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scanInputs } from '../../electron/core/batch/scan.ts';
import { resultNameReader } from '../../electron/core/downloads/naming.ts';
import { TOOLS } from '../../shared/catalogue/index.ts';
import { cleanup, tmp } from './helpers.ts';

/** The folder walk of a batch, on folders as users have them: links, loops, odd names. */
const dirs: string[] = [];
afterAll(() => dirs.forEach(cleanup));

function folder(files: string[]): string {
  const dir = tmp('scan');
  dirs.push(dir);
  for (const f of files) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    writeFileSync(join(dir, f), f);
  }
  return dir;
}
const images = (ext: string) => ['png', 'jpg'].includes(ext);
const rel = (root: string, list: { path: string }[]) => list.map((x) => relative(root, x.path));

describe('walking a dropped folder', () => {
  it('follows links to files and folders, lists each file once under its real name, and survives a loop', async () => {
    const root = folder(['a.png', 'sub/b.png', 'elsewhere/c.png']);
    const shoot = join(root, 'shoot');
    mkdirSync(shoot);
    symlinkSync(join(root, 'a.png'), join(shoot, '0-link-to-a.png'));
    symlinkSync(join(root, 'sub'), join(shoot, 'linked-sub'));
    symlinkSync(join(root, 'elsewhere'), join(shoot, 'elsewhere-link'));
    writeFileSync(join(shoot, 'z.png'), 'z');
    linkSync(join(shoot, 'z.png'), join(shoot, 'hard-z.png'));
    symlinkSync(shoot, join(shoot, 'sub-loop'));
    symlinkSync(join(root, 'missing.png'), join(shoot, 'dangling.png'));

    const r = await scanInputs([shoot, join(root, 'elsewhere')], images);
    // The folder a link names is walked as a subfolder of the drop (it mirrors there in the output).
    expect(r.inputs.map((i) => [relative(root, i.path), i.relDir])).toEqual([
      ['shoot/hard-z.png', ''],
      ['shoot/0-link-to-a.png', ''],
      ['shoot/elsewhere-link/c.png', 'elsewhere-link'],
      ['shoot/linked-sub/b.png', 'linked-sub'],
    ]);
    // A second name of a file already listed would be a second paid task for the same picture.
    // A link back into the drop is a loop, named; the dropped `elsewhere` folder was walked through its link already.
    expect(r.duplicates.map((d) => [relative(root, d.path), d.reason])).toEqual([
      ['shoot/sub-loop', `is a link back to ${shoot}, a folder it is inside (a loop): not walked again`],
      ['elsewhere', `is the same folder as ${join(shoot, 'elsewhere-link')}, walked already`],
      ['shoot/z.png', `is the same file as ${join(shoot, 'hard-z.png')}`],
    ]);
    expect(rel(root, r.rejected)).toEqual(['shoot/dangling.png']);
    expect(r.rejected[0].reason).toBe('is a broken link (it no longer exists)');
  });

  it('folder links that loop (self -> ., sub/up -> ..) are each named, not skipped in silence', async () => {
    const root = folder(['shoot/a.png', 'shoot/sub/b.png']);
    const shoot = join(root, 'shoot');
    symlinkSync('.', join(shoot, 'self'));
    symlinkSync('..', join(shoot, 'sub', 'up'));
    const r = await scanInputs([shoot], images);
    expect(rel(root, r.inputs)).toEqual(['shoot/a.png', 'shoot/sub/b.png']);
    expect(r.duplicates.map((d) => [relative(root, d.path), d.reason])).toEqual([
      ['shoot/sub/up', `is a link back to ${shoot}, a folder it is inside (a loop): not walked again`],
      ['shoot/self', `is a link back to ${shoot}, a folder it is inside (a loop): not walked again`],
    ]);
  });

  it('a loop of links (one naming itself, two naming each other) ends the walk of that name: each is reported by name, as a loop', async () => {
    const root = folder(['shoot/a.png']);
    const shoot = join(root, 'shoot');
    symlinkSync(join(shoot, 'self.png'), join(shoot, 'self.png'));
    symlinkSync(join(shoot, 'pong.png'), join(shoot, 'ping.png'));
    symlinkSync(join(shoot, 'ping.png'), join(shoot, 'pong.png'));
    symlinkSync(join(root, 'gone'), join(shoot, 'gone-folder'));
    const r = await scanInputs([shoot, join(shoot, 'self.png')], images);
    expect(rel(root, r.inputs)).toEqual(['shoot/a.png']);
    const loop = 'it is a link that leads back to itself';
    expect(r.rejected.map((x) => [relative(root, x.path), x.reason])).toEqual([
      ['shoot/gone-folder', 'is a broken link (it no longer exists)'],
      ['shoot/ping.png', `is a broken link (${loop})`],
      ['shoot/pong.png', `is a broken link (${loop})`],
      ['shoot/self.png', `is a broken link (${loop})`],
      // Chosen itself (typed or dropped by path), not met in a folder.
      ['shoot/self.png', `cannot be read (${loop})`],
    ]);
  });

  it('prefers a file’s real name to a link met in the same folder', async () => {
    const root = folder(['photo.png']);
    symlinkSync(join(root, 'photo.png'), join(root, 'a-shortcut.png'));
    const r = await scanInputs([root], images);
    expect(rel(root, r.inputs)).toEqual(['photo.png']);
    expect(r.duplicates).toEqual([
      { path: join(root, 'a-shortcut.png'), reason: `is the same file as ${join(root, 'photo.png')}` },
    ]);
  });

  it('a link into the output folder is not read back as input', async () => {
    const root = folder(['in/a.png', 'out/a_upscaler-precision.png']);
    symlinkSync(join(root, 'out'), join(root, 'in', 'results'));
    const r = await scanInputs([join(root, 'in')], images, [join(root, 'out')]);
    expect(rel(root, r.inputs)).toEqual(['in/a.png']);
    expect(r.rejected).toEqual([]);
  });

  it('names a file without an extension as such, even in a folder with a dot in its name', async () => {
    const root = folder(['v1.2 shoot/README', 'v1.2 shoot/.profile', 'v1.2 shoot/raw.CR2']);
    const r = await scanInputs([root, join(root, 'v1.2 shoot'), `${join(root, 'v1.2 shoot')}/`], images);
    expect(r.rejected.map((x) => [relative(root, x.path), x.reason])).toEqual([
      ['v1.2 shoot/raw.CR2', 'this tool does not take .cr2 files'],
      ['v1.2 shoot/README', 'has no file extension; this tool takes image files such as .png or .jpg'],
    ]);
  });

  it('passes over what Finder, Explorer, a NAS and zip tools leave beside the photos', async () => {
    // A Synology keeps a JPEG thumbnail of every photo in @eaDir: walked, each was a paid job.
    const root = folder([
      'IMG_1.jpg',
      '@eaDir/IMG_1.jpg/SYNOPHOTO_THUMB_XL.jpg',
      '#recycle/old.jpg',
      '__MACOSX/._IMG_1.jpg',
      '._IMG_1.jpg',
      '.DS_Store',
      'Thumbs.db',
      'sub/desktop.ini',
      'sub/IMG_2.png',
    ]);
    const r = await scanInputs([root], images);
    expect(rel(root, r.inputs)).toEqual(['IMG_1.jpg', 'sub/IMG_2.png']);
    expect([r.rejected, r.duplicates]).toEqual([[], []]);
  });

  it('a missing item dropped twice is reported once', async () => {
    const root = folder([]);
    const r = await scanInputs([join(root, 'gone'), `${join(root, 'gone')}/`], images);
    expect(r.rejected).toEqual([{ path: join(root, 'gone'), reason: 'does not exist' }]);
  });

  // Root reads any file whatever its mode, so this can only be shown as another user.
  it.skipIf(process.getuid?.() === 0)(
    'an unreadable subfolder is reported and the rest of the walk goes on',
    async () => {
      const root = folder(['a.png', 'locked/b.png', 'z.png']);
      chmodSync(join(root, 'locked'), 0o000);
      try {
        const r = await scanInputs([root], images);
        expect(rel(root, r.inputs)).toEqual(['a.png', 'z.png']);
        expect(r.rejected).toEqual([
          { path: join(root, 'locked'), reason: 'this folder cannot be read (permission denied)' },
        ]);
      } finally {
        chmodSync(join(root, 'locked'), 0o755);
      }
    },
  );

  it('reads result names back as the naming template wrote them, and nothing a template cannot tell from a photo', () => {
    const read = resultNameReader(
      ['{date} {name} by {tool}.{ext}', '{name}_{tool}.{ext}', '{name}.{ext}', '{tool}-{name}'],
      TOOLS,
    );
    expect(
      [
        '2026-11-22 IMG 1 by upscaler-precision.png',
        'a_upscaler-precision_2-3.png',
        'a_image-to-prompt.txt',
        'x_y_skin-faithful.jpg',
      ].map(read),
    ).toEqual([
      { name: 'IMG 1', tool: 'upscaler-precision' },
      { name: 'a', tool: 'upscaler-precision' },
      { name: 'a', tool: 'image-to-prompt' },
      { name: 'x_y', tool: 'skin-faithful' },
    ]);
    // Not a tool's, an extension its results never get, or a template that names a result as its photo.
    expect(
      ['a_retouched.png', 'a_image-to-prompt.png', 'a_upscaler-precision.txt', 'a.png', 'upscaler-precision-a'].map(
        read,
      ),
    ).toEqual([null, null, null, null, null]);
  });

  it('a file named as the result of a photo in the same chosen folder is reported, not taken; chosen itself, or without its photo, it is taken', async () => {
    const root = folder([
      'shoot/a.png',
      'shoot/a_upscaler-precision.png',
      'shoot/out/sub/b_upscaler-precision-2.png',
      'shoot/sub/b.jpg',
      'shoot/c_upscaler-precision.png',
      'results/a_upscaler-precision.png',
    ]);
    const read = resultNameReader(['{name}_{tool}.{ext}'], TOOLS);
    const r = await scanInputs(
      [join(root, 'shoot'), join(root, 'results'), join(root, 'shoot', 'a_upscaler-precision.png')],
      images,
      [],
      new Map(),
      read,
    );
    expect(rel(root, r.inputs).sort()).toEqual([
      'results/a_upscaler-precision.png',
      'shoot/a.png',
      'shoot/a_upscaler-precision.png',
      'shoot/c_upscaler-precision.png',
      'shoot/sub/b.jpg',
    ]);
    expect(r.results).toEqual([
      {
        path: join(root, 'shoot', 'out', 'sub', 'b_upscaler-precision-2.png'),
        reason: `is named as the upscaler-precision result of ${join(root, 'shoot', 'sub', 'b.jpg')}; choose it itself to use it as an input`,
      },
    ]);
  });

  it("a result whose name macOS lists in the other Unicode form than its photo's (NFD beside NFC) is still known as its result", async () => {
    const photo = 'Caf\u00e9 Ølfabrik.jpg';
    const result = 'Cafe\u0301 Ølfabrik_upscaler-precision.png';
    const root = folder([join('shoot', photo), join('shoot', result)]);
    const r = await scanInputs(
      [join(root, 'shoot')],
      images,
      [],
      new Map(),
      resultNameReader(['{name}_{tool}.{ext}'], TOOLS),
    );
    expect(rel(root, r.inputs)).toEqual([join('shoot', photo)]);
    expect(r.results).toEqual([
      {
        path: join(root, 'shoot', result),
        reason: `is named as the upscaler-precision result of ${join(root, 'shoot', photo)}; choose it itself to use it as an input`,
      },
    ]);
  });
});
