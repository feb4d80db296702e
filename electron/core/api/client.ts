/* eslint-disable max-lines -- Over 500 lines: the one API client; retries, backoff, error mapping and redaction are read together. */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingHttpHeaders } from 'node:http';
import type { Agent, Dispatcher, interceptors } from 'undici';
import { DEFAULT_KEY_HEADER } from '../../../shared/service-profile.ts';
import { redactJsonText, redactSecrets } from '../../../shared/redact.ts';
import { realClock, type Clock } from '../clock.ts';

/** Where requests go and with which key; read per request so a key change applies at once. */
export interface ApiTarget {
  baseUrl: string;
  apiKey: string;
  /** The header the key travels in; the live service's own when not given. */
  keyHeader?: string;
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
  constructor(init: {
    kind: ApiErrorKind;
    message: string;
    status?: number;
    invalidParams?: InvalidParam[];
    retryAfterSec?: number;
    mayHaveReachedServer: boolean;
    method: string;
    path: string;
  }) {
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
    // "Your request parameters didn't validate.: prompt …" reads as a typo: the fields follow the sentence.
    return fields ? `${base.replace(/\.$/, '')}: ${fields}` : base;
  }
}

/** A network failure in words (the code kept after them, for whoever reports it), never a bare code. */
const NETWORK_WORDS: Record<string, string> = {
  ECONNREFUSED: 'cannot reach the server: it refused the connection',
  ENOTFOUND: 'cannot reach the server: its address was not found',
  EAI_AGAIN: 'cannot reach the server: its address could not be looked up',
  ENETUNREACH: 'cannot reach the server: this machine has no network route to it',
  EHOSTUNREACH: 'cannot reach the server: this machine has no network route to it',
  UND_ERR_CONNECT_TIMEOUT: 'cannot reach the server: the connection did not open in time',
  ECONNRESET: 'the connection closed before an answer came',
  UND_ERR_SOCKET: 'the connection closed before an answer came',
  EPIPE: 'the connection closed while the request was sent',
  ECONNABORTED: 'the connection was aborted',
  ETIMEDOUT: 'the connection timed out',
};
export const networkWords = (code: string) => `${NETWORK_WORDS[code] ?? 'network error'} (${code})`;

/** Network errors that prove the request never left this machine, so even a create may be retried (UND_ERR_CONNECT_TIMEOUT: undici's connect timeout, 10 s, the connection never opened). */
const NOT_SENT_CODES = [
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
];
/** A request error that names no code (rare; got called it ERR_GOT_REQUEST_ERROR and retried reads). */
const CODELESS = 'ERR_REQUEST';
/** undici's own timers: backstops behind the client's deadline (`Attempt`), a timeout all the same. */
const UNDICI_TIMEOUTS = ['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'];
/** Errors after which the server may or may not have processed the request (UND_ERR_SOCKET: undici's "other side closed"). */
const AMBIGUOUS_CODES = [
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
  ...UNDICI_TIMEOUTS,
  CODELESS,
];

export interface ClientOptions {
  /** Retries for safe requests (GET) and for creates rejected before processing (429/503). */
  retries?: number;
  timeoutMs?: number;
  /** The whole call, every attempt and backoff included: past it the call fails as a timeout. */
  deadlineMs?: number;
  /** Upper bound of one backoff delay, and of a Retry-After the client will wait for. */
  maxDelayMs?: number;
  /** Called for each HTTP attempt (including retries): request accounting and benchmarks. */
  onAttempt?: (method: string, path: string) => void;
  userAgent?: string;
  /**
   * Waits for and takes a place in the service's rate windows (Pacer.gate) before each request, so
   * every request of this client is paced, whoever adds it; except inside placeTaken(), whose
   * caller took the place itself (the queue's creates and polls).
   */
  pace?: () => Promise<void>;
  /** What the waits between retries (backoff, Retry-After) are timed on: real time unless a test moves one. */
  clock?: Clock;
}

const placeHeld = new AsyncLocalStorage<true>();
/** Runs `send` with its requests' pacing places already taken by the caller (ClientOptions.pace skips them). */
/**
 * What a failed create means for the work it was for: `wait`, the server provably did not take it
 * (busy, unreachable), so it is sent again; `refused`, it answered a 4xx, nothing was made; else
 * `unknown`: it may have been made and charged, and only the user can decide.
 */
