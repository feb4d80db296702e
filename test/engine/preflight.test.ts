import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { getTool } from '../../shared/catalogue/index.ts';
import { checkBytes, checkInput, inputCheckOf, libvipsDetail } from '../../electron/core/batch/preflight.ts';

const dir = mkdtempSync(join(tmpdir(), 'md-pre-'));
const edit = inputCheckOf(getTool('image50-edit'))!;
const camera = inputCheckOf(getTool('change-camera'))!;

/** A camera-style JPEG: its frame header (the dimensions) sits behind a large EXIF block. */
async function jpegWithBigExif(name: string, w: number, h: number): Promise<string> {
  const p = join(dir, name);
  const buf = await sharp({ create: { width: w, height: h, channels: 3, background: '#963' } })
    .jpeg()
    .withExif({ IFD0: { ImageDescription: 'x'.repeat(60_000) } })
    .toBuffer();
  writeFileSync(p, buf);
  return p;
}

describe('pre-flight input check (image header)', () => {
  it('reads dimensions behind a large EXIF block, on both sides of the minimum size', async () => {
    const ok = await jpegWithBigExif('big-exif-ok.jpg', 300, 280);
    const small = await jpegWithBigExif('big-exif-small.jpg', 255, 300);
    expect(statSync(ok).size).toBeGreaterThan(16 * 1024);
    expect(await checkInput(edit, ok)).toBeNull();
    expect(await checkInput(edit, small)).toBe('is 255x300; this tool needs at least 256x256');
  });

  it('judges the real format, not the extension', async () => {
    const webpAsPng = join(dir, 'really-webp.png');
    writeFileSync(
      webpAsPng,
      await sharp({ create: { width: 300, height: 300, channels: 3, background: '#123' } })
        .webp()
        .toBuffer(),
    );
    expect(await checkInput(edit, webpAsPng)).toBe('is WEBP; this tool takes JPEG, PNG');
    const junk = join(dir, 'junk.png');
    writeFileSync(junk, 'not an image at all');
    expect(await checkInput(edit, junk)).toBe('is not a readable image');
  });

  it('a zero-byte file (a copy that failed at once, a cloud placeholder) is refused as empty, by name, before anything is paid', async () => {
    writeFileSync(join(dir, 'IMG_0042.jpg'), '');
    expect(await checkInput(edit, join(dir, 'IMG_0042.jpg'))).toBe('is empty');
    expect(await checkBytes(edit, Buffer.alloc(0))).toBe('is empty');
  });

  it('takes the unusual but valid pictures of a real shoot: CMYK, 16-bit, grey with alpha, very large, a JPEG named .png', async () => {
    const base = (w = 300, h = 300) => sharp({ create: { width: w, height: h, channels: 3, background: '#6a8' } });
    const files: Array<[string, Promise<Buffer>]> = [
      ['print-cmyk.jpg', base().toColourspace('cmyk').jpeg().toBuffer()],
      ['scan-16bit.png', base().toColourspace('rgb16').png().toBuffer()],
      [
        'logo-grey-alpha.png',
        sharp({ create: { width: 300, height: 300, channels: 4, background: { r: 90, g: 90, b: 90, alpha: 0.5 } } })
          .toColourspace('b-w')
          .png()
          .toBuffer(),
      ],
      ['pano-12000x8000.jpg', base(12000, 8000).jpeg({ quality: 40 }).toBuffer()],
      ['saved-from-web.png', base().jpeg().toBuffer()],
    ];
    for (const [name, bytes] of files) {
      writeFileSync(join(dir, name), await bytes);
      expect(await checkInput(edit, join(dir, name)), name).toBeNull();
    }
  });
});

/** A photo-like picture (noise compresses badly, so the file is large like a real one). */
const photo = (w: number, h: number) =>
  sharp({
    create: { width: w, height: h, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 40 } },
  });

describe('pre-flight input check (whole file)', () => {
  it('a picture cut short (an interrupted copy, a sync still writing) is refused, whatever its format', async () => {
    const cases: [string, Buffer][] = [
      ['cut.jpg', await photo(900, 600).jpeg().toBuffer()],
      ['cut.png', await photo(400, 300).png().toBuffer()],
      ['cut.webp', await photo(600, 400).webp().toBuffer()],
    ];
    for (const [name, whole] of cases) {
      const p = join(dir, name);
      writeFileSync(p, whole);
      expect(await checkInput(camera, p)).toBeNull();
      // Half of it: the header, and so the format and dimensions, are intact.
      writeFileSync(p, whole.subarray(0, Math.floor(whole.length / 2)));
      expect(await checkInput(camera, p)).toMatch(
        /^is truncated or damaged: the image data ends early \(.+\); was it still being copied\?$/,
      );
      expect(await checkBytes(camera, whole.subarray(0, Math.floor(whole.length / 2)))).toMatch(
        /^is truncated or damaged/,
      );
      expect(await checkBytes(camera, whole)).toBeNull();
    }
    // Only the PNG signature and header chunk: dimensions, and nothing else.
    const stub = join(dir, 'stub.png');
    writeFileSync(stub, (await photo(300, 300).png().toBuffer()).subarray(0, 33));
    expect(await checkInput(camera, stub)).toMatch(/^is truncated or damaged/);
  });

  it('a reason names only its own file: libvips messages about another file, or "Unknown error", are left out', async () => {
    expect(libvipsDetail('VipsForeignLoad: "/x/text.png" is not a known file format\n', '/in/cut.png')).toBeNull();
    expect(libvipsDetail('Unknown error', '/in/cut.png')).toBeNull();
    expect(libvipsDetail('pngload: /in/cut.png: libspng read error\n', '/in/cut.png')).toBe(
      'pngload: /in/cut.png: libspng read error',
    );
    expect(libvipsDetail('VipsJpeg: Premature end of input file', null)).toBe('VipsJpeg: Premature end of input file');
    expect(libvipsDetail('"other.jpg" failed', null)).toBeNull();
    // Many damaged files and a text file named .png checked at once, as a batch check does.
    const whole = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#486' } })
      .png()
      .toBuffer();
    const names = Array.from({ length: 16 }, (_, i) => `cut-${i}.png`);
    for (const n of names) writeFileSync(join(dir, n), whole.subarray(0, Math.floor(whole.length / 2)));
    writeFileSync(join(dir, 'text.png'), 'this is a note, not a picture');
    const reasons = await Promise.all([...names, 'text.png'].map((n) => checkInput(camera, join(dir, n))));
    for (const [i, n] of names.entries()) {
      expect(reasons[i]).toMatch(/^is truncated or damaged/);
      const mentioned = reasons[i]!.match(/[\w.-]+\.png/g) ?? [];
      expect(
        mentioned.every((m) => m === n),
        `${n}: ${reasons[i]}`,
      ).toBe(true);
    }
  });

  it('data after a whole picture (motion photos, editor trailers) is not mistaken for damage', async () => {
    const motion = join(dir, 'motion.jpg');
    writeFileSync(motion, Buffer.concat([await photo(600, 400).jpeg().toBuffer(), Buffer.alloc(200_000, 7)]));
    expect(await checkInput(camera, motion)).toBeNull();
    const trailer = join(dir, 'trailer.png');
    writeFileSync(trailer, Buffer.concat([await photo(300, 300).png().toBuffer(), Buffer.alloc(100_000, 1)]));
    expect(await checkInput(camera, trailer)).toBeNull();
  });
});
