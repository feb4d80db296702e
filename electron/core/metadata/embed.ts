import { open, readFile, stat } from 'node:fs/promises';
import { crc32, deflateSync, inflateSync } from 'node:zlib';
import { exifForResult, orientationIn, xmpPacket } from './tiff-xmp.ts';

export { xmpPacket };

/**
 * A result's metadata written in this process for JPEG, PNG and WebP, its image data copied byte
 * for byte (never re-encoded). It takes only the common case: a source with EXIF and ICC alone
 * (no XMP, IPTC or comments) and a result with no EXIF or XMP of its own; anything else is
 * declined and goes to exiftool, which merges and converts what this does not.
 */

/** What is written: the source's EXIF (a TIFF block, IFD0 first) and ICC profile, and our XMP packet. */
export interface Embedding {
  exif: Buffer | null;
  icc: Buffer | null;
  xmp: string | null;
}

/** Metadata a file holds, as far as the fast path cares. `blocked`: something only exiftool copies or merges. */
export interface Held {
  exif: Buffer | null;
  icc: Buffer | null;
  xmp: boolean;
  blocked: boolean;
}

/** Files read whole at most; larger ones (huge upscales) go to exiftool. */
const MAX_BYTES = 64 * 1024 * 1024;

const EXIF_ID = Buffer.from('Exif\0\0', 'latin1');
const XMP_ID = Buffer.from('http://ns.adobe.com/xap/1.0/\0', 'latin1');
const XMP_EXT_ID = Buffer.from('http://ns.adobe.com/xmp/extension/\0', 'latin1');
const ICC_ID = Buffer.from('ICC_PROFILE\0', 'latin1');
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const PNG_XMP_KEY = 'XML:com.adobe.xmp';

type Format = 'jpeg' | 'png' | 'webp';

function formatOf(head: Buffer): Format | null {
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'jpeg';
  if (head.length >= 8 && head.subarray(0, 8).equals(PNG_SIGNATURE)) return 'png';
  if (head.length >= 12 && head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 12) === 'WEBP')
    return 'webp';
  return null;
}

// --- JPEG ---

interface Segment {
  marker: number;
  /** Where the segment starts (its 0xFF) and where its payload starts and ends. */
  at: number;
  data: number;
  end: number;
}

/** The segments before the scan data; null when the file is not laid out as expected. */
function jpegSegments(buf: Buffer): Segment[] | null {
  const segments: Segment[] = [];
  let pos = 2;
  for (;;) {
    if (pos + 4 > buf.length || buf[pos] !== 0xff) return null;
    const marker = buf[pos + 1];
    if (marker === 0xda) return segments;
    // Markers without a length do not occur before the scan of a well-formed file.
    if (marker === 0xd8 || marker === 0xd9 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0xff) return null;
    const end = pos + 2 + buf.readUInt16BE(pos + 2);
    if (end > buf.length) return null;
    segments.push({ marker, at: pos, data: pos + 4, end });
    pos = end;
  }
}

const startsWith = (buf: Buffer, s: Segment, id: Buffer) =>
  s.end - s.data >= id.length && buf.subarray(s.data, s.data + id.length).equals(id);

function jpegHeld(buf: Buffer, segments: Segment[], asSource: boolean): Held {
  const held: Held = { exif: null, icc: null, xmp: false, blocked: false };
  const icc: { seq: number; data: Buffer }[] = [];
  for (const s of segments) {
    if (s.marker === 0xe1 && startsWith(buf, s, EXIF_ID)) {
      if (held.exif) held.blocked = true;
      held.exif = buf.subarray(s.data + EXIF_ID.length, s.end);
    } else if (s.marker === 0xe1 && (startsWith(buf, s, XMP_ID) || startsWith(buf, s, XMP_EXT_ID))) held.xmp = true;
    else if (s.marker === 0xe2 && startsWith(buf, s, ICC_ID))
      icc.push({ seq: buf[s.data + ICC_ID.length], data: buf.subarray(s.data + ICC_ID.length + 2, s.end) });
    else if (asSource && !harmlessInSource(buf, s)) held.blocked = true;
  }
  if (icc.length) held.icc = Buffer.concat(icc.sort((a, b) => a.seq - b.seq).map((c) => c.data));
  return held;
}

/**
 * Segments of a source that hold nothing exiftool's `-all:all` copies into a result: the image's
 * own structure (tables, frame), JFIF, MPF (it describes images inside that file) and Adobe's
 * colour transform flag. Anything else (IPTC, comments, unknown APPn) is exiftool's to copy.
 */
