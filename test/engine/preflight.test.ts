import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { getTool } from '../../shared/catalogue/index.ts';
import { checkInput, inputCheckOf } from '../../electron/core/batch/preflight.ts';

const dir = mkdtempSync(join(tmpdir(), 'md-pre-'));
const edit = inputCheckOf(getTool('image50-edit'))!;

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
    writeFileSync(webpAsPng, await sharp({ create: { width: 300, height: 300, channels: 3, background: '#123' } }).webp().toBuffer());
    expect(await checkInput(edit, webpAsPng)).toBe('is WEBP; this tool takes JPEG, PNG');
    const junk = join(dir, 'junk.png');
    writeFileSync(junk, 'not an image at all');
    expect(await checkInput(edit, junk)).toBe('is not a readable image');
  });
});
