import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import got, { HTTPError, RequestError, type Got, type RetryObject } from 'got';

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
/** Errors after which the server may or may not have processed the request. */
const AMBIGUOUS_CODES = ['ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ERR_GOT_REQUEST_ERROR', 'ECONNABORTED'];

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

export class ApiClient {
  private readonly target: () => ApiTarget | Promise<ApiTarget>;
  /** One got instance per retry policy, built once: merging options per request costs allocations at queue speed. */
  private readonly reads: Got;
  private readonly creates: Got;
  private readonly opts: Required<Omit<ClientOptions, 'onAttempt' | 'userAgent'>> & Pick<ClientOptions, 'onAttempt'>;

  constructor(target: () => ApiTarget | Promise<ApiTarget>, options: ClientOptions = {}) {
    this.target = target;
    this.opts = { retries: options.retries ?? 4, timeoutMs: options.timeoutMs ?? 30_000, maxDelayMs: options.maxDelayMs ?? 30_000, onAttempt: options.onAttempt };
    const maxDelayMs = this.opts.maxDelayMs;
    const base = got.extend({
      timeout: { request: this.opts.timeoutMs },
      agent: KEEP_ALIVE,
      headers: { 'user-agent': options.userAgent ?? 'MediaDesk/0.1', accept: 'application/json' },
      throwHttpErrors: true,
      responseType: 'json',
      retry: {
        limit: this.opts.retries,
        maxRetryAfter: maxDelayMs,
        calculateDelay: ({ attemptCount, error, computedValue }: RetryObject) => {
          if (computedValue === 0) return 0;
          const ra = error instanceof HTTPError ? parseRetryAfter(error.response.headers['retry-after']) : undefined;
          return backoffDelay(attemptCount, ra, maxDelayMs);
        },
      },
      hooks: {
        beforeRequest: [(o) => this.opts.onAttempt?.(String(o.method), new URL(String(o.url)).pathname)],
      },
    });
    this.creates = base.extend({ retry: { methods: ['POST'], statusCodes: [429, 503], errorCodes: NOT_SENT_CODES } });
    this.reads = base.extend({ retry: { methods: ['GET', 'POST'], statusCodes: [408, 429, 500, 502, 503, 504, 521, 522, 524], errorCodes: [...NOT_SENT_CODES, ...AMBIGUOUS_CODES, 'ETIMEDOUT'] } });
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
    try {
      const res = await (o.create ? this.creates : this.reads)<T>(url, {
        method,
        json: o.json,
        body: o.body,
        searchParams: o.searchParams,
        headers: { 'x-service-api-key': apiKey, ...(o.contentType ? { 'content-type': o.contentType } : {}) },
      });
      return res.body;
    } catch (err) {
      throw this.toApiError(err, method, path, o.create);
    }
  }

  private toApiError(err: unknown, method: string, path: string, create: boolean): ApiError {
    if (err instanceof HTTPError) {
      const body = err.response.body as { message?: unknown } | string | undefined;
      const message = typeof body === 'object' && body && typeof body.message === 'string' ? body.message : (err.response.statusMessage ?? 'request failed');
      const status = err.response.statusCode;
      return new ApiError({
        kind: 'http', status, message, invalidParams: toInvalidParams(body), method, path,
        retryAfterSec: parseRetryAfter(err.response.headers['retry-after']),
        // 4xx and 429/503 are rejections; a 500 or gateway error on a create is ambiguous.
        mayHaveReachedServer: create && status >= 500 && status !== 503,
      });
    }
    if (err instanceof RequestError) {
      const code = err.code ?? 'ERR';
      const notSent = NOT_SENT_CODES.includes(code);
      const kind: ApiErrorKind = err.name === 'TimeoutError' ? 'timeout' : err.name === 'ParseError' ? 'parse' : 'network';
      const what = kind === 'timeout' ? 'the server did not answer in time' : kind === 'parse' ? 'the server answered with something that is not JSON' : `network error (${code})`;
      return new ApiError({ kind, message: what, method, path, mayHaveReachedServer: create && !notSent });
    }
    return new ApiError({ kind: 'network', message: err instanceof Error ? err.message : String(err), method, path, mayHaveReachedServer: create });
  }
}
