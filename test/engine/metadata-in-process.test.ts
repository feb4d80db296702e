import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { ExifTool } from 'exiftool-vendored';
import { cleanup, tmp } from './helpers.ts';
import { exifReader } from './exif-reader.ts';
import { ResultMetadata, provenanceOf } from '../../electron/core/metadata/result-metadata.ts';
import { carriesProvenance } from '../../electron/core/hot-folders/loops.ts';
import { DEFAULT_SETTINGS } from '../../shared/settings.ts';

const readTags = exifReader();
// Makes sources with what sharp cannot write (a thumbnail), and checks each file as exiftool validates it.
const maker = new ExifTool({ maxProcs: 1 });
afterAll(() => maker.end());
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(cleanup));
const folder = () => {
  const dir = tmp('embed');
  dirs.push(dir);
  return dir;
};

/** A camera JPEG as stored (60x40, EXIF 6), a P3 profile, camera, date and a thumbnail in IFD1. */
async function cameraPhoto(dir: string, extra?: (img: Sharp) => Sharp): Promise<string> {
  const path = join(dir, 'in', 'beach.jpg');
  mkdirSync(join(dir, 'in'), { recursive: true });
  const thumb = join(dir, 'thumb.jpg');
  await sharp({ create: { width: 16, height: 12, channels: 3, background: '#e44' } })
    .jpeg()
    .toFile(thumb);
  let img = sharp({ create: { width: 60, height: 40, channels: 3, background: '#7a3' } })
    .withMetadata({ orientation: 6, icc: 'p3' })
    .withExif({ IFD0: { Make: 'Canon', Model: 'EOS R5' }, IFD2: { DateTimeOriginal: '2024:05:06 07:08:09' } });
  if (extra) img = extra(img);
  await img.jpeg().toFile(path);
  await maker.write(path, {}, { writeArgs: [`-ThumbnailImage<=${thumb}`, '-overwrite_original'] });
  expect((await readTags(path))['IFD1:ThumbnailImage']).toBeDefined();
  return path;
}

type Kind = 'jpeg' | 'png' | 'webp' | 'webp-lossless' | 'webp-alpha';
const EXT: Record<Kind, string> = {
  jpeg: 'jpg',
  png: 'png',
  webp: 'webp',
  'webp-lossless': 'webp',
  'webp-alpha': 'webp',
};

/** A result as the service sends it: the source's stored shape doubled, no metadata of its own. */
async function result(dir: string, kind: Kind, own?: (img: Sharp) => Sharp): Promise<string> {
  const path = join(dir, 'out', `beach_upscaler-precision.${EXT[kind]}.part`);
  mkdirSync(join(dir, 'out'), { recursive: true });
  let img = sharp({
    create: { width: 120, height: 80, channels: kind === 'webp-alpha' ? 4 : 3, background: '#7a3a' },
  });
  if (own) img = own(img);
  if (kind === 'jpeg') img = img.jpeg();
  else if (kind === 'png') img = img.png();
  else img = img.webp({ lossless: kind === 'webp-lossless' });
  await img.toFile(path);
  return path;
}

async function writeInto(meta: ResultMetadata, source: string | null, part: string, settings = DEFAULT_SETTINGS) {
  const final = part.replace(/\.part$/, '');
  const into = `${final}.meta`;
  const provenance = provenanceOf({
    tool: 'upscaler-precision',
    toolTitle: 'Precision upscaler',
    modelPath: '/v1/ai/image-upscaler-precision-v2',
    params: { scale_factor: 2, prompt: 'a <beach> & "sea"\nat dawn' },
    taskId: 'task-1',
    inputPath: source,
  });
  return { into, done: await meta.writeInto(part, into, { final, source, provenance, settings }) };
}

/** A file's compressed image data: the JPEG scan, the PNG's IDAT chunks, the WebP's bitstream chunks. */
function imageData(path: string): Buffer {
  const b = readFileSync(path);
  const from = (s: string) => b.indexOf(Buffer.from(s, 'latin1'));
  if (b[0] === 0xff) return b.subarray(from('\xff\xda'));
  if (b[1] === 0x50) return b.subarray(from('IDAT') - 4, from('IEND') - 4);
  const start = Math.max(0, [from('ALPH'), from('VP8 '), from('VP8L')].filter((i) => i > 0).sort((x, y) => x - y)[0]);
  return b.subarray(start, 8 + b.readUInt32LE(4));
}

