import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { KEEP_ALIVE } from '../api/client.ts';
import { createWriteStream } from 'node:fs';
import { link, open, stat, unlink } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';

/** The result URL no longer works (410/403/404): re-read the task for a fresh one. */
export class ExpiredUrlError extends Error {
  override name = 'ExpiredUrlError';
  readonly status: number;
  constructor(status: number) {
    super(`the result link has expired (HTTP ${status})`);
    this.status = status;
  }
}

/** A transfer that may succeed when resumed or repeated (reset, truncated body, 5xx). */
export class TransientDownloadError extends Error {
  override name = 'TransientDownloadError';
}

export interface DownloadResult {
  bytes: number;
  contentType?: string;
  resumed: boolean;
}

const sizeOf = async (p: string) => (await stat(p).catch(() => null))?.size ?? 0;

/**
 * Streams `url` into `partPath` with constant memory, continuing an existing part with a Range
 * request (the server may ignore it: a 200 starts over). Fails with TransientDownloadError when
 * fewer bytes arrive than announced, so the caller resumes instead of keeping a truncated file.
 * The part is flushed to disk before this resolves.
 */
export async function downloadToPart(url: string, partPath: string, opts: { signal?: AbortSignal; onBytes?: (n: number) => void; timeoutMs?: number } = {}): Promise<DownloadResult> {
  const have = await sizeOf(partPath);
  // Plain node:http rather than got: a multi-gigabyte body should cost no more than the socket and
  // the disk (got's stream layers cost two thirds of curl's throughput in bench/engine-download.ts).
  const u = new URL(url);
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)(u, {
      headers: have > 0 ? { range: `bytes=${have}-` } : {},
      agent: u.protocol === 'https:' ? KEEP_ALIVE.https : KEEP_ALIVE.http,
      signal: opts.signal,
      timeout: opts.timeoutMs ?? 30_000,
    }, resolve);
    req.on('timeout', () => req.destroy(new Error('no data for too long')));
    req.on('error', (err) => reject(opts.signal?.aborted ? err : new TransientDownloadError(`download failed: ${err.message}`)));
    req.end();
  });
  const status = response.statusCode ?? 0;
  const contentType = headerOf(response, 'content-type');
  if (status === 410 || status === 403 || status === 404) {
    response.destroy();
    throw new ExpiredUrlError(status);
  }
  if (status === 416 && have > 0) {
    // The part already holds the whole file (the last run died before renaming it).
    response.destroy();
    return { bytes: have, contentType, resumed: true };
  }
  if (status !== 200 && status !== 206) {
    response.destroy();
    throw new TransientDownloadError(`download failed: HTTP ${status}`);
  }
  const resumed = status === 206 && have > 0;
  const length = Number(headerOf(response, 'content-length') ?? NaN);
  let received = 0;
  response.on('data', (chunk: Buffer) => {
    received += chunk.length;
    opts.onBytes?.(chunk.length);
  });
  try {
    await pipeline(response, createWriteStream(partPath, { flags: resumed ? 'a' : 'w', flush: true, highWaterMark: 1 << 20 }));
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    throw new TransientDownloadError(`download interrupted after ${received} bytes: ${(err as Error).message}`);
  }
  if (Number.isFinite(length) && received < length) throw new TransientDownloadError(`download truncated: ${received} of ${length} bytes`);
  return { bytes: (resumed ? have : 0) + received, contentType, resumed };
}

function headerOf(r: IncomingMessage, name: string): string | undefined {
  const v = r.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Writes a small text result into a part file, flushed, with the same rename step as downloads. */
export async function writeTextPart(partPath: string, text: string): Promise<void> {
  const fh = await open(partPath, 'w');
  try {
    await fh.writeFile(text.endsWith('\n') ? text : `${text}\n`, 'utf8');
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Puts a finished part at `finalPath` without ever replacing an existing file: a hard link fails
 * with EEXIST where a rename would silently overwrite. Returns false on collision. The part is left
 * in place; the caller removes it once the output is recorded, so a crash in between is detectable
 * (part and final share an inode).
 */
export async function placeWithoutOverwrite(partPath: string, finalPath: string): Promise<boolean> {
  try {
    await link(partPath, finalPath);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** Whether two paths are the same file (a placed part and its final name). */
export async function sameFile(a: string, b: string): Promise<boolean> {
  const [x, y] = await Promise.all([stat(a).catch(() => null), stat(b).catch(() => null)]);
  return !!x && !!y && x.ino === y.ino && x.dev === y.dev;
}

export const removeQuietly = (p: string) => unlink(p).catch(() => undefined);
export const exists = async (p: string) => (await stat(p).catch(() => null)) !== null;