export function createFailure(err: unknown): 'wait' | 'refused' | 'unknown' {
  if (!(err instanceof ApiError)) return 'unknown';
  if (!err.mayHaveReachedServer && (err.status === 429 || err.status === 503 || err.kind !== 'http')) return 'wait';
  return err.kind === 'http' && err.status! >= 400 && err.status! < 500 ? 'refused' : 'unknown';
}

export const placeTaken = <T>(send: () => Promise<T>): Promise<T> => placeHeld.run(true, send);

/** Exponential backoff with full jitter; a server's Retry-After wins when present. */
export function backoffDelay(
  attempt: number,
  retryAfterSec: number | undefined,
  maxDelayMs: number,
  random = Math.random,
): number {
  if (retryAfterSec !== undefined && Number.isFinite(retryAfterSec))
    return Math.min(maxDelayMs, Math.max(0, retryAfterSec * 1000)) + Math.floor(random() * 250);
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

export function toInvalidParams(body: unknown): InvalidParam[] {
  const src = body as { invalid_params?: unknown; problem?: { invalid_params?: unknown } } | null;
  // The schema nests these under `problem`, the example does not (api-spec, Error body): read both.
  const list = src?.invalid_params ?? src?.problem?.invalid_params;
  if (!Array.isArray(list)) return [];
  return list.map((p: { field?: string; name?: string; reason?: string }) => ({
    field: String(p.field ?? p.name ?? ''),
    reason: String(p.reason ?? 'is not valid'),
  }));
}

/** node:http agents of the downloads, which write bodies to disk from node:http responses (downloads/download.ts). */
// process.getBuiltinModule, not `import … from 'node:http'`: the import's ESM facade reads every
// export, which loads Node's bundled undici (~35 ms of each CLI command's start-up) for nothing.
export const KEEP_ALIVE = {
  http: new (process.getBuiltinModule('node:http').Agent)({ keepAlive: true }),
  https: new (process.getBuiltinModule('node:https').Agent)({ keepAlive: true }),
};

/**
 * The API's connections, shared by every ApiClient: kept alive and not capped per origin (the
 * queue's concurrency is the cap). undici rather than got, whose per-request machinery cost ~94 KB
 * per create at queue speed (bench/history/engine-throughput.md, memory round).
 */
let apiAgent: Promise<{ agent: Agent; retry: typeof interceptors.retry }> | undefined;
/**
 * Loaded with the first request, not with the core: `mediadesk jobs list` sends none. Only the Agent
 * and the retry interceptor: undici's index also loads fetch, WebSocket, caches and mocks (109 modules
 * against 24; a one-image `mediadesk run` took 1.06 times the CPU with it). undici-parts.d.ts types both.
 */
const loadApiAgent = () =>
  (apiAgent ??= Promise.all([import('undici/lib/dispatcher/agent.js'), import('undici/lib/interceptor/retry.js')]).then(
    ([{ default: UndiciAgent }, { default: retry }]) => ({ agent: new UndiciAgent(), retry }),
  ));

interface RetryPolicy {
  statusCodes: number[];
  errorCodes: string[];
}
/** Creates: only what proves the server did not process the request. */
const CREATE_RETRY: RetryPolicy = { statusCodes: [429, 503], errorCodes: NOT_SENT_CODES };
/** Reads, queries and uploads are free to repeat. */
const READ_RETRY: RetryPolicy = {
  statusCodes: [408, 429, 500, 502, 503, 504, 521, 522, 524],
  errorCodes: [...NOT_SENT_CODES, ...AMBIGUOUS_CODES],
};
/** Statuses whose Retry-After is a promise about when to come back (the rest only get backoff). */
const RETRY_AFTER_STATUSES = new Set([413, 429, 503]);

type RetryContext = {
  state: { counter: number };
  opts: { retryOptions?: { statusCodes?: number[]; errorCodes?: string[]; maxRetries?: number } };
};

/**
 * The decision handed to undici's retry interceptor. Unlike its built-in one, a Retry-After longer
 * than we wait surfaces at once (the queue backs off), only 413/429/503 are taken at their word,
 * and the backoff has jitter, so creates refused together do not all come back together.
 */
function retryDecision(maxDelayMs: number, clock: Clock) {
  return (err: Error, { state, opts }: RetryContext, cb: (err?: Error | null) => void) => {
    const { statusCodes = [], errorCodes = [], maxRetries = 0 } = opts.retryOptions ?? {};
    const e = err as Error & { statusCode?: number; headers?: IncomingHttpHeaders; code?: string };
    const attempt = state.counter;
    if (attempt > maxRetries) return cb(err);
    let delay: number;
    if (e.statusCode !== undefined) {
      if (!statusCodes.includes(e.statusCode)) return cb(err);
      const ra = RETRY_AFTER_STATUSES.has(e.statusCode) ? parseRetryAfter(e.headers?.['retry-after']) : undefined;
      if (ra !== undefined && ra * 1000 > maxDelayMs) return cb(err);
      delay = backoffDelay(attempt, ra, maxDelayMs);
    } else {
      if (!errorCodes.includes(e.code ?? CODELESS)) return cb(err);
      delay = backoffDelay(attempt, undefined, maxDelayMs);
    }
    // Returned so that undici can cancel the wait if the request is aborted (a real timer; a test clock's waits run out).
    return clock.setTimeout(() => cb(null), delay);
  };
}

/** A call's whole deadline (all its attempts) unless the client or the call sets one. */
export const CALL_DEADLINE_MS = 45_000;
/**
 * Reads whose answer only adds to what is shown (the team's usage behind a price or a report's
 * charges): they give up sooner than a call the work depends on, and never hold up an exit.
 */
export const OPTIONAL_READ_MS = 10_000;

/** OPTIONAL_READ_MS, or MEDIADESK_OPTIONAL_READ_MS when set to a number of ms above 0 (tests shorten it). */
export function optionalReadMs(env: NodeJS.ProcessEnv): number {
  const ms = Number(env.MEDIADESK_OPTIONAL_READ_MS);
  return env.MEDIADESK_OPTIONAL_READ_MS && ms > 0 ? ms : OPTIONAL_READ_MS;
}

/** What one call may set: its own deadline. */
export interface CallOptions {
  deadlineMs?: number;
}

/** The whole exchange (connect, send, receive) took longer than the client's timeout. */
class TimeoutFailure extends Error {
  readonly code = 'ETIMEDOUT';
}

/** The call's whole deadline passed, across its attempts. */
class DeadlineFailure extends Error {
  constructor(ms: number) {
    super(`the server did not answer within ${Math.round(ms / 1000)} s`);
  }
}

/** The client let go of the call before an answer came (abortReads). */
class StoppedFailure extends Error {}

/** A 2xx answer whose body is not JSON. */
class ParseFailure extends Error {}

/** What an answer brings, gathered until it ends: status, headers and the body's chunks. */
class Gathered {
  protected status = 0;
  protected headers: IncomingHttpHeaders = {};
  protected statusMessage: string | undefined;
  private chunks: Buffer[] = [];

  onResponseStart(
    _conn: Dispatcher.DispatchController,
    status: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ) {
    this.status = status;
    this.headers = headers;
    this.statusMessage = statusMessage;
  }

  onResponseData(_conn: Dispatcher.DispatchController, chunk: Buffer) {
    this.chunks.push(chunk);
  }

  /** The whole body (and the chunks let go). */
  protected takeBody(): Buffer {
    const body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    this.chunks = [];
    return body;
  }
}

/**
 * One attempt, between undici's connection and its retry handler: one deadline for the whole
 * exchange (retried, unlike an AbortSignal's abort), and the answer passed up only once complete
 * (undici resumes a broken 2xx body with a Range request, which a JSON API cannot answer).
 */
class Attempt extends Gathered implements Dispatcher.DispatchHandler, Dispatcher.DispatchController {
  private readonly retryHandler: Dispatcher.DispatchHandler;
  private readonly timer: NodeJS.Timeout;
  private conn: Dispatcher.DispatchController | null = null;
  /** The retry handler has this attempt's outcome; whatever the connection reports later is dropped. */
  private settled = false;
  private abortedBy: Error | null = null;
  rawHeaders = null;
  rawTrailers = null;

  constructor(retryHandler: Dispatcher.DispatchHandler, timeoutMs: number) {
    super();
    this.retryHandler = retryHandler;
    this.timer = setTimeout(() => this.fail(new TimeoutFailure('the server did not answer in time')), timeoutMs);
  }

  get aborted() {
    return this.abortedBy !== null;
  }
  get paused() {
    return false;
  }
  get reason() {
    return this.abortedBy;
  }
  // The body is whole before anything above sees it: the flow control above has nothing to act on.
  pause() {}
  resume() {}
  abort(reason: Error) {
    this.abortedBy = reason;
    this.conn?.abort(reason);
  }

  onRequestStart(conn: Dispatcher.DispatchController, context: unknown) {
    this.conn = conn;
    // The deadline passed while the request waited for a connection, and was reported then.
    if (this.settled) return conn.abort(new TimeoutFailure('the server did not answer in time'));
    this.retryHandler.onRequestStart?.(this, context);
  }

  onResponseEnd(_conn: Dispatcher.DispatchController, trailers: IncomingHttpHeaders) {
    if (this.settled || this.status < 200) return;
    this.settled = true;
    clearTimeout(this.timer);
    const body = this.takeBody();
    this.retryHandler.onResponseStart?.(this, this.status, this.headers, this.statusMessage);
    if (body.length > 0) this.retryHandler.onResponseData?.(this, body);
    this.retryHandler.onResponseEnd?.(this, trailers);
  }

  onResponseError(_conn: Dispatcher.DispatchController | undefined, err: Error) {
    this.fail(err);
  }

  private fail(err: Error) {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.takeBody();
    this.conn?.abort(err);
    this.retryHandler.onResponseError?.(this, err);
  }
}

/** One `Attempt` per dispatch, that is per try of the retry interceptor composed above it. */
function attempts(timeoutMs: number, onAttempt: ClientOptions['onAttempt']): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (opts, handler) => {
    if (onAttempt) {
      const q = opts.path.indexOf('?');
      onAttempt(opts.method, q < 0 ? opts.path : opts.path.slice(0, q));
    }
    return dispatch(opts, new Attempt(handler, timeoutMs));
  };
}

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

