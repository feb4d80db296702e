import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** Where requests go and with which key; read per request so a key change applies at once. */
export interface ApiTarget {
  baseUrl: string;
  apiKey: string;
}

export interface InvalidParam {
  field: string;
  reason: string;
}

export type ApiErrorKind = 'http' | 'network' | 'timeout' | 'parse';

/**
 * Every failure of a call, typed. `message` is the server's own message where it gave one, and
 * never contains the API key. `mayHaveReachedServer` tells the queue whether a failed create could
 * still have created (and charged) a task: then it must not be sent again without the user's say.
 */
export class ApiError extends Error {
  readonly kind: ApiErrorKind;
  readonly status?: number;
  readonly invalidParams: InvalidParam[];
  readonly retryAfterSec?: number;
  readonly mayHaveReachedServer: boolean;
  readonly method: string;
  readonly path: string;
  constructor(init: { kind: ApiErrorKind; message: string; status?: number; invalidParams?: InvalidParam[]; retryAfterSec?: number; mayHaveReachedServer: boolean; method: string; path: string }) {
    super(init.message);
    this.name = 'ApiError';
    this.kind = init.kind;
    this.status = init.status;
    this.invalidParams = init.invalidParams ?? [];
    this.retryAfterSec = init.retryAfterSec;
    this.mayHaveReachedServer = init.mayHaveReachedServer;
    this.method = init.method;
    this.path = init.path;
  }

  /** Clear text for people: the server's message, the fields it named, and what to do. */
  describe(): string {
    const fields = this.invalidParams.map((p) => `${p.field} ${p.reason}`).join('; ');
    const base = this.status ? `${this.status} ${this.message}` : this.message;
    return fields ? `${base}: ${fields}` : base;
  }
}

/** Network errors that prove the request never left this machine, so even a create may be retried. */
const NOT_SENT_CODES = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH'];
/** A request error that names no code (rare; got called it ERR_GOT_REQUEST_ERROR and retried reads). */
const CODELESS = 'ERR_REQUEST';
/** Errors after which the server may or may not have processed the request. */
const AMBIGUOUS_CODES = ['ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ECONNABORTED', CODELESS];

export interface ClientOptions {
  /** Retries for safe requests (GET) and for creates rejected before processing (429/503). */
  retries?: number;
  timeoutMs?: number;
  /** Upper bound of one backoff delay, and of a Retry-After the client will wait for. */
  maxDelayMs?: number;
  /** Called for each HTTP attempt (including retries): request accounting and benchmarks. */
  onAttempt?: (method: string, path: string) => void;
  userAgent?: string;
}

/** Exponential backoff with full jitter; a server's Retry-After wins when present. */
export function backoffDelay(attempt: number, retryAfterSec: number | undefined, maxDelayMs: number, random = Math.random): number {
  if (retryAfterSec !== undefined && Number.isFinite(retryAfterSec)) return Math.min(maxDelayMs, Math.max(0, retryAfterSec * 1000)) + Math.floor(random() * 250);
  const cap = Math.min(maxDelayMs, 500 * 2 ** (attempt - 1));
  return Math.max(50, Math.floor(random() * cap));
}

function parseRetryAfter(v: string | string[] | undefined): number | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  if (!s) return undefined;
  const n = Number(s);
  if (Number.isFinite(n)) return n;
  const t = Date.parse(s);
  return Number.isFinite(t) ? Math.max(0, (t - Date.now()) / 1000) : undefined;
}

function toInvalidParams(body: unknown): InvalidParam[] {
  const src = body as { invalid_params?: unknown; problem?: { invalid_params?: unknown } } | null;
  // The schema nests these under `problem`, the example does not (api-spec, Error body): read both.
  const list = src?.invalid_params ?? src?.problem?.invalid_params;
  if (!Array.isArray(list)) return [];
  return list.map((p: { field?: string; name?: string; reason?: string }) => ({ field: String(p.field ?? p.name ?? ''), reason: String(p.reason ?? 'is not valid') }));
}

/** Kept-alive connections: polling and creates at volume should not pay a TCP handshake each. */
export const KEEP_ALIVE = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

/** When an attempt may be repeated: by status (the server answered) or by network error code. */
interface RetryPolicy {
  statusCodes: ReadonlySet<number>;
  errorCodes: ReadonlySet<string>;
}

