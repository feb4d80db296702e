/* eslint-disable max-lines -- Over 500 lines: one resumable transfer (ranges, expiry, write-back, its error kinds), read as one. */
import type { IncomingMessage } from 'node:http';
import { connect as netConnect, type NetConnectOpts } from 'node:net';
import { KEEP_ALIVE, networkWords } from '../api/client.ts';
import { fsWriteWords } from '../batch/fs-error.ts';
import { dirname } from 'node:path';
import { withCollisionSuffix } from './naming.ts';
import { link, open, stat, unlink, type FileHandle } from 'node:fs/promises';
import type { StatOptions, Stats } from 'node:fs';

// Not `import … from 'node:http'`: see KEEP_ALIVE (api/client.ts).
const { request: httpRequest, STATUS_CODES } = process.getBuiltinModule('node:http');
const { request: httpsRequest } = process.getBuiltinModule('node:https');

/** The result URL no longer works (410/403/404): re-read the task for a fresh one. */
export class ExpiredUrlError extends Error {
  override name = 'ExpiredUrlError';
  readonly status: number;
  constructor(status: number) {
    super(`the result link has expired (HTTP ${status})`);
    this.status = status;
  }
}

/**
 * A paid result whose links expired and were not renewed is waited for while the service keeps it:
 * waits until `until` (its lifetime's end) growing to a minute a round, and throws past it.
 */
export async function waitForRenewedLinks(
  err: ExpiredUrlError,
  round: number,
  until: number,
  signal: AbortSignal,
): Promise<void> {
  const left = until - Date.now();
  if (left <= 0)
    throw new Error(`${err.message} and the server gave no fresh one before ${new Date(until).toISOString()}`);
  const ms = Math.min(60_000, left, 250 * 2 ** Math.min(round, 8) * (0.5 + Math.random()));
  await new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });
}

/** A transfer that may succeed when resumed or repeated (reset, truncated body, 5xx). */
export class TransientDownloadError extends Error {
  override name = 'TransientDownloadError';
}

/**
 * The file system refused the part file (name too long, disk full, no permission): repeating the
 * transfer cannot help, so it is not transient and fails at once with the reason.
 */
const LOCAL_WRITE_CODES = new Set([
  'ENAMETOOLONG',
  'ENOSPC',
  'EDQUOT',
  'EACCES',
  'EPERM',
  'EROFS',
  'ENOTDIR',
  'EISDIR',
]);

function interrupted(received: number, err: unknown, partPath: string): Error {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code && LOCAL_WRITE_CODES.has(code))
    return new Error(`cannot write the result file into ${dirname(partPath)}: ${fsWriteWords(err)}`, { cause: err });
  return new TransientDownloadError(`the transfer broke off after ${received} bytes (${transferWords(err)})`);
}

/** A failed transfer in words: a network code said plainly, else the message (ours are worded). */
const transferWords = (err: unknown) => {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code ? networkWords(code) : (err as Error).message;
};

/**
 * The bare socket's answer is the file but does not state its length (chunked, or a body that ends
 * when the connection closes, as some servers send to `Connection: close`): the socket reader can
 * neither decode it nor tell a whole file from a cut one. Never shown: node:http reads it instead.
 */
class UnmeasuredAnswer extends Error {
  override name = 'UnmeasuredAnswer';
}

/** An answer of the result server that carries no file. */
const badAnswer = (status: number) =>
  new TransientDownloadError(
    status
      ? `the result server answered HTTP ${status}${STATUS_CODES[status] ? ` ${STATUS_CODES[status]}` : ''} instead of the file`
      : "the result server's answer could not be read (it did not start with an HTTP status line)",
  );
const truncated = (received: number, length: number) =>
  new TransientDownloadError(`the file stopped at ${received} of ${length} bytes`);

export interface DownloadOptions {
  signal?: AbortSignal;
  onBytes?: (n: number) => void;
  timeoutMs?: number;
  /** The caller just measured the part (a missing file costs an exception per stat). */
  partBytes?: number;
  /** Internal: the answer of a moment before stated this length; read through node:http this time. */
  stated?: { status: number; length: number };
}

export interface DownloadResult {
  bytes: number;
  contentType?: string;
  resumed: boolean;
}

/**
 * A file's stat, or null when nothing is there, the usual answer: a rejected stat builds an Error
 * with its stack, a few KB of garbage per call at batch rates. Where stat does not know
 * `throwIfNoEntry` it still rejects, and that is null too.
 */
export const statOrNull = async (p: string): Promise<Stats | null> =>
  (await stat(p, NO_ENTRY_IS_NULL).catch(() => null)) ?? null;
const NO_ENTRY_IS_NULL = { throwIfNoEntry: false } as StatOptions & { bigint?: false };

export const sizeOf = async (p: string) => (await statOrNull(p))?.size ?? 0;

