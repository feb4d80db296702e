/**
 * Measures a reference file (local path, file:// URL, or HTTPS URL) without reading all of it.
 *
 *   probeSource(source) -> Promise<Probe>   (Probe is shared/validation's type)
 *   throws ProbeError { code: 'unreachable' | 'no-range' | 'truncated' | 'unsupported' | 'invalid' }
 *
 * The kind is decided by content, not by extension. MP4/MOV are parsed with mp4box until the moov
 * box is complete, following mp4box's "next position" so the mdat payload is skipped (a moov at
 * the end costs one extra ranged read of the tail). Images are measured by sharp from the header.
 * Other recognised video containers (WebM, AVI, ...) come back with only their container and size,
 * so the shared rules can reject them with a precise message.
 */
import { createFile, Log, MP4BoxBuffer, type Movie } from 'mp4box';
import { fileURLToPath } from 'node:url';
import type { Metadata } from 'sharp';
import type { Probe } from '../../../shared/validation/references.ts';
import { HEAD_BYTES, ProbeError, isUrl, openSource, type ByteSource } from './source.ts';
import { loadSharp } from './sharp.ts';

export { ProbeError } from './source.ts';

/** A moov box of a short clip is kilobytes; this bounds the work on hostile or odd files. */
const MAX_HEADER_BYTES = 16 * 1024 * 1024;
const NEXT_CHUNK = 256 * 1024;
/** JPEG headers can sit behind large EXIF/ICC segments. */
const MAX_IMAGE_HEAD = 4 * 1024 * 1024;

// QuickTime files carry user-data atoms (e.g. ffmpeg's '©swr') that mp4box logs as errors on stderr
// while parsing them fine. Drop exactly that message; everything else still reaches its handler.
const logError = Log.error.bind(Log);
Log.error = (module: string, msg?: string, isofile?: Parameters<typeof Log.error>[2]) => {
  if (module === 'BoxParser' && typeof msg === 'string' && msg.startsWith('Invalid box type')) return;
  logError(module, msg, isofile);
};

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
  if (b[0] === 0x1a && b[1] === 0x45 && b[2] === 0xdf && b[3] === 0xa3) return { kind: 'otherVideo', container: 'webm' };
  if (b[0] === 0x47 && b.length > 188 && b[188] === 0x47) return { kind: 'otherVideo', container: 'mpegts' };
  if (ascii(b, 0, 3) === 'FLV') return { kind: 'otherVideo', container: 'flv' };
  return { kind: 'unknown' };
}

export async function probeSource(source: string): Promise<Probe> {
  if (/^upl_vid_/.test(source)) throw new ProbeError('unsupported', source, `${source}: an uploaded-video id cannot be probed here; probe the file before uploading it`);
  if (/^data:/i.test(source)) throw new ProbeError('unsupported', source, 'data: URIs are not probed; pass the file path or an HTTPS URL');
  const src = await openSource(source);
  try {
    if (src.size === 0) throw new ProbeError('truncated', source, `${source}: the file is empty`);
    const head = await src.read(0, HEAD_BYTES);
    const kind = sniff(head);
    switch (kind.kind) {
      case 'iso':
        return await probeIso(source, src, head);
      case 'image':
        return await probeImage(source, src, head);
      case 'otherVideo':
        return { source, kind: 'video', container: kind.container, durationSec: null, fps: null, width: null, height: null, bytes: src.size };
      default:
        throw new ProbeError('unsupported', source, `${source}: not a video or image this app can read (neither MP4/MOV nor JPG/PNG/WebP)`);
    }
  } finally {
    await src.close();
  }
}

async function probeIso(source: string, src: ByteSource, head: Uint8Array): Promise<Probe> {
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
    if (read > MAX_HEADER_BYTES) throw new ProbeError('invalid', source, `${source}: no complete moov box within ${MAX_HEADER_BYTES} bytes of header data`);
    chunk = await src.read(pos, NEXT_CHUNK);
    if (chunk.length === 0) break;
  }
  const movie = info as Movie | null;
  if (!movie) {
    const why = parseError ? ` (${parseError})` : '';
    throw new ProbeError('truncated', source, `${source}: truncated or damaged MP4/MOV: the moov box (the index) was not found or is incomplete${why}`);
  }
  // mp4box lists as video only the sample formats it knows; a QuickTime video track in ProRes or
  // Motion JPEG (what editors export) is a video track all the same, by its handler.
  const vt = movie.videoTracks[0] ?? movie.tracks.find((_, i) => file.moov?.traks[i]?.mdia?.hdlr?.handler === 'vide');
  if (!vt) throw new ProbeError('unsupported', source, `${source}: the MP4/MOV has no video track`);
  const container = movie.brands[0] === 'qt  ' || !file.ftyp ? 'mov' : 'mp4';
  const trackSec = vt.timescale > 0 ? vt.samples_duration / vt.timescale : 0;
  const movieSec = movie.timescale > 0 ? movie.duration / movie.timescale : 0;
  const fragSec = movie.fragment_duration && movie.timescale > 0 ? movie.fragment_duration.num / movie.timescale : 0;
  // mvhd is what players show; fragmented files carry it in mehd, else only per-track samples.
  const durationSec = movieSec || fragSec || trackSec || null;
  const fps = trackSec > 0 && vt.nb_samples > 0 ? vt.nb_samples / trackSec : null;
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

async function probeImage(source: string, src: ByteSource, head: Uint8Array): Promise<Probe> {
  // libvips reads only the header of a local file; for URLs it sees the ranged head.
  const input = isUrl(source) ? undefined : source.toLowerCase().startsWith('file://') ? fileURLToPath(source) : source;
  let meta: Metadata | null = null;
  let err: unknown = null;
  const sharp = await loadSharp();
  const attempts: Array<() => Promise<Metadata>> = input
    ? [() => sharp(input).metadata()]
    : [() => sharp(head).metadata(), async () => sharp(await src.read(0, Math.min(src.size, MAX_IMAGE_HEAD))).metadata()];
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
    throw new ProbeError('invalid', source, `${source}: the image header cannot be read (${err instanceof Error ? err.message : 'no dimensions'})`);
  }
  const format = String(meta.format);
  return { source, kind: 'image', container: format, durationSec: null, fps: null, width: meta.width, height: meta.height, bytes: src.size, format };
}

export type AudioContainer = 'mp3' | 'wav';

/**
 * What an audio reference really holds, by its first bytes, so a file named .mp3 that is not one
 * is refused before it is uploaded or paid for: MP3 (an ID3 tag, or an MPEG audio frame header)
 * or WAV (RIFF/WAVE); otherwise a short name of what it is, for the message.
 */
export async function sniffAudio(source: string): Promise<{ ok: true; container: AudioContainer } | { ok: false; found: string }> {
  const src = await openSource(source);
  try {
    if (src.size === 0) return { ok: false, found: 'an empty file' };
    const b = await src.read(0, 64);
    if (ascii(b, 0, 3) === 'ID3' || (b[0] === 0xff && (b[1] & 0xe0) === 0xe0 && (b[1] & 0x18) !== 0x08 && (b[1] & 0x06) !== 0)) return { ok: true, container: 'mp3' };
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