/**
 * The final answer, whole, as the retry interceptor passes it on. Not undici's `request()`: its
 * stream per answer (a BodyReadable, read back with `.text()`) took the engine bench's peak RSS
 * from 222 to 310-322 MB at 10,000 jobs (bench/history/engine-throughput.md, undici round).
 */
class Collect extends Gathered implements Dispatcher.DispatchHandler {
  /** The complete answer, or why there is none. */
  readonly answer: Promise<Answer>;
  private resolve!: (a: Answer) => void;
  private reject!: (err: Error) => void;
  private conn: Dispatcher.DispatchController | null = null;
  private gaveUp: Error | null = null;
  constructor() {
    super();
    this.answer = new Promise<Answer>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }
  get givenUp(): boolean {
    return this.gaveUp !== null;
  }
  onRequestStart(conn: Dispatcher.DispatchController) {
    this.conn = conn;
    // Given up while the attempt waited for a connection: it goes no further.
    if (this.gaveUp) conn.abort(this.gaveUp);
  }
  /** Ends the call now (its deadline, or the client letting go): the caller gets `err`, the connection is let go. */
  giveUp(err: Error) {
    if (this.gaveUp) return;
    this.gaveUp = err;
    this.conn?.abort(err);
    this.reject(err);
  }
  onResponseEnd() {
    const text = this.takeBody().toString('utf8');
    this.resolve({ status: this.status, statusMessage: this.statusMessage, headers: this.headers, text });
  }
  onResponseError(_c: Dispatcher.DispatchController, err: Error) {
    this.reject(err);
  }
}