/**
 * Streams `url` into `partPath` with constant memory, resuming a part with a Range request (a 200
 * starts over), and flushes it before resolving. Fewer bytes than announced fail with
 * TransientDownloadError, so the caller resumes instead of keeping a truncated file.
 */
export async function downloadToPart(
  url: string,
  partPath: string,
  opts: DownloadOptions = {},
): Promise<DownloadResult> {
  // A synchronous create's inline result (syncEnvelope): its bytes are in the URL itself.
  if (url.startsWith('data:')) return writeDataUri(url, partPath);
  const have = opts.partBytes ?? (await sizeOf(partPath));
  // Plain node:http (no client library): a multi-gigabyte body should cost no more than the socket
  // and the disk (got's stream layers cost two thirds of curl's throughput in bench/engine-download.ts).
  const u = new URL(url);
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)(
      u,
      {
        headers: have > 0 ? { range: `bytes=${have}-` } : {},
        agent: u.protocol === 'https:' ? KEEP_ALIVE.https : KEEP_ALIVE.http,
        signal: opts.signal,
        timeout: opts.timeoutMs ?? 30_000,
      },
      resolve,
    );
    req.on('timeout', () => req.destroy(new Error('the result server sent no data for too long')));
    req.on('error', (err) => reject(opts.signal?.aborted ? err : new TransientDownloadError(transferWords(err))));
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
    throw badAnswer(status);
  }
  const resumed = status === 206 && have > 0;
  const length = Number(headerOf(response, 'content-length') ?? NaN);
  if (u.protocol === 'http:' && !opts.stated && length >= RAW_MIN_BYTES && !response.headers['transfer-encoding']) {
    // A large plain-HTTP body goes over its own socket, read into one reused buffer: node:http's
    // per-chunk buffers and parser cost ~40% of curl's throughput (bench/engine-download.ts).
    // Nothing of this response was written; the same range is asked again.
    response.destroy();
    try {
      return await rawDownload(u, partPath, have, opts);
    } catch (err) {
      if (!(err instanceof UnmeasuredAnswer)) throw err;
      // Asked again through node:http, which reads any body; checked against the length stated here.
      return downloadToPart(url, partPath, { ...opts, partBytes: have, stated: { status, length } });
    }
  }
  // A body without a length is checked against the one the same request was answered with a moment before.
  let expected = length;
  if (!Number.isFinite(length)) expected = opts.stated?.status === status ? opts.stated.length : NaN;
  // Listened to from now on, while the part opens: a short body can arrive and its connection
  // close before the open completes.
  const opening = open(partPath, resumed ? 'a' : 'w');
  let received = 0;
  try {
    received = await writeBody(response, opening, opts.onBytes);
  } catch (err) {
    await opening
      .then(
        (h) => h.close(),
        () => undefined,
      )
      .catch(() => undefined);
    if (opts.signal?.aborted) throw err;
    throw interrupted((err as { received?: number }).received ?? 0, err, partPath);
  }
  const fh = await opening;
  try {
    if (Number.isFinite(expected) && received < expected) throw truncated(received, expected);
    // Every byte is written: flush the part before saying it is complete.
    await fh.sync();
  } finally {
    await fh.close();
  }
  return { bytes: (resumed ? have : 0) + received, contentType, resumed };
}

/**
 * Writes a response body through one file handle (writev of what arrived meanwhile, pausing past
 * WRITE_BUFFER_BYTES, write-back every SYNC_EVERY_BYTES) and resolves with the byte count. No
 * streams: their per-transfer objects were much of the engine's garbage (bench/history/engine-throughput.md, memory round).
 */