/** Creates: only what proves the server did not process the request. */
const CREATE_RETRY: RetryPolicy = { statusCodes: new Set([429, 503]), errorCodes: new Set(NOT_SENT_CODES) };
/** Reads, queries and uploads are free to repeat. */
const READ_RETRY: RetryPolicy = { statusCodes: new Set([408, 429, 500, 502, 503, 504, 521, 522, 524]), errorCodes: new Set([...NOT_SENT_CODES, ...AMBIGUOUS_CODES]) };
/** Statuses whose Retry-After is a promise about when to come back (the rest only get backoff). */
const RETRY_AFTER_STATUSES = new Set([413, 429, 503]);

/** A complete answer of the server, whatever its status. */
interface Answer {
  status: number;
  statusMessage: string | undefined;
  headers: IncomingHttpHeaders;
  text: string;
}

/** A non-2xx answer, before it becomes an ApiError. */
class StatusFailure extends Error {
  readonly answer: Answer;
  constructor(answer: Answer) {
    super(`HTTP ${answer.status}`);
    this.answer = answer;
  }
}

/** The whole exchange (connect, send, receive) took longer than the client's timeout. */
class TimeoutFailure extends Error {
  readonly code = 'ETIMEDOUT';
}

/** A 2xx answer whose body is not JSON. */
class ParseFailure extends Error {}

/**
 * One HTTP exchange over the kept-alive agent, body collected as text. Plain node:http rather than
 * got: at queue speed got's per-request machinery (options merged and cloned, a duplex stream,
 * hook and timer wrappers) allocated ~94 KB per create against ~23 KB here, and 10,000 creates at
 * 32 in flight peaked at 286 MB RSS against 117 MB (bench/RESULTS.md, engine (b)). Retries, with
 * the same rules got applied, are ApiClient's.
 */