function harmlessInSource(buf: Buffer, s: Segment): boolean {
  const m = s.marker;
  if (m < 0xe0 && m !== 0xfe) return true;
  const id = buf.toString('latin1', s.data, Math.min(s.end, s.data + 5));
  return (m === 0xe0 && (id === 'JFIF\0' || id === 'JFXX\0')) || (m === 0xe2 && id.startsWith('MPF\0')) || m === 0xee;
}

function jpegSegment(marker: number, ...parts: Buffer[]): Buffer {
  const length = parts.reduce((n, p) => n + p.length, 2);
  if (length > 0xffff) throw new RangeError('segment too long');
  const head = Buffer.from([0xff, marker, length >> 8, length & 0xff]);
  return Buffer.concat([head, ...parts]);
}

function jpegWith(buf: Buffer, segments: Segment[], add: Embedding): Buffer[] | null {
  const out: Buffer[] = [];
  if (add.exif) {
    if (add.exif.length + EXIF_ID.length + 2 > 0xffff) return null;
    out.push(jpegSegment(0xe1, EXIF_ID, add.exif));
  }
  if (add.xmp) {
    const xmp = Buffer.from(add.xmp, 'utf8');
    if (xmp.length + XMP_ID.length + 2 > 0xffff) return null;
    out.push(jpegSegment(0xe1, XMP_ID, xmp));
  }
  if (add.icc) {
    const CHUNK = 0xffff - 2 - ICC_ID.length - 2;
    const count = Math.ceil(add.icc.length / CHUNK);
    if (count > 255) return null;
    for (let i = 0; i < count; i++)
      out.push(jpegSegment(0xe2, ICC_ID, Buffer.from([i + 1, count]), add.icc.subarray(i * CHUNK, (i + 1) * CHUNK)));
  }
  // After the JFIF header, as exiftool places them; everything of the result's own stays as it was.
  const after = segments[0]?.marker === 0xe0 ? segments[0].end : 2;
  return [buf.subarray(0, after), ...out, buf.subarray(after)];
}

// --- PNG ---

interface Chunk {
  type: string;
  at: number;
  data: number;
  end: number;
}

function pngChunks(buf: Buffer): Chunk[] | null {
  const chunks: Chunk[] = [];
  let pos = 8;
  while (pos + 12 <= buf.length) {
    const length = buf.readUInt32BE(pos);
    const end = pos + 12 + length;
    if (end > buf.length) return null;
    const type = buf.toString('latin1', pos + 4, pos + 8);
    chunks.push({ type, at: pos, data: pos + 8, end: end - 4 });
    pos = end;
    if (type === 'IEND') return chunks[0]?.type === 'IHDR' ? chunks : null;
  }
  return null;
}

/** Chunks of a source that exiftool would copy and this does not: text (XMP among it), time, C2PA. */
const PNG_BLOCKS = new Set(['tEXt', 'zTXt', 'iTXt', 'tIME', 'caBX']);

function pngHeld(buf: Buffer, chunks: Chunk[], asSource: boolean): Held {
  const held: Held = { exif: null, icc: null, xmp: false, blocked: false };
  for (const c of chunks) {
    const data = buf.subarray(c.data, c.end);
    if (c.type === 'eXIf') {
      if (held.exif) held.blocked = true;
      held.exif = data;
    } else if (c.type === 'iCCP') {
      const name = data.indexOf(0);
      if (name < 0 || data[name + 1] !== 0) held.blocked = true;
      else held.icc = inflateSync(data.subarray(name + 2));
    } else if (c.type === 'tEXt' || c.type === 'zTXt' || c.type === 'iTXt') {
      const key = data.toString('latin1', 0, Math.max(0, data.indexOf(0)));
      // exiftool's older EXIF and XMP in text chunks: the result's own metadata, merged by exiftool only.
      if (key === PNG_XMP_KEY) held.xmp = true;
      else if (key.startsWith('Raw profile type')) held.blocked = true;
      if (asSource) held.blocked = true;
    } else if (asSource && PNG_BLOCKS.has(c.type)) held.blocked = true;
  }
  return held;
}

function pngChunk(type: string, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), ...parts]);
  const out = Buffer.alloc(body.length + 8);
  out.writeUInt32BE(body.length - 4, 0);
  body.copy(out, 4);
  out.writeUInt32BE(crc32(body), body.length + 4);
  return out;
}

