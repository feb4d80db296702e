/**
 * Measures a reference (path, file:// or HTTPS URL, inline data) by content without reading all of
 * it: MP4/MOV up to the moov box (mp4box, skipping mdat), images by sharp from the header, other video
 * containers by container and size only, so the shared rules can reject them precisely.
 */
import type { Movie } from 'mp4box';
import { fileURLToPath } from 'node:url';
import type { Metadata } from 'sharp';
import type { Probe } from '../../shared/validation/references.ts';
import { isInline } from '../../shared/catalogue/index.ts';
import { HEAD_BYTES, ProbeError, isUrl, openSource, type ByteSource } from './source.ts';
import { loadSharp } from './sharp.ts';

export { ProbeError } from './source.ts';

/** A moov box of a short clip is kilobytes; this bounds the work on hostile or odd files. */
const MAX_HEADER_BYTES = 16 * 1024 * 1024;
const NEXT_CHUNK = 256 * 1024;
/** JPEG headers can sit behind large EXIF/ICC segments. */
const MAX_IMAGE_HEAD = 4 * 1024 * 1024;

let mp4box: Promise<typeof import('mp4box')> | undefined;
/** Loaded with the first video probed, not with the engine: a command that reads the queue never parses one. */
const loadMp4box = () =>
  (mp4box ??= import('mp4box').then((m) => {
    // QuickTime files carry user-data atoms (e.g. ffmpeg's '©swr') that mp4box logs as errors on stderr
    // while parsing them fine. Drop exactly that message; everything else still reaches its handler.
    const { Log } = m;
    const logError = Log.error.bind(Log);
    Log.error = (module: string, msg?: string, isofile?: Parameters<typeof Log.error>[2]) => {
      if (module === 'BoxParser' && typeof msg === 'string' && msg.startsWith('Invalid box type')) return;
      logError(module, msg, isofile);
    };
    return m;
  }));

type Sniffed = { kind: 'iso' } | { kind: 'image' } | { kind: 'otherVideo'; container: string } | { kind: 'unknown' };

const ascii = (b: Uint8Array, from: number, to: number) => String.fromCharCode(...b.subarray(from, to));
const ISO_TOP_BOXES = new Set(['ftyp', 'moov', 'mdat', 'wide', 'free', 'skip', 'pnot', 'uuid']);
const ISO_IMAGE_BRANDS = new Set(['avif', 'avis', 'heic', 'heix', 'mif1', 'msf1']);

function sniff(b: Uint8Array): Sniffed {
  if (b.length >= 12 && ISO_TOP_BOXES.has(ascii(b, 4, 8))) {
    if (ascii(b, 4, 8) === 'ftyp' && ISO_IMAGE_BRANDS.has(ascii(b, 8, 12))) return { kind: 'image' };
    return { kind: 'iso' };
  }
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return { kind: 'image' };
  if (b[0] === 0x89 && ascii(b, 1, 4) === 'PNG') return { kind: 'image' };
  if (ascii(b, 0, 3) === 'GIF' || ascii(b, 0, 2) === 'II' || ascii(b, 0, 2) === 'MM') return { kind: 'image' };
  if (ascii(b, 0, 4) === 'RIFF') {
    const t = ascii(b, 8, 12);
    if (t === 'WEBP') return { kind: 'image' };
    if (t === 'AVI ') return { kind: 'otherVideo', container: 'avi' };
  }
  if (b[0] === 0x1a && b[1] === 0x45 && b[2] === 0xdf && b[3] === 0xa3)
    return { kind: 'otherVideo', container: 'webm' };
  if (b[0] === 0x47 && b.length > 188 && b[188] === 0x47) return { kind: 'otherVideo', container: 'mpegts' };
  if (ascii(b, 0, 3) === 'FLV') return { kind: 'otherVideo', container: 'flv' };
  return { kind: 'unknown' };
}

