/**
 * Random access to a local file, an HTTP(S) resource (Range requests; a 200 with a body larger than
 * asked for is refused, not downloaded) or inline data, so probing reads only the container header
 * and, for an MP4 with its moov at the end, the tail.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { isInline } from '../../shared/catalogue/index.ts';
import { isLoopbackUrl } from '../../shared/loopback.ts';

export type ProbeErrorCode = 'unreachable' | 'no-range' | 'truncated' | 'unsupported' | 'invalid';

export class ProbeError extends Error {
  override name = 'ProbeError';
  code: ProbeErrorCode;
  source: string;
  constructor(code: ProbeErrorCode, source: string, message: string) {
    super(message);
    this.code = code;
    this.source = source;
  }
}

export interface ByteSource {
  size: number;
  /** Bytes transferred so far (local reads or HTTP bodies), to keep probing honest. */
  bytesRead: number;
  read(start: number, length: number): Promise<Uint8Array>;
  close(): Promise<void>;
}

/** The first read; also what content sniffing looks at. */
export const HEAD_BYTES = 64 * 1024;
const HTTP_TIMEOUT_MS = 20_000;

export const isUrl = (s: string) => /^[a-z][a-z0-9+.-]*:\/\//i.test(s) && !s.toLowerCase().startsWith('file://');

/** The bytes of a value given inline; null for anything else. */
export const inlineBytes = (value: string): Buffer | null =>
  isInline(value) ? Buffer.from(value.replace(/^data:[^,]*;base64,/i, ''), 'base64') : null;

function memorySource(bytes: Uint8Array): ByteSource {
  const src: ByteSource = {
    size: bytes.length,
    bytesRead: 0,
    async read(start, length) {
      const out = bytes.subarray(start, Math.min(start + length, bytes.length));
      src.bytesRead += out.length;
      return out;
    },
    close: async () => {},
  };
  return src;
}

export async function openSource(source: string): Promise<ByteSource> {
  const inline = inlineBytes(source);
  if (inline) return memorySource(inline);
  if (isUrl(source)) {
    // Loopback http too, so the Sandbox and tests can serve inputs (as the catalogue allows).
    if (!source.toLowerCase().startsWith('https://') && !isLoopbackUrl(source)) {
      throw new ProbeError('unreachable', source, `${source}: only HTTPS URLs are accepted`);
    }
    return openHttp(source);
  }
  return openFile(source.toLowerCase().startsWith('file://') ? fileURLToPath(source) : source);
}

async function openFile(path: string): Promise<ByteSource> {
  let fh: FileHandle;
  let size: number;
  try {
    fh = await open(path, 'r');
    const st = await fh.stat();
    if (!st.isFile()) {
      await fh.close();
      throw new ProbeError('unreachable', path, `${path}: not a regular file`);
    }
    size = st.size;
  } catch (err) {
    if (err instanceof ProbeError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new ProbeError(
      'unreachable',
      path,
      `${path}: cannot open (${code === 'ENOENT' ? 'no such file' : (code ?? String(err))})`,
    );
  }
  const src: ByteSource = {
    size,
    bytesRead: 0,
    async read(start, length) {
      const len = Math.max(0, Math.min(length, size - start));
      const buf = Buffer.alloc(len);
      const { bytesRead } = await fh.read(buf, 0, len, start);
      src.bytesRead += bytesRead;
      return buf.subarray(0, bytesRead);
    },
    close: () => fh.close(),
  };
  return src;
}

interface RangeResponse {
  bytes: Uint8Array;
  size: number;
}

async function rangeGet(url: string, start: number, end: number): Promise<RangeResponse> {
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { Range: `bytes=${start}-${end}` },
      redirect: 'follow',
      signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new ProbeError(
      'unreachable',
      url,
      `${url}: unreachable (${cause?.code ?? cause?.message ?? (err as Error).message})`,
    );
  }
  const want = end - start + 1;
  if (res.status === 206) {
    const m = /^bytes\s+(\d+)-(\d+)\/(\d+|\*)$/i.exec(res.headers.get('content-range') ?? '');
    if (!m || m[3] === '*') {
      await res.body?.cancel();
      throw new ProbeError(
        'no-range',
        url,
        `${url}: the server's partial response has no total size in Content-Range, so the file size cannot be checked`,
      );
    }
    if (Number(m[1]) !== start) {
      await res.body?.cancel();
      throw new ProbeError(
        'no-range',
        url,
        `${url}: the server answered bytes ${m[1]}- for a request starting at ${start}`,
      );
    }
    return { bytes: await readCapped(res, want), size: Number(m[3]) };
  }
  if (res.status === 200) {
    // A tiny file sent whole is harmless; anything larger would be a full download.
    const len = Number(res.headers.get('content-length') ?? NaN);
    if (start === 0 && Number.isFinite(len) && len <= want) return { bytes: await readCapped(res, want), size: len };
    await res.body?.cancel();
    throw new ProbeError(
      'no-range',
      url,
      `${url}: the server does not support Range requests (it answered 200 with the whole file), so it cannot be probed without downloading it`,
    );
  }
  await res.body?.cancel();
  if (res.status === 416)
    throw new ProbeError('truncated', url, `${url}: the server has no bytes at offset ${start} (HTTP 416)`);
  throw new ProbeError('unreachable', url, `${url}: HTTP ${res.status} ${res.statusText}`.trim());
}

/** Reads at most `max` bytes of a body and drops the rest, whatever the server decides to send. */
async function readCapped(res: Response, max: number): Promise<Uint8Array> {
  if (!res.body) return new Uint8Array(0);
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let n = 0;
  while (n < max) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    n += value.length;
  }
  await reader.cancel().catch(() => {});
  const out = Buffer.concat(parts);
  return out.subarray(0, Math.min(out.length, max));
}

async function openHttp(url: string): Promise<ByteSource> {
  const first = await rangeGet(url, 0, HEAD_BYTES - 1);
  const cache = { start: 0, bytes: first.bytes };
  const src: ByteSource = {
    size: first.size,
    bytesRead: first.bytes.length,
    async read(start, length) {
      const end = Math.min(start + length, src.size) - 1;
      if (end < start) return new Uint8Array(0);
      // The first read already holds the head: serve it again without another request.
      if (start >= cache.start && end < cache.start + cache.bytes.length)
        return cache.bytes.subarray(start - cache.start, end - cache.start + 1);
      const r = await rangeGet(url, start, end);
      src.bytesRead += r.bytes.length;
      return r.bytes;
    },
    close: async () => {},
  };
  return src;
}