function pngWith(buf: Buffer, chunks: Chunk[], add: Embedding): Buffer[] | null {
  const out: Buffer[] = [];
  if (add.icc) {
    // One colour statement: a result that names sRGB or its primaries already keeps it (exiftool's job to weigh).
    if (chunks.some((c) => c.type === 'sRGB' || c.type === 'cICP')) return null;
    out.push(pngChunk('iCCP', Buffer.from('ICC Profile\0\0', 'latin1'), deflateSync(add.icc)));
  }
  if (add.xmp)
    out.push(pngChunk('iTXt', Buffer.from(`${PNG_XMP_KEY}\0\0\0\0\0`, 'latin1'), Buffer.from(add.xmp, 'utf8')));
  if (add.exif) out.push(pngChunk('eXIf', add.exif));
  // Right after the header: before the palette and the image data, where readers look for them.
  const after = chunks[0].end + 4;
  return [buf.subarray(0, after), ...out, buf.subarray(after)];
}

// --- WebP ---

function webpChunks(buf: Buffer): Chunk[] | null {
  const chunks: Chunk[] = [];
  const riffEnd = 8 + buf.readUInt32LE(4);
  if (riffEnd > buf.length) return null;
  let pos = 12;
  while (pos + 8 <= riffEnd) {
    const length = buf.readUInt32LE(pos + 4);
    const end = pos + 8 + length;
    if (end > riffEnd) return null;
    chunks.push({ type: buf.toString('latin1', pos, pos + 4), at: pos, data: pos + 8, end });
    pos = end + (length & 1);
  }
  return chunks.length ? chunks : null;
}

const VP8X_ICC = 0x20;
const VP8X_ALPHA = 0x10;
const VP8X_EXIF = 0x08;
const VP8X_XMP = 0x04;
const VP8X_ANIMATION = 0x02;

function webpHeld(buf: Buffer, chunks: Chunk[]): Held {
  const held: Held = { exif: null, icc: null, xmp: false, blocked: false };
  for (const c of chunks) {
    const data = buf.subarray(c.data, c.end);
    if (c.type === 'EXIF') {
      held.exif = data.subarray(0, EXIF_ID.length).equals(EXIF_ID) ? data.subarray(EXIF_ID.length) : data;
    } else if (c.type === 'ICCP') held.icc = data;
    else if (c.type === 'XMP ') held.xmp = true;
    else if (c.type === 'VP8X' && data[0] & VP8X_ANIMATION) held.blocked = true;
  }
  return held;
}

function webpChunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(8 + data.length + (data.length & 1));
  out.write(type, 0, 'latin1');
  out.writeUInt32LE(data.length, 4);
  data.copy(out, 8);
  return out;
}

/** The canvas of a simple (lossy or lossless) WebP, from its bitstream's header. */
function webpCanvas(buf: Buffer, c: Chunk): { width: number; height: number; alpha: boolean } | null {
  if (c.type === 'VP8 ' && c.end - c.data >= 10 && buf.readUIntBE(c.data + 3, 3) === 0x9d012a)
    return {
      width: buf.readUInt16LE(c.data + 6) & 0x3fff,
      height: buf.readUInt16LE(c.data + 8) & 0x3fff,
      alpha: false,
    };
  if (c.type === 'VP8L' && c.end - c.data >= 5 && buf[c.data] === 0x2f) {
    const bits = buf.readUInt32LE(c.data + 1);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1, alpha: ((bits >>> 28) & 1) === 1 };
  }
  return null;
}

function webpWith(buf: Buffer, chunks: Chunk[], add: Embedding): Buffer[] | null {
  const first = chunks[0];
  let vp8x: Buffer;
  let rest: Chunk[];
  if (first.type === 'VP8X' && first.end - first.data >= 10) {
    vp8x = Buffer.from(buf.subarray(first.data, first.data + 10));
    rest = chunks.slice(1);
  } else {
    const canvas = webpCanvas(buf, first);
    if (!canvas || chunks.length !== 1) return null;
    vp8x = Buffer.alloc(10);
    vp8x[0] = canvas.alpha ? VP8X_ALPHA : 0;
    vp8x.writeUIntLE(canvas.width - 1, 4, 3);
    vp8x.writeUIntLE(canvas.height - 1, 7, 3);
    rest = chunks;
  }
  const hasIcc = rest.some((c) => c.type === 'ICCP');
  vp8x[0] |= (add.icc || hasIcc ? VP8X_ICC : 0) | (add.exif ? VP8X_EXIF : 0) | (add.xmp ? VP8X_XMP : 0);
  // The container's order: VP8X, ICCP, the image, then EXIF and XMP.
  const parts = [webpChunk('VP8X', vp8x)];
  if (add.icc && !hasIcc) parts.push(webpChunk('ICCP', add.icc));
  if (rest.length) parts.push(buf.subarray(rest[0].at, 8 + buf.readUInt32LE(4)));
  // The last chunk of the image may end unpadded at the end of a loose file: pad it before ours.
  const last = rest.at(-1);
  if (last && (last.end - last.data) & 1 && 8 + buf.readUInt32LE(4) === last.end) parts.push(Buffer.alloc(1));
  if (add.exif) parts.push(webpChunk('EXIF', add.exif));
  if (add.xmp) parts.push(webpChunk('XMP ', Buffer.from(add.xmp, 'utf8')));
  const size = parts.reduce((n, p) => n + p.length, 4);
  const header = Buffer.alloc(12);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(size, 4);
  header.write('WEBP', 8, 'latin1');
  return [header, ...parts];
}