export async function probeSource(source: string, name = source): Promise<Probe> {
  if (/^upl_vid_/.test(source))
    throw new ProbeError(
      'unsupported',
      name,
      `${name}: an uploaded-video id cannot be probed here; probe the file before uploading it`,
    );
  const inline = isInline(source);
  if (!inline && /^data:/i.test(source))
    throw new ProbeError(
      'unsupported',
      name,
      `${name}: a data: URI this app cannot read (it reads data:<type>;base64,...)`,
    );
  const src = await openSource(source);
  // libvips reads only the header of a local file; other sources it reads from the bytes read here.
  let file: string | undefined;
  if (!inline && !isUrl(source)) file = source.toLowerCase().startsWith('file://') ? fileURLToPath(source) : source;
  try {
    if (src.size === 0)
      throw new ProbeError('truncated', name, `${name}: ${inline ? 'the data is empty' : 'the file is empty'}`);
    const head = await src.read(0, HEAD_BYTES);
    const kind = sniff(head);
    switch (kind.kind) {
      case 'iso':
        return await probeIso(name, src, head);
      case 'image':
        return await probeImage(name, src, head, file);
      case 'otherVideo':
        return {
          source: name,
          kind: 'video',
          container: kind.container,
          durationSec: null,
          fps: null,
          width: null,
          height: null,
          bytes: src.size,
        };
      default:
        throw new ProbeError(
          'unsupported',
          name,
          `${name}: not a video or image this app can read (neither MP4/MOV nor JPG/PNG/WebP)`,
        );
    }
  } finally {
    await src.close();
  }
}

async function probeIso(source: string, src: ByteSource, head: Uint8Array): Promise<Probe> {
  const { createFile, MP4BoxBuffer } = await loadMp4box();
  const file = createFile(false);
  let info: Movie | null = null;
  let parseError: string | null = null;
  file.onReady = (i) => {
    info = i;
  };
  file.onError = (module, message) => {
    parseError ??= `${module}: ${message}`;
  };
  let pos = 0;
  let chunk = head;
  let read = 0;
  while (!info) {
    read += chunk.length;
    const ab = chunk.buffer.slice(chunk.byteOffset, chunk.byteOffset + chunk.length) as ArrayBuffer;
    const next = file.appendBuffer(MP4BoxBuffer.fromArrayBuffer(ab, pos), pos + chunk.length >= src.size);
    if (info || parseError) break;
    pos = typeof next === 'number' && next > pos ? next : pos + chunk.length;
    if (pos >= src.size) break;
    if (read > MAX_HEADER_BYTES)
      throw new ProbeError(
        'invalid',
        source,
        `${source}: no complete moov box within ${MAX_HEADER_BYTES} bytes of header data`,
      );
    chunk = await src.read(pos, NEXT_CHUNK);
    if (chunk.length === 0) break;
  }
  const movie = info as Movie | null;
  if (!movie) {
    const why = parseError ? ` (${parseError})` : '';
    throw new ProbeError(
      'truncated',
      source,
      `${source}: truncated or damaged MP4/MOV: the moov box (the index) was not found or is incomplete${why}`,
    );
  }
  // mp4box lists as video only the sample formats it knows; a QuickTime video track in ProRes or
  // Motion JPEG (what editors export) is a video track all the same, by its handler.
  const vt = movie.videoTracks[0] ?? movie.tracks.find((_, i) => file.moov?.traks[i]?.mdia?.hdlr?.handler === 'vide');
  if (!vt) throw new ProbeError('unsupported', source, `${source}: the MP4/MOV has no video track`);
  const container = movie.brands[0] === 'qt  ' || !file.ftyp ? 'mov' : 'mp4';
  if (!movie.isFragmented) {
    // With the index first, a copy cut short still has a whole moov: only the samples it points
    // past the end of the file show it, and the service would fail on it after the task is paid for.
    const past = mediaEnd(file.moov?.traks ?? []) - src.size;
    if (past > 0)
      throw new ProbeError(
        'truncated',
        source,
        `${source}: truncated ${container.toUpperCase()}: its media data ends ${past} bytes past the end of the file (the copy was cut short; copy or export it again)`,
      );
  }
  let trackSec = vt.timescale > 0 ? vt.samples_duration / vt.timescale : 0;
  let samples = vt.nb_samples;
  const movieSec = movie.timescale > 0 ? movie.duration / movie.timescale : 0;
  const mehd = file.moov?.mvex?.mehd;
  // mehd's duration is in the movie's timescale.
  const fragSec = mehd && movie.timescale > 0 ? Number(mehd.fragment_duration) / movie.timescale : 0;
  if (movie.isFragmented) {
    // The samples are in the fragments (moof boxes after the moov), which mp4box has read only in
    // part; without mehd nothing else states the length, so the fragments are walked and summed.
    const trex = file.moov?.mvex?.trexs?.find((t) => t.track_id === vt.id);
    const sum = await sumFragments(source, src, vt.id, trex?.default_sample_duration ?? 0);
    trackSec = vt.timescale > 0 ? sum.ticks / vt.timescale : 0;
    samples = sum.samples;
  }
  // mvhd is what players show; fragmented files carry it in mehd, else only per-track samples.
  const durationSec = movieSec || fragSec || trackSec || null;
  const fps = trackSec > 0 && samples > 0 ? samples / trackSec : null;
  return {
    source,
    kind: 'video',
    container,
    durationSec,
    fps,
    width: vt.video?.width || vt.track_width || null,
    height: vt.video?.height || vt.track_height || null,
    bytes: src.size,
    format: vt.codec,
  };
}

