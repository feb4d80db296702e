import { createReadStream } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Faults } from './faults.ts';

/** Something servable by byte range: a buffer, a file, or bytes generated on the fly. */
export interface ByteSource {
  size: number;
  contentType: string;
  /** Inclusive byte range. */
  stream(start: number, end: number): Readable;
  etag?: string;
}

export const bufferSource = (bytes: Buffer, contentType: string, etag?: string): ByteSource => ({
  size: bytes.length,
  contentType,
  etag,
  stream: (s, e) => Readable.from([bytes.subarray(s, e + 1)]),
});

export const fileSource = (path: string, size: number, contentType: string): ByteSource => ({
  size,
  contentType,
  stream: (s, e) => createReadStream(path, { start: s, end: e }),
});

const PATTERN = (() => {
  // 1 MiB of fixed pseudo-random bytes: a blob is this block repeated, offset by its seed.
  const b = Buffer.alloc(1 << 20);
  let x = 0x9e3779b9;
  for (let i = 0; i < b.length; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b.writeUInt32LE(x >>> 0, i);
  }
  return b;
})();

/** Deterministic bytes of any size, never held in memory: byte i = PATTERN[(i + shift) mod 1 MiB]. */
export function generatedSource(size: number, shift: number): ByteSource {
  return {
    size,
    contentType: 'application/octet-stream',
    etag: `"blob-${size}-${shift}"`,
    stream(start, end) {
      let pos = start;
      return new Readable({
        read() {
          if (pos > end) return void this.push(null);
          const off = (pos + shift) % PATTERN.length;
          const n = Math.min(end - pos + 1, PATTERN.length - off, 256 * 1024);
          this.push(PATTERN.subarray(off, off + n));
          pos += n;
        },
      });
    },
  };
}

/** Single `bytes=` range; null = whole body, 'bad' = unsatisfiable. */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | null | 'bad' {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return 'bad';
  let start: number;
  let end: number;
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0) return 'bad';
    start = Math.max(0, size - n);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start >= size || start > end) return 'bad';
  return { start, end };
}

/** Paces a stream to about `bytesPerSec` in 100 ms slices (the slow-download fault). */
function throttle(src: Readable, bytesPerSec: number): Readable {
  const slice = Math.max(1, Math.floor(bytesPerSec / 10));
  return Readable.from(
    (async function* () {
      for await (const chunk of src as AsyncIterable<Buffer>) {
        for (let i = 0; i < chunk.length; i += slice) {
          yield chunk.subarray(i, i + slice);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    })(),
  );
}

/**
 * Writes a download with Range/HEAD support on the raw response. `faults` (null for uploads)
 * adds the slow and truncated-download behaviours: a truncated body announces its full
 * Content-Length and the connection is cut at half.
 */
export function sendBytes(req: FastifyRequest, reply: FastifyReply, src: ByteSource, faults: Faults | null): void {
  reply.hijack();
  const res: ServerResponse = reply.raw;
  const range = parseRange(req.headers.range, src.size);
  const headers: Record<string, string | number> = {
    'Accept-Ranges': 'bytes',
    'Content-Type': src.contentType,
    'Cache-Control': 'no-store',
  };
  if (src.etag) headers.ETag = src.etag;
  if (range === 'bad') {
    res.writeHead(416, { ...headers, 'Content-Range': `bytes */${src.size}`, 'Content-Length': 0 });
    return void res.end();
  }
  const start = range?.start ?? 0;
  const end = range?.end ?? src.size - 1;
  const length = src.size === 0 ? 0 : end - start + 1;
  if (range) headers['Content-Range'] = `bytes ${start}-${end}/${src.size}`;
  headers['Content-Length'] = length;
  res.writeHead(range ? 206 : 200, headers);
  if (req.method === 'HEAD' || length === 0) return void res.end();
  const cutAt = faults?.truncateDownloads ? Math.floor(length / 2) : length;
  let body = cutAt > 0 ? src.stream(start, start + cutAt - 1) : Readable.from([]);
  if (faults && faults.slowDownloadBytesPerSec > 0) body = throttle(body, faults.slowDownloadBytesPerSec);
  body.on('error', () => res.destroy());
  res.on('close', () => body.destroy());
  if (cutAt < length) {
    body.pipe(res, { end: false });
    // End the socket (flushing what was written) instead of destroying it, so the client gets
    // the partial body and then a premature close, as with a dropped connection mid-download.
    body.on('end', () => {
      res.socket?.end();
      setTimeout(() => res.destroy(), 2000).unref();
    });
  } else body.pipe(res);
}