interface SendRequest {
  json?: unknown;
  /** A body sent form-encoded instead of as JSON. */
  form?: Record<string, string>;
  searchParams?: URLSearchParams | Record<string, string | number>;
  create: boolean;
  deadlineMs?: number;
}

export class ApiClient {
  private readonly target: () => ApiTarget | Promise<ApiTarget>;
  private readonly userAgent: string;
  /** The shared agent with this client's deadline and retry rules; creates and the rest differ in what may be repeated. */
  private readonly dispatchers: () => Promise<{ forCreate: Dispatcher; forRead: Dispatcher }>;
  private readonly pace: ClientOptions['pace'];
  private readonly deadlineMs: number;
  /** Reads in flight, so that close can let them go (creates are always answered or timed out). */
  private readonly reads = new Set<Collect>();
  private sending = 0;

  constructor(target: () => ApiTarget | Promise<ApiTarget>, options: ClientOptions = {}) {
    this.target = target;
    this.pace = options.pace;
    this.userAgent = options.userAgent ?? 'MediaDesk/0.1';
    const timeoutMs = options.timeoutMs ?? 30_000;
    const maxDelayMs = options.maxDelayMs ?? 30_000;
    this.deadlineMs = options.deadlineMs ?? Math.max(CALL_DEADLINE_MS, timeoutMs);
    let built: Promise<{ forCreate: Dispatcher; forRead: Dispatcher }> | undefined;
    this.dispatchers = () =>
      (built ??= loadApiAgent().then(({ agent, retry }) => {
        const dispatcherWith = (policy: RetryPolicy) =>
          agent.compose(
            attempts(timeoutMs, options.onAttempt),
            // throwOnError off: the last answer, retried or not, comes through with its body (the server's message).
            retry({
              ...policy,
              maxRetries: options.retries ?? 4,
              throwOnError: false,
              retry: retryDecision(maxDelayMs, options.clock ?? realClock),
            }),
          );
        return { forCreate: dispatcherWith(CREATE_RETRY), forRead: dispatcherWith(READ_RETRY) };
      }));
  }