function writeBody(
  response: IncomingMessage,
  opening: Promise<FileHandle>,
  onBytes?: (n: number) => void,
): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let fh: FileHandle | null = null;
    let received = 0;
    let written = 0;
    let syncedAt = 0;
    let queue: Buffer[] = [];
    let queued = 0;
    let writing = false;
    let ended = false;
    let settled = false;
    let failure: Error | null = null;
    let syncing: Promise<void> | null = null;
    const finish = () => {
      settled = true;
      const done = () => (failure ? reject(Object.assign(failure, { received })) : resolve(received));
      // A write-back in flight still uses the handle: the caller closes it only after that ends.
      if (syncing) void syncing.then(done);
      else done();
    };
    // A broken transfer still writes what it delivered, so the next attempt resumes after it.
    const stop = (err: Error) => {
      if (failure || ended) return;
      failure = err;
      response.destroy();
      pump();
    };
    const pump = () => {
      if (settled || writing || !fh) return;
      if (queued === 0) {
        if (ended || failure) finish();
        return;
      }
      const h = fh;
      const bufs = queue;
      const n = queued;
      queue = [];
      queued = 0;
      writing = true;
      h.writev(bufs)
        .then(({ bytesWritten }) => {
          if (bytesWritten !== n) throw new Error(`short write: ${bytesWritten} of ${n} bytes`);
          written += n;
          writing = false;
          if (!syncing && written - syncedAt >= SYNC_EVERY_BYTES) {
            const at = written;
            syncing = h
              .datasync()
              .then(
                () => void (syncedAt = at),
                () => undefined,
              )
              .finally(() => (syncing = null));
          }
          if (!ended && !failure && response.isPaused()) response.resume();
          pump();
        })
        .catch((err: Error) => {
          failure = err;
          writing = false;
          response.destroy();
          finish();
        });
    };
    response.on('data', (chunk: Buffer) => {
      received += chunk.length;
      onBytes?.(chunk.length);
      queue.push(chunk);
      queued += chunk.length;
      if (queued >= WRITE_BUFFER_BYTES) response.pause();
      pump();
    });
    response.on('end', () => {
      ended = true;
      pump();
    });
    response.on('error', stop);
    response.on('close', () => stop(new Error('the connection closed before the body ended')));
    opening.then(
      (h) => {
        fh = h;
        pump();
      },
      (err: Error) => {
        failure = err;
        response.destroy();
        finish();
      },
    );
  });
}

/** Bodies at least this large (plain HTTP, Content-Length) take rawDownload. */
const RAW_MIN_BYTES = 32 << 20;
const RAW_READ_BYTES = 1 << 20;
const RAW_SLAB_BYTES = 4 << 20;
const RAW_SLABS = 4;

/**
 * One GET over a bare socket (Connection: close), headers parsed here, the body read into one
 * reused buffer and written from a few 4 MB slabs at explicit offsets (at most RAW_SLABS in
 * flight), with periodic write-back and one fsync: about 17 MB of memory whatever the size.
 */
// eslint-disable-next-line max-lines-per-function -- one socket's headers, body slabs and write-back share state; split, it would be passed around
async function rawDownload(u: URL, partPath: string, have: number, opts: DownloadOptions): Promise<DownloadResult> {
  const readBuf = Buffer.allocUnsafe(RAW_READ_BYTES);
  const free: Buffer[] = Array.from({ length: RAW_SLABS }, () => Buffer.allocUnsafe(RAW_SLAB_BYTES));
  let slab: Buffer | null = free.pop()!;
  let slabLen = 0;
  let fh: FileHandle | null = null;
  let pos = 0;
  let received = 0;
  let length = NaN;
  let resumed = false;
  let contentType: string | undefined;
  let head: Buffer | null = Buffer.alloc(0);
  let failure: Error | null = null;
  let writes = 0;
  let syncing: Promise<void> | null = null;
  let syncedAt = 0;
  const drained: (() => void)[] = [];
  const sock = netConnect({
    host: u.hostname,
    port: Number(u.port || 80),
    onread: { buffer: readBuf, callback: (n: number, b: Uint8Array) => onRead(n, b as Buffer) },
  } as NetConnectOpts);
  sock.setTimeout(opts.timeoutMs ?? 30_000, () =>
    sock.destroy(new Error('the result server sent no data for too long')),
  );
  const onAbort = () => sock.destroy(new Error('aborted'));
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const flushSlab = () => {
    if (!slab || slabLen === 0 || !fh) return;
    const buf = slab;
    const len = slabLen;
    const at = pos;
    pos += len;
    slab = free.pop() ?? null;
    slabLen = 0;
    writes++;
    void fh
      .write(buf, 0, len, at)
      .then(
        () => {
          if (!syncing && pos - syncedAt >= SYNC_EVERY_BYTES) {
            const mark = pos;
            syncing = fh!
              .datasync()
              .then(
                () => void (syncedAt = mark),
                () => undefined,
              )
              .finally(() => (syncing = null));
          }
        },
        (err: Error) => {
          failure ??= err;
          sock.destroy(err);
        },
      )
      .finally(() => {
        writes--;
        if (!slab) slab = buf;
        else if (free.length < RAW_SLABS) free.push(buf);
        if (sock.isPaused() && fh && writes < RAW_SLABS) sock.resume();
        if (writes === 0) drained.splice(0).forEach((f) => f());
      });
  };
  const take = (b: Buffer) => {
    received += b.length;
    opts.onBytes?.(b.length);
    let off = 0;
    while (off < b.length) {
      if (!slab) {
        // Every slab is being written: one more for the rest of this read, and stop reading.
        slab = Buffer.allocUnsafe(RAW_SLAB_BYTES);
        sock.pause();
      }
      const n = Math.min(b.length - off, RAW_SLAB_BYTES - slabLen);
      b.copy(slab, slabLen, off, off + n);
      slabLen += n;
      off += n;
      if (slabLen === RAW_SLAB_BYTES) flushSlab();
    }
    if (received >= length) {
      flushSlab();
      sock.end();
      sock.destroySoon();
    }
  };
  let opened: Promise<void> = Promise.resolve();
  const onRead = (n: number, b: Buffer): boolean => {
    if (!head) {
      take(b.subarray(0, n));
      return true;
    }
    head = Buffer.concat([head, b.subarray(0, n)]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) {
      if (head.length > 64 * 1024)
        sock.destroy(
          new TransientDownloadError("the result server's answer could not be read (its headers are too large)"),
        );
      return true;
    }
    const lines = head.subarray(0, end).toString('latin1').split('\r\n');
    const rest = Buffer.from(head.subarray(end + 4));
    head = null;
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0])?.[1] ?? 0);
    const headers = new Map(
      lines.slice(1).map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
    );
    contentType = headers.get('content-type');
    length = Number(headers.get('content-length') ?? NaN);
    if (status === 410 || status === 403 || status === 404) failure = new ExpiredUrlError(status);
    else if (status !== 200 && status !== 206) failure = badAnswer(status);
    else if (!Number.isFinite(length) || headers.has('transfer-encoding'))
      failure = new UnmeasuredAnswer(`HTTP ${status} without a length`);
    if (failure) {
      sock.destroy();
      return false;
    }
    resumed = status === 206 && have > 0;
    sock.pause();
    opened = open(partPath, resumed ? 'a' : 'w').then(
      (f) => {
        fh = f;
        pos = resumed ? have : 0;
        sock.resume();
        if (rest.length) take(rest);
        else if (length === 0) sock.end();
      },
      (err: Error) => {
        failure = err;
        sock.destroy(err);
      },
    );
    return true;
  };
  try {
    await new Promise<void>((resolve, reject) => {
      sock.on('connect', () =>
        sock.write(
          `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUser-Agent: MediaDesk/0.1\r\nConnection: close\r\n${have > 0 ? `Range: bytes=${have}-\r\n` : ''}\r\n`,
        ),
      );
      sock.on('error', (err) => reject(err));
      sock.on('close', () => resolve());
    });
  } catch (err) {
    failure ??= err as Error;
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
  }
  await opened;
  flushSlab();
  while (writes > 0) await new Promise<void>((r) => drained.push(r));
  await syncing;
  try {
    if (failure instanceof ExpiredUrlError || failure instanceof UnmeasuredAnswer) throw failure;
    if (failure && opts.signal?.aborted) throw failure;
    if (failure instanceof TransientDownloadError) throw failure;
    if (failure) throw interrupted(received, failure, partPath);
    if (received < length) throw truncated(received, length);
    await (fh as FileHandle | null)?.sync();
  } finally {
    await (fh as FileHandle | null)?.close().catch(() => undefined);
  }
  return { bytes: (resumed ? have : 0) + received, contentType, resumed };
}