function exchange(url: URL, method: string, headers: OutgoingHttpHeaders, payload: string | Buffer | undefined, timeoutMs: number): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    const https = url.protocol === 'https:';
    const req = (https ? httpsRequest : httpRequest)(url, { method, headers, agent: https ? KEEP_ALIVE.https : KEEP_ALIVE.http }, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        const text = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, statusMessage: res.statusMessage, headers: res.headers, text });
      });
      res.on('error', fail);
    });
    // One deadline for the whole exchange (got's `timeout.request`), not a socket idle timeout.
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy(new TimeoutFailure('the server did not answer in time'));
    }, timeoutMs);
    function fail(err: Error) {
      clearTimeout(timer);
      // Destroying the request can surface as the response's reset first: the deadline is the cause.
      reject(timedOut && !(err instanceof TimeoutFailure) ? new TimeoutFailure('the server did not answer in time') : err);
    }
    req.on('error', fail);
    req.end(payload);
  });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class ApiClient {
  private readonly target: () => ApiTarget | Promise<ApiTarget>;
  private readonly opts: Required<Omit<ClientOptions, 'onAttempt' | 'userAgent'>> & Pick<ClientOptions, 'onAttempt'>;
  private readonly userAgent: string;

  constructor(target: () => ApiTarget | Promise<ApiTarget>, options: ClientOptions = {}) {
    this.target = target;
    this.opts = { retries: options.retries ?? 4, timeoutMs: options.timeoutMs ?? 30_000, maxDelayMs: options.maxDelayMs ?? 30_000, onAttempt: options.onAttempt };
    this.userAgent = options.userAgent ?? 'MediaDesk/0.1';
  }

  async get<T>(path: string, searchParams?: URLSearchParams | Record<string, string | number>): Promise<T> {
    return this.send<T>('GET', path, { searchParams, create: false });
  }

  /**
   * A create (POST that starts paid work). Retried only when the server proved it did not process
   * it (429, 503) or the connection never opened; anything else surfaces with mayHaveReachedServer.
   */
  async create<T>(path: string, body: unknown): Promise<T> {
    return this.send<T>('POST', path, { json: body, create: true });
  }

  /** A POST that is a query, not a purchase (team credit usage): safe to retry. */
  async query<T>(path: string, body: unknown): Promise<T> {
    return this.send<T>('POST', path, { json: body, create: false });
  }

  /** Raw bytes (Sandbox uploads): free to repeat, so retried like a query. */
  async upload<T>(path: string, bytes: Buffer, contentType: string): Promise<T> {
    return this.send<T>('POST', path, { body: bytes, contentType, create: false });
  }

  private async send<T>(method: 'GET' | 'POST', path: string, o: { json?: unknown; body?: Buffer; contentType?: string; searchParams?: URLSearchParams | Record<string, string | number>; create: boolean }): Promise<T> {
    const { baseUrl, apiKey } = await this.target();
    const url = new URL(path.replace(/^\//, ''), baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
    if (o.searchParams) {
      const sp = o.searchParams instanceof URLSearchParams ? o.searchParams : new URLSearchParams(Object.entries(o.searchParams).map(([k, v]) => [k, String(v)]));
      url.search = sp.toString();
    }
    const payload = o.json !== undefined ? JSON.stringify(o.json) : o.body;
    const headers: OutgoingHttpHeaders = { 'user-agent': this.userAgent, accept: 'application/json', 'x-service-api-key': apiKey };
    if (payload !== undefined) {
      headers['content-type'] = o.json !== undefined ? 'application/json' : (o.contentType ?? 'application/octet-stream');
      headers['content-length'] = Buffer.byteLength(payload);
    }
    const policy = o.create ? CREATE_RETRY : READ_RETRY;
    const { retries, maxDelayMs, timeoutMs, onAttempt } = this.opts;
    for (let attempt = 1; ; attempt++) {
      onAttempt?.(method, url.pathname);
      let delay: number | null = null;
      try {
        const a = await exchange(url, method, headers, payload, timeoutMs);
        if (a.status >= 200 && a.status < 300) return parseBody(a) as T;
        const failure = new StatusFailure(a);
        if (attempt > retries || !policy.statusCodes.has(a.status)) throw failure;
        const ra = parseRetryAfter(a.headers['retry-after']);
        // A server asking for a longer wait than we are willing to give gets its error now.
        if (ra !== undefined && RETRY_AFTER_STATUSES.has(a.status) && ra * 1000 > maxDelayMs) throw failure;
        delay = backoffDelay(attempt, ra, maxDelayMs);
      } catch (err) {
        if (err instanceof StatusFailure || err instanceof ParseFailure || attempt > retries || !policy.errorCodes.has((err as NodeJS.ErrnoException).code ?? CODELESS)) throw this.toApiError(err, method, path, o.create);
        delay = backoffDelay(attempt, undefined, maxDelayMs);
      }
      await sleep(delay);
    }
  }

  private toApiError(err: unknown, method: string, path: string, create: boolean): ApiError {
    if (err instanceof StatusFailure) {
      const a = err.answer;
      const body = errorBody(a.text);
      const message = typeof body === 'object' && body && typeof body.message === 'string' ? body.message : (a.statusMessage ?? 'request failed');
      return new ApiError({
        kind: 'http', status: a.status, message, invalidParams: toInvalidParams(body), method, path,
        retryAfterSec: parseRetryAfter(a.headers['retry-after']),
        // 4xx and 429/503 are rejections; a 500 or gateway error on a create is ambiguous.
        mayHaveReachedServer: create && a.status >= 500 && a.status !== 503,
      });
    }
    if (err instanceof TimeoutFailure) return new ApiError({ kind: 'timeout', message: 'the server did not answer in time', method, path, mayHaveReachedServer: create });
    if (err instanceof ParseFailure) return new ApiError({ kind: 'parse', message: 'the server answered with something that is not JSON', method, path, mayHaveReachedServer: create });
    const code = (err as NodeJS.ErrnoException | null)?.code;
    if (code) return new ApiError({ kind: 'network', message: `network error (${code})`, method, path, mayHaveReachedServer: create && !NOT_SENT_CODES.includes(code) });
    return new ApiError({ kind: 'network', message: err instanceof Error ? err.message : String(err), method, path, mayHaveReachedServer: create });
  }
}

/** A 2xx body as JSON; an empty body is '' (as got gave it), anything else unreadable is a parse failure. */
function parseBody(a: Answer): unknown {
  if (a.text.length === 0) return '';
  try {
    return JSON.parse(a.text);
  } catch {
    throw new ParseFailure('the server answered with something that is not JSON');
  }
}

/** An error body: the server's JSON problem where it sent one, else its text. */
function errorBody(text: string): { message?: unknown } | string | undefined {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as { message?: unknown };
  } catch {
    return text;
  }
}