/** A format's reader and writer: its layout (segments or chunks), what it holds, and it written with more. */
interface Codec<L> {
  layout(buf: Buffer): L | null;
  held(buf: Buffer, layout: L, asSource: boolean): Held;
  with(buf: Buffer, layout: L, add: Embedding): Buffer[] | null;
}
const CODECS: { [F in Format]: Codec<F extends 'jpeg' ? Segment[] : Chunk[]> } = {
  jpeg: { layout: jpegSegments, held: jpegHeld, with: jpegWith },
  png: { layout: pngChunks, held: pngHeld, with: pngWith },
  webp: { layout: webpChunks, held: webpHeld, with: webpWith },
};

// --- files ---

/** A source as read here: what it holds, and the orientation its EXIF gives it (1 without one). */
export interface SourceMetadata {
  held: Held;
  /** Whether it holds any metadata at all (copied here or by exiftool). */
  any: boolean;
  orientation: number;
}

/**
 * A JPEG, PNG or WebP source's metadata, read from its start (a JPEG's headers) or whole; null
 * when it is none of them or not laid out as this reads it (sharp and exiftool then say).
 */
export async function readSource(path: string): Promise<SourceMetadata | null> {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    if (size > MAX_BYTES) return null;
    const first = Buffer.allocUnsafe(Math.min(size, 128 * 1024));
    let buf = first.subarray(0, (await file.read(first, 0, first.length, 0)).bytesRead);
    const whole = async () => {
      const all = Buffer.allocUnsafe(size);
      return all.subarray(0, (await file.read(all, 0, size, 0)).bytesRead);
    };
    const format = formatOf(buf);
    if (!format) return null;
    const codec = CODECS[format] as Codec<Segment[] | Chunk[]>;
    // A JPEG's headers are at its start; past the first read, or another format, the file whole.
    let layout = format === 'jpeg' ? codec.layout(buf) : null;
    if (!layout && buf.length < size) buf = await whole();
    layout ??= codec.layout(buf);
    const held = layout && codec.held(buf, layout, true);
    if (!held) return null;
    const any = !!(held.exif || held.icc || held.xmp || held.blocked);
    return { held, any, orientation: held.exif ? orientationIn(held.exif) : 1 };
  } finally {
    await file.close();
  }
}

/**
 * Writes `result` into the new file `into` with the source's EXIF (its orientation set as given)
 * and ICC (only where the result has no profile of its own) and the XMP packet. Resolves false,
 * having written nothing, when this case is exiftool's.
 */
export async function embedInProcess(
  result: string,
  into: string,
  job: { source: SourceMetadata | null; orientation: number | null; xmp: string | null },
): Promise<boolean> {
  const copied = job.source?.held ?? null;
  if (copied && (copied.blocked || copied.xmp)) return false;
  if ((await stat(result)).size > MAX_BYTES) return false;
  const buf = await readFile(result);
  const format = formatOf(buf);
  if (!format) return false;
  const codec = CODECS[format] as Codec<Segment[] | Chunk[]>;
  const layout = codec.layout(buf);
  if (!layout) return false;
  const own = codec.held(buf, layout, false);
  if (own.blocked || own.exif || own.xmp) return false;
  let exif: Buffer | null = null;
  if (copied?.exif) {
    exif = exifForResult(copied.exif, job.orientation);
    if (!exif) return false;
  } else if (job.orientation !== null) return false;
  // The result's own profile says what its numbers mean; without one they are the source's.
  const add: Embedding = { exif, icc: own.icc ? null : (copied?.icc ?? null), xmp: job.xmp };
  const parts = codec.with(buf, layout, add);
  if (!parts) return false;
  const file = await open(into, 'wx');
  try {
    await file.writev(parts);
  } finally {
    await file.close();
  }
  return true;
}