/** Buffered ahead of the disk: large writes, fewer pauses of the socket; memory stays bounded. */
const WRITE_BUFFER_BYTES = 8 << 20;
const SYNC_EVERY_BYTES = 64 << 20;

function headerOf(r: IncomingMessage, name: string): string | undefined {
  const v = r.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Writes a small text result into a part file, flushed, with the same rename step as downloads. */
async function writeDataUri(uri: string, partPath: string): Promise<DownloadResult> {
  const m = /^data:([^;,]+)?(;base64)?,(.*)$/s.exec(uri);
  if (!m) throw new Error('the result is a data URI that cannot be read');
  const bytes = m[2] ? Buffer.from(m[3], 'base64') : Buffer.from(decodeURIComponent(m[3]));
  const fh = await open(partPath, 'w');
  try {
    await fh.writeFile(bytes);
    await fh.sync();
  } finally {
    await fh.close();
  }
  return { bytes: bytes.length, contentType: m[1], resumed: false };
}

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
 * Puts a finished part at `finalPath` without replacing a file (a hard link fails with EEXIST where
 * a rename overwrites); false on collision. The part stays until the caller records the output, so
 * a crash in between is detectable (part and final share an inode).
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
  const [x, y] = await Promise.all([statOrNull(a), statOrNull(b)]);
  return !!x && !!y && x.ino === y.ino && x.dev === y.dev;
}

/** Where one of a result's parts was already linked into place by an earlier run, if anywhere. */
export async function placedAs(parts: string[], base: string): Promise<string | null> {
  const there: string[] = [];
  for (const p of parts) if (await exists(p)) there.push(p);
  if (!there.length) return null;
  for (let k = 1; ; k++) {
    const candidate = withCollisionSuffix(base, k);
    if (!(await exists(candidate))) return null;
    for (const p of there) if (await sameFile(p, candidate)) return candidate;
  }
}

export const removeQuietly = (p: string) => unlink(p).catch(() => undefined);
export const exists = async (p: string) => (await statOrNull(p)) !== null;