  /** Where requests go now (the target's base URL). */
  async baseUrl(): Promise<string> {
    return (await this.target()).baseUrl;
  }

  async get<T>(
    path: string,
    searchParams?: URLSearchParams | Record<string, string | number>,
    call: CallOptions = {},
  ): Promise<T> {
    return this.send<T>('GET', path, { searchParams, create: false, ...call });
  }

  /**
   * A create (POST that starts paid work). Retried only when the server proved it did not process
   * it (429, 503) or the connection never opened; anything else surfaces with mayHaveReachedServer.
   */
  async create<T>(path: string, body: unknown): Promise<T> {
    return this.send<T>('POST', path, { json: body, create: true });
  }

  /** A create whose body the service takes form-encoded (background removal); retried as `create` is. */
  async createForm<T>(path: string, fields: Record<string, string>): Promise<T> {
    return this.send<T>('POST', path, { form: fields, create: true });
  }

  /** A POST that is a query, not a purchase (team credit usage): safe to retry. */
  async query<T>(path: string, body: unknown, call: CallOptions = {}): Promise<T> {
    return this.send<T>('POST', path, { json: body, create: false, ...call });
  }

  /**
   * Lets go of every read in flight (they fail as stopped); creates are left to be answered. For
   * the end of a command: a read the result does not wait for must not keep the process alive.
   */
  /** Requests sent (past their pacing) and not yet answered: a test's clock moves only while none is. */
  get inFlight(): number {
    return this.sending;
  }

  abortReads(): void {
    for (const c of this.reads) c.giveUp(new StoppedFailure('stopped before the server answered'));
  }

  /**
   * The bytes of an upload, PUT to the signed URL the service handed out (on its upload host, not
   * the API) with exactly its headers and never the key. Free to repeat, so retried like a read.
   */
  async put(uploadUrl: string, bytes: Buffer, headers: Record<string, string>): Promise<void> {
    const url = new URL(uploadUrl);
    const { apiKey } = await this.target();
    try {
      const { forRead } = await this.dispatchers();
      const collect = new Collect();
      forRead.dispatch(
        { origin: url.origin, path: url.pathname + url.search, method: 'PUT', headers, body: bytes },
        collect,
      );
      const answer = await collect.answer;
      if (answer.status < 200 || answer.status >= 300) throw new StatusFailure(answer);
    } catch (err) {
      // Named by its path only: the query is the URL's signature.
      throw this.toApiError(err, 'PUT', url.pathname, false, apiKey);
    }
  }

  private async send<T>(method: 'GET' | 'POST', path: string, request: SendRequest): Promise<T> {
    if (this.pace && !placeHeld.getStore()) await this.pace();
    this.sending++;
    try {
      return await this.sendPaced<T>(method, path, request);
    } finally {
      this.sending--;
    }
  }

