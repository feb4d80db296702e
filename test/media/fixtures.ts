/**
 * Real media for the reference-validation tests, made by ffmpeg and sharp into a temp folder.
 * Clips are tiny test patterns encoded with -preset ultrafast; only the values a rule looks at are
 * chosen (size, rate, duration, container, moov position).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';

const run = promisify(execFile);

export interface ClipSpec {
  w: number;
  h: number;
  fps: number;
  sec: number;
  ext?: 'mp4' | 'mov' | 'avi';
  /** moov before mdat (-movflags +faststart); the default leaves it at the end, as ffmpeg does. */
  faststart?: boolean;
  /** Adds per-frame noise so the file is large (for "read far less than the file" checks). */
  noise?: boolean;
  /** A fragmented MP4 (empty moov, the samples in moof boxes), as screen recorders and live encoders write. */
  fragmented?: boolean;
  /** A video codec other than H.264: what editors export in a MOV. */
  codec?: 'prores' | 'mjpeg';
}

export async function makeClip(dir: string, name: string, s: ClipSpec): Promise<string> {
  const ext = s.ext ?? 'mp4';
  const out = join(dir, `${name}.${ext}`);
  const args = [
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    `testsrc=size=${s.w}x${s.h}:rate=${s.fps}`,
    '-frames:v',
    String(Math.round(s.sec * s.fps)),
  ];
  if (s.noise) args.push('-vf', 'noise=alls=40:allf=t');
  if (ext === 'avi') args.push('-c:v', 'mpeg4');
  else if (s.codec) args.push('-c:v', s.codec);
  else args.push('-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p');
  if (s.faststart) args.push('-movflags', '+faststart');
  if (s.fragmented) args.push('-movflags', '+frag_keyframe+empty_moov');
  await run('ffmpeg', [...args, out]);
  return out;
}

/** A second of a 440 Hz tone as WAV: a voice or a sound for the tools that take audio. */
export async function makeVoice(dir: string, name = 'voice'): Promise<string> {
  const out = join(dir, `${name}.wav`);
  await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', out]);
  return out;
}

export async function makeImage(
  dir: string,
  name: string,
  w: number,
  h: number,
  format: 'png' | 'jpeg' | 'webp' | 'gif',
): Promise<string> {
  const out = join(dir, `${name}.${format === 'jpeg' ? 'jpg' : format}`);
  await sharp({ create: { width: w, height: h, channels: 3, background: { r: 200, g: 80, b: 40 } } })
    .toFormat(format)
    .toFile(out);
  return out;
}

/**
 * Grows a file to exactly `bytes` with zeros (sparse on most file systems, so 50 MB costs nothing).
 * Decoders ignore bytes after the header/index we parse, so the file still probes as before.
 */
export async function padTo(path: string, bytes: number): Promise<void> {
  await truncate(path, bytes);
}

/** Runs `jobs` at most `n` at a time: ffmpeg is multi-threaded already. */
export async function limited<T>(n: number, jobs: Array<() => Promise<T>>): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]();
      }
    }),
  );
  return out;
}

export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'mediadesk-media-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}