/** Where the last sample of any track ends, by the sample tables mp4box built from the moov. */
function mediaEnd(traks: readonly { samples?: readonly { offset: number; size: number }[] }[]): number {
  let end = 0;
  for (const t of traks) for (const s of t.samples ?? []) end = Math.max(end, s.offset + s.size);
  return end;
}

/** Bytes of box headers and moof boxes a fragment walk may read; a moof is a few KB. */
const MAX_FRAGMENT_WALK = 8 * 1024 * 1024;
const WALK_WINDOW = 32 * 1024;

/**
 * Sums the sample durations of one track over every fragment of a fragmented MP4, walking the
 * top-level boxes by their sizes: each moof is read (its tfhd and trun give the durations) and the
 * media data between them skipped. A box that runs past the end of the file is a truncated file.
 */
async function sumFragments(
  source: string,
  src: ByteSource,
  trackId: number,
  trexDuration: number,
): Promise<{ ticks: number; samples: number }> {
  let window: Uint8Array = new Uint8Array(0);
  let windowAt = 0;
  let read = 0;
  const bytes = async (at: number, len: number): Promise<DataView> => {
    if (at < windowAt || at + len > windowAt + window.length) {
      read += Math.max(len, WALK_WINDOW);
      if (read > MAX_FRAGMENT_WALK)
        throw new ProbeError(
          'invalid',
          source,
          `${source}: a fragmented MP4 with more fragments than this app measures; its duration is unknown`,
        );
      window = await src.read(at, Math.max(len, WALK_WINDOW));
      windowAt = at;
    }
    const off = at - windowAt;
    return new DataView(window.buffer, window.byteOffset + off, Math.min(len, window.length - off));
  };
  let ticks = 0;
  let samples = 0;
  for (let pos = 0; pos + 8 <= src.size;) {
    const h = await bytes(pos, 16);
    let size = h.getUint32(0);
    const type = String.fromCharCode(h.getUint8(4), h.getUint8(5), h.getUint8(6), h.getUint8(7));
    if (size === 1 && h.byteLength >= 16) size = Number(h.getBigUint64(8));
    else if (size === 0) size = src.size - pos;
    if (size < 8)
      throw new ProbeError('invalid', source, `${source}: damaged MP4: a box of ${size} bytes at byte ${pos}`);
    if (pos + size > src.size)
      throw new ProbeError(
        'truncated',
        source,
        `${source}: truncated MP4: its ${type} box ends ${pos + size - src.size} bytes past the end of the file`,
      );
    if (type === 'moof') {
      const moof = await bytes(pos, size);
      if (moof.byteLength < size)
        throw new ProbeError('truncated', source, `${source}: truncated MP4: a fragment header is cut short`);
      const t = trafTicks(moof, 8, size, trackId, trexDuration);
      ticks += t.ticks;
      samples += t.samples;
    }
    pos += size;
  }
  return { ticks, samples };
}

/** Children of a box: [type, start, size] within `v` from `from` to `to`. */
function* children(v: DataView, from: number, to: number): Generator<[string, number, number]> {
  for (let p = from; p + 8 <= to;) {
    const size = v.getUint32(p);
    if (size < 8 || p + size > to) return;
    yield [String.fromCharCode(v.getUint8(p + 4), v.getUint8(p + 5), v.getUint8(p + 6), v.getUint8(p + 7)), p, size];
    p += size;
  }
}