describe('metadata written in process, without exiftool', () => {
  it.each<Kind>(['jpeg', 'png', 'webp', 'webp-lossless', 'webp-alpha'])(
    "a camera JPEG's EXIF and profile and the provenance go into a %s result, its pixels untouched",
    async (kind) => {
      const dir = folder();
      const source = await cameraPhoto(dir);
      const part = await result(dir, kind);
      const meta = new ResultMetadata({ warn: () => undefined });
      try {
        const { into, done } = await writeInto(meta, source, part);
        expect(done).toEqual({ written: true, problem: null });
        expect([meta.writtenInProcess, meta.exiftoolCalls]).toEqual([1, 0]);
        const tags = await readTags(into);
        expect(tags['IFD0:Make']).toBe('Canon');
        expect(tags['IFD0:Model']).toBe('EOS R5');
        expect(String(tags['ExifIFD:DateTimeOriginal'])).toBe('2024-05-06T07:08:09');
        // The result's pixels are as stored: the source's turn still applies.
        expect(tags['IFD0:Orientation']).toBe(6);
        // What described the source's own pixels is not carried over.
        expect(tags['IFD1:ThumbnailImage']).toBeUndefined();
        expect(tags['ExifIFD:ExifImageWidth']).toBeUndefined();
        expect(tags['ICC_Profile:ProfileDescription']).toBe('sP3C');
        expect(tags['XMP-mediadesk:Tool']).toBe('upscaler-precision');
        expect(tags['XMP-mediadesk:TaskId']).toBe('task-1');
        expect(tags['XMP-mediadesk:SourceFile']).toBe('beach.jpg');
        expect(JSON.parse(String(tags['XMP-mediadesk:Parameters']))).toEqual({
          scale_factor: 2,
          prompt: 'a <beach> & "sea"\nat dawn',
        });
        expect(tags['XMP-xmp:CreatorTool']).toMatch(/^MediaDesk /);
        const checked = (await maker.read(into, ['-G1', '-validate', '-warning', '-a'])) as Record<string, unknown>;
        // A JPEG's two: the pixel size EXIF asks of it, left out as exiftool's own copy leaves it out.
        expect(checked['ExifTool:Validate']).toBe(kind === 'jpeg' ? '2 Warnings' : 'OK');
        // The image data byte for byte, and a file that decodes to the same size.
        expect(readFileSync(into).includes(imageData(part))).toBe(true);
        expect(
          await sharp(into)
            .raw()
            .toBuffer({ resolveWithObject: true })
            .then((r) => r.info.width),
        ).toBe(120);
        // The hot folders' loop guard knows it for a result.
        expect(await carriesProvenance(into)).toBe(true);
      } finally {
        await meta.end();
      }
    },
  );

  it('edits a big-endian EXIF with a maker note in place: the thumbnail zeroed, every offset still right', async () => {
    // IFD0 (Make, Orientation 6, ExifIFD) at 8, Make's text at 50, ExifIFD (MakerNote, pixel size) at 56,
    // the maker note at 98, IFD1 at 108 and its thumbnail at 138, as a camera lays them out.
    const t = Buffer.alloc(154);
    t.write('MM\0\x2a', 0, 'latin1');
    t.writeUInt32BE(8, 4);
    const entry = (at: number, tag: number, type: number, count: number, value: number) => {
      t.writeUInt16BE(tag, at);
      t.writeUInt16BE(type, at + 2);
      t.writeUInt32BE(count, at + 4);
      if (type === 3 && count === 1) t.writeUInt16BE(value, at + 8);
      else t.writeUInt32BE(value, at + 8);
    };
    t.writeUInt16BE(3, 8);
    entry(10, 0x10f, 2, 5, 50);
    entry(22, 0x112, 3, 1, 6);
    entry(34, 0x8769, 4, 1, 56);
    t.writeUInt32BE(108, 46);
    t.write('Acme\0', 50, 'latin1');
    t.writeUInt16BE(3, 56);
    entry(58, 0x927c, 7, 10, 98);
    entry(70, 0xa002, 4, 1, 60);
    entry(82, 0xa003, 4, 1, 40);
    t.write('ACMENOTE10', 98, 'latin1');
    t.writeUInt16BE(2, 108);
    entry(110, 0x201, 4, 1, 138);
    entry(122, 0x202, 4, 1, 16);
    t.write('THUMBTHUMBTHUMB!', 138, 'latin1');
    const dir = folder();
    mkdirSync(join(dir, 'in'), { recursive: true });
    const source = join(dir, 'in', 'acme.jpg');
    const plain = await sharp({ create: { width: 60, height: 40, channels: 3, background: '#7a3' } })
      .jpeg()
      .toBuffer();
    const app1 = Buffer.concat([Buffer.from([0xff, 0xe1, 0, 0]), Buffer.from('Exif\0\0', 'latin1'), t]);
    app1.writeUInt16BE(app1.length - 2, 2);
    writeFileSync(source, Buffer.concat([plain.subarray(0, 2), app1, plain.subarray(2)]));
    const part = await result(dir, 'png');
    const meta = new ResultMetadata({ warn: () => undefined });
    try {
      const { into, done } = await writeInto(meta, source, part);
      expect(done).toEqual({ written: true, problem: null });
      expect(meta.writtenInProcess).toBe(1);
      const tags = await readTags(into);
      expect(tags['IFD0:Make']).toBe('Acme');
      expect(tags['IFD0:Orientation']).toBe(6);
      expect(tags['ExifIFD:ExifImageWidth']).toBeUndefined();
      expect(tags['IFD1:ThumbnailImage']).toBeUndefined();
      const out = readFileSync(into);
      expect(out.includes(Buffer.from('ACMENOTE10'))).toBe(true);
      expect(out.includes(Buffer.from('THUMB'))).toBe(false);
    } finally {
      await meta.end();
    }
  });

  it('a result with a profile of its own keeps it; an upright source leaves no orientation', async () => {
    const dir = folder();
    const source = join(dir, 'in', 'flat.jpg');
    mkdirSync(join(dir, 'in'), { recursive: true });
    await sharp({ create: { width: 60, height: 40, channels: 3, background: '#7a3' } })
      .withMetadata({ icc: 'p3' })
      .withExif({ IFD0: { Make: 'Nikon' } })
      .jpeg()
      .toFile(source);
    const part = await result(dir, 'png', (img) =>
      img.withIccProfile('cmyk').toColourspace('srgb').withIccProfile('srgb'),
    );
    const own = (await readTags(part))['ICC_Profile:ProfileDescription'];
    expect(own).toBeDefined();
    expect(own).not.toBe('sP3C');
    const meta = new ResultMetadata({ warn: () => undefined });
    try {
      const { into, done } = await writeInto(meta, source, part);
      expect(done.written).toBe(true);
      expect(meta.writtenInProcess).toBe(1);
      const tags = await readTags(into);
      expect(tags['ICC_Profile:ProfileDescription']).toBe(own);
      expect(tags['IFD0:Make']).toBe('Nikon');
      expect(tags['IFD0:Orientation']).toBeUndefined();
    } finally {
      await meta.end();
    }
  });

  it('leaves to exiftool a source with XMP, and a result with EXIF of its own, and both come out whole', async () => {
    const dir = folder();
    const source = await cameraPhoto(dir, (img) =>
      img.withXmp(
        `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">` +
          `<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/">` +
          `<dc:title><rdf:Alt><rdf:li xml:lang="x-default">Beach</rdf:li></rdf:Alt></dc:title>` +
          `</rdf:Description></rdf:RDF></x:xmpmeta>`,
      ),
    );
    const withXmp = await result(dir, 'png');
    const ownExif = await result(folder(), 'jpeg', (img) => img.withExif({ IFD0: { Software: 'Service 1.0' } }));
    const meta = new ResultMetadata({ warn: () => undefined });
    try {
      const a = await writeInto(meta, source, withXmp);
      const b = await writeInto(meta, join(dir, 'in', 'beach.jpg'), ownExif, { ...DEFAULT_SETTINGS });
      expect([a.done.written, b.done.written]).toEqual([true, true]);
      expect(meta.writtenInProcess).toBe(0);
      expect(meta.exiftoolCalls).toBeGreaterThan(0);
      const ta = await readTags(a.into);
      expect(ta['XMP-dc:Title']).toBe('Beach');
      expect(ta['XMP-mediadesk:TaskId']).toBe('task-1');
      const tb = await readTags(b.into);
      expect(tb['IFD0:Software']).toBe('Service 1.0');
      expect(tb['IFD0:Make']).toBe('Canon');
    } finally {
      await meta.end();
    }
  });

  it('writes provenance alone into a result when the source is not to be copied, and nothing else', async () => {
    const dir = folder();
    const source = await cameraPhoto(dir);
    const part = await result(dir, 'jpeg');
    const meta = new ResultMetadata({ warn: () => undefined });
    try {
      const { into, done } = await writeInto(meta, source, part, { ...DEFAULT_SETTINGS, keepMetadata: false });
      expect(done.written).toBe(true);
      expect(meta.writtenInProcess).toBe(1);
      const tags = await readTags(into);
      expect(tags['IFD0:Make']).toBeUndefined();
      expect(tags['ICC_Profile:ProfileDescription']).toBeUndefined();
      expect(tags['XMP-mediadesk:TaskId']).toBe('task-1');
      expect(existsSync(part)).toBe(true);
    } finally {
      await meta.end();
    }
  });
});