  private async sendPaced<T>(method: 'GET' | 'POST', path: string, request: SendRequest): Promise<T> {
    const collect = new Collect();
    // Registered before the target is known: a read let go meanwhile is never sent.
    if (!request.create) this.reads.add(collect);
    let apiKey = '';
    let answer: Answer;
    let timer: NodeJS.Timeout | undefined;
    let target: ApiTarget;
    try {
      target = await this.target();
    } catch (err) {
      // Not the server's answer (no key, the Sandbox did not start): passed on as it is.
      this.reads.delete(collect);
      throw err;
    }
    try {
      apiKey = target.apiKey;
      const url = new URL(
        path.replace(/^\//, ''),
        target.baseUrl.endsWith('/') ? target.baseUrl : `${target.baseUrl}/`,
      );
      if (request.searchParams) {
        const sp =
          request.searchParams instanceof URLSearchParams
            ? request.searchParams
            : new URLSearchParams(Object.entries(request.searchParams).map(([k, v]) => [k, String(v)]));
        url.search = sp.toString();
      }
      let payload = request.json !== undefined ? JSON.stringify(request.json) : undefined;
      if (request.form !== undefined) payload = new URLSearchParams(request.form).toString();
      const headers: Record<string, string> = {
        'user-agent': this.userAgent,
        accept: 'application/json',
        [target.keyHeader ?? DEFAULT_KEY_HEADER]: apiKey,
      };
      if (payload !== undefined)
        headers['content-type'] = request.form ? 'application/x-www-form-urlencoded' : 'application/json';
      const { forCreate, forRead } = await this.dispatchers();
      if (!collect.givenUp) {
        const deadlineMs = request.deadlineMs ?? this.deadlineMs;
        timer = setTimeout(() => collect.giveUp(new DeadlineFailure(deadlineMs)), deadlineMs);
        (request.create ? forCreate : forRead).dispatch(
          { origin: url.origin, path: url.pathname + url.search, method, headers, body: payload },
          collect,
        );
      }
      answer = await collect.answer;
    } catch (err) {
      throw this.toApiError(err, method, path, request.create, apiKey);
    } finally {
      clearTimeout(timer);
      this.reads.delete(collect);
    }
    if (answer.status < 200 || answer.status >= 300)
      throw this.toApiError(new StatusFailure(answer), method, path, request.create, apiKey);
    try {
      // Every answer, not only errors: a 2xx body may echo the key (a failed task's error, a result URL).
      return parseBody({ ...answer, text: redactJsonText(answer.text, [apiKey]) }) as T;
    } catch (err) {
      throw this.toApiError(err, method, path, request.create, apiKey);
    }
  }

  private toApiError(err: unknown, method: string, path: string, create: boolean, apiKey: string): ApiError {
    if (err instanceof StatusFailure) {
      const a = err.answer;
      const body = errorBody(a.text);
      // What the server says is redacted once, here: every path an error takes starts from it.
      const clean = (t: string) => redactSecrets(t, [apiKey]);
      const message = clean(
        typeof body === 'object' && body && typeof body.message === 'string'
          ? body.message
          : a.statusMessage || 'request failed',
      );
      const invalidParams = toInvalidParams(body).map((p) => ({ field: clean(p.field), reason: clean(p.reason) }));
      return new ApiError({
        kind: 'http',
        status: a.status,
        message,
        invalidParams,
        method,
        path,
        retryAfterSec: parseRetryAfter(a.headers['retry-after']),
        // 4xx and 429/503 are rejections; a 500 or gateway error on a create is ambiguous.
        mayHaveReachedServer: create && a.status >= 500 && a.status !== 503,
      });
    }
    const code = (err as NodeJS.ErrnoException | null)?.code;
    if (err instanceof DeadlineFailure || err instanceof StoppedFailure)
      return new ApiError({ kind: 'timeout', message: err.message, method, path, mayHaveReachedServer: create });
    if (err instanceof TimeoutFailure || (code && UNDICI_TIMEOUTS.includes(code)))
      return new ApiError({
        kind: 'timeout',
        message: 'the server did not answer in time',
        method,
        path,
        mayHaveReachedServer: create,
      });
    if (err instanceof ParseFailure)
      return new ApiError({
        kind: 'parse',
        message: 'the server answered with something that is not JSON',
        method,
        path,
        mayHaveReachedServer: create,
      });
    if (code)
      return new ApiError({
        kind: 'network',
        message: networkWords(code),
        method,
        path,
        mayHaveReachedServer: create && !NOT_SENT_CODES.includes(code),
      });
    return new ApiError({
      kind: 'network',
      message: err instanceof Error ? err.message : String(err),
      method,
      path,
      mayHaveReachedServer: create,
    });
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