/** Durations of one track's samples in one moof (ISO/IEC 14496-12 tfhd and trun). */
function trafTicks(
  moof: DataView,
  from: number,
  to: number,
  trackId: number,
  trexDuration: number,
): { ticks: number; samples: number } {
  let ticks = 0;
  let samples = 0;
  for (const [type, at, size] of children(moof, from, to)) {
    if (type !== 'traf') continue;
    let mine = false;
    let defaultDuration = trexDuration;
    for (const [t, p] of children(moof, at + 8, at + size)) {
      const flags = moof.getUint32(p + 8) & 0xffffff;
      if (t === 'tfhd') {
        mine = moof.getUint32(p + 12) === trackId;
        let q = p + 16;
        if (flags & 0x1) q += 8;
        if (flags & 0x2) q += 4;
        if (flags & 0x8) defaultDuration = moof.getUint32(q);
      } else if (t === 'trun' && mine) {
        const count = moof.getUint32(p + 12);
        let q = p + 16;
        if (flags & 0x1) q += 4;
        if (flags & 0x4) q += 4;
        const per = 4 * [0x100, 0x200, 0x400, 0x800].filter((b) => flags & b).length;
        samples += count;
        if (flags & 0x100) for (let i = 0; i < count; i++) ticks += moof.getUint32(q + i * per);
        else ticks += count * defaultDuration;
      }
    }
  }
  return { ticks, samples };
}

/** `file`: the local file to hand libvips, which reads only its header; otherwise it sees the head read here. */
async function probeImage(source: string, src: ByteSource, head: Uint8Array, file: string | undefined): Promise<Probe> {
  let meta: Metadata | null = null;
  let err: unknown = null;
  const sharp = await loadSharp();
  const attempts: Array<() => Promise<Metadata>> = file
    ? [() => sharp(file).metadata()]
    : [
        () => sharp(head).metadata(),
        async () => sharp(await src.read(0, Math.min(src.size, MAX_IMAGE_HEAD))).metadata(),
      ];
  for (const attempt of attempts) {
    try {
      meta = await attempt();
      if (meta.width && meta.height) break;
    } catch (e) {
      err = e;
    }
    if (src.size <= head.length) break;
  }
  if (!meta?.width || !meta.height || !meta.format) {
    throw new ProbeError(
      'invalid',
      source,
      `${source}: the image header cannot be read (${err instanceof Error ? err.message : 'no dimensions'})`,
    );
  }
  const format = String(meta.format);
  return {
    source,
    kind: 'image',
    container: format,
    durationSec: null,
    fps: null,
    width: meta.width,
    height: meta.height,
    bytes: src.size,
    format,
  };
}

export type AudioContainer = 'mp3' | 'wav';

/**
 * What an audio reference really holds, by its first bytes, so a file named .mp3 that is not one
 * is refused before it is uploaded or paid for: MP3 (an ID3 tag, or an MPEG audio frame header)
 * or WAV (RIFF/WAVE); otherwise a short name of what it is, for the message.
 */
export async function sniffAudio(
  source: string,
): Promise<{ ok: true; container: AudioContainer } | { ok: false; found: string }> {
  const src = await openSource(source);
  try {
    if (src.size === 0) return { ok: false, found: 'an empty file' };
    const b = await src.read(0, 64);
    if (
      ascii(b, 0, 3) === 'ID3' ||
      (b[0] === 0xff && (b[1] & 0xe0) === 0xe0 && (b[1] & 0x18) !== 0x08 && (b[1] & 0x06) !== 0)
    )
      return { ok: true, container: 'mp3' };
    if (ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WAVE') return { ok: true, container: 'wav' };
    if (ascii(b, 0, 4) === 'fLaC') return { ok: false, found: 'FLAC audio' };
    if (ascii(b, 0, 4) === 'OggS') return { ok: false, found: 'Ogg audio' };
    const other = sniff(b);
    if (other.kind === 'iso') return { ok: false, found: 'an MP4/M4A container' };
    if (other.kind === 'image') return { ok: false, found: 'an image' };
    if (other.kind === 'otherVideo') return { ok: false, found: `${other.container.toUpperCase()} video` };
    return { ok: false, found: 'neither MP3 nor WAV data' };
  } finally {
    await src.close();
  }
}
