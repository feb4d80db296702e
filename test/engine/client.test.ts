import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient, ApiError } from '../../electron/core/api/client.ts';
import { TestClock } from '../clock.ts';

/** A scripted server: each request takes the next answer of `script` (the last one repeats). */
type Step = (req: IncomingMessage, body: string, res: ServerResponse) => void;
let server: Server;
let url: string;
let script: Step[] = [];
let seen: { method: string; path: string; headers: IncomingMessage['headers']; body: string }[] = [];

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Step =>
  (_req, _b, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method!, path: req.url!, headers: req.headers, body });
      (script[Math.min(seen.length - 1, script.length - 1)] ?? json(200, {}))(req, body, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
// The retries' waits run on a clock that jumps to each one: none costs real time, and each is measured.
let clock: TestClock;
let stopClock: () => void;
beforeEach(() => {
  script = [];
  seen = [];
  clock = new TestClock();
  stopClock = clock.autoAdvance(() => true);
});
afterEach(() => stopClock());
/** Clock time a call took: the waits between its attempts. */
const waited = async (call: Promise<unknown>) => {
  const t0 = clock.now();
  await call.catch(() => undefined);
  return clock.now() - t0;
};

const client = (o: ConstructorParameters<typeof ApiClient>[1] = {}) =>
  new ApiClient(() => ({ baseUrl: url, apiKey: 'key-1' }), { maxDelayMs: 2000, clock, ...o });
const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a failure');
    },
    (err: unknown) => err as ApiError,
  );

describe('API client', () => {
  it('sends JSON with the key, reads JSON, and puts searchParams in the query', async () => {
    script = [json(200, { data: { ok: 1 } })];
    const attempts: string[] = [];
    const c = client({ onAttempt: (m, p) => attempts.push(`${m} ${p}`) });
    expect(await c.create('/v1/things', { a: 'é' })).toEqual({ data: { ok: 1 } });
    expect(seen[0]).toMatchObject({ method: 'POST', path: '/v1/things', body: '{"a":"é"}' });
    expect(seen[0].headers).toMatchObject({
      'x-magnific-api-key': 'key-1',
      'content-type': 'application/json',
      accept: 'application/json',
    });
    await c.get('/v1/list', { page: 2, per_page: 100 });
    expect(seen[1].path).toBe('/v1/list?page=2&per_page=100');
    expect(attempts).toEqual(['POST /v1/things', 'GET /v1/list']);
  });

  it("sends the key in the header the target names (the legacy host's own)", async () => {
    script = [json(200, { data: {} })];
    await new ApiClient(() => ({ baseUrl: url, apiKey: 'key-2', keyHeader: 'x-freepik-api-key' })).get('/v1/ai/loras');
    expect(seen[0].headers['x-freepik-api-key']).toBe('key-2');
    expect(seen[0].headers['x-magnific-api-key']).toBeUndefined();
  });

  it("reads a 400's invalid_params where the description's example puts them (top level) and where its schema does (under problem)", async () => {
    const params = [{ name: 'scale_factor', reason: 'must be at most 16' }];
    script = [
      json(
        400,
        { message: "Your request parameters didn't validate.", invalid_params: params },
        { 'content-type': 'application/problem+json' },
      ),
      json(
        400,
        { problem: { message: "Your request parameters didn't validate.", invalid_params: params } },
        { 'content-type': 'application/problem+json' },
      ),
    ];
    for (let i = 0; i < 2; i++) {
      const err = await failure(client().create('/v1/ai/image-upscaler-precision-v2', {}));
      expect(err.invalidParams).toEqual([{ field: 'scale_factor', reason: 'must be at most 16' }]);
    }
  });

  it('a create rejected with 429 is retried after Retry-After; a 500 on a create is not retried and may have reached the server', async () => {
    script = [json(429, { message: 'slow down' }, { 'retry-after': '1' }), json(201, { data: { id: 'x' } })];
    const created = client().create('/v1/c', {});
    // The Retry-After's second, plus at most 250 ms of jitter.
    const w = await waited(created);
    expect([w >= 1000, w < 1250]).toEqual([true, true]);
    expect(await created).toEqual({ data: { id: 'x' } });
    expect(seen).toHaveLength(2);
    seen = [];
    script = [json(500, { message: 'boom', invalid_params: [{ field: 'a', reason: 'bad' }] })];
    const err = await failure(client().create('/v1/c', {}));
    expect(seen).toHaveLength(1);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({
      kind: 'http',
      status: 500,
      message: 'boom',
      mayHaveReachedServer: true,
      invalidParams: [{ field: 'a', reason: 'bad' }],
    });
  });

  it('a Retry-After longer than the client will wait surfaces at once, with the wait', async () => {
    script = [json(429, { message: 'later' }, { 'retry-after': '120' })];
    const err = await failure(client().get('/v1/x'));
    expect(seen).toHaveLength(1);
    expect(err).toMatchObject({ kind: 'http', status: 429, retryAfterSec: 120, mayHaveReachedServer: false });
  });

  it('reads are retried on 5xx up to the limit; a 4xx is not retried', async () => {
    script = [json(502, {}), json(503, {}), json(200, { fine: true })];
    const read = client().get('/v1/x');
    // Two backoffs of at least 50 ms each, the second under its cap of 1 s.
    const w = await waited(read);
    expect([w >= 100, w < 500 + 1000]).toEqual([true, true]);
    expect(await read).toEqual({ fine: true });
    expect(seen).toHaveLength(3);
    seen = [];
    script = [json(500, {})];
    expect(await failure(client({ retries: 2 }).get('/v1/x'))).toMatchObject({ kind: 'http', status: 500 });
    expect(seen).toHaveLength(3);
    seen = [];
    script = [json(404, { message: 'no such task' })];
    expect(await failure(client().get('/v1/x'))).toMatchObject({ kind: 'http', status: 404, message: 'no such task' });
    expect(seen).toHaveLength(1);
  });

  it('a timed-out create is ambiguous and not repeated; a 2xx that is not JSON is a parse error', async () => {
    script = [() => undefined];
    const err = await failure(client({ timeoutMs: 200 }).create('/v1/c', {}));
    expect(err).toMatchObject({ kind: 'timeout', mayHaveReachedServer: true });
    expect(seen).toHaveLength(1);
    seen = [];
    script = [(_q, _b, res) => res.end('<html>')];
    expect(await failure(client().get('/v1/x'))).toMatchObject({ kind: 'parse' });
  });

  it('a read that times out is sent again; a 2xx body broken off midway is sent again whole, not resumed', async () => {
    script = [() => undefined, json(200, { fine: 1 })];
    expect(await client({ timeoutMs: 200 }).get('/v1/x')).toEqual({ fine: 1 });
    expect(seen).toHaveLength(2);
    seen = [];
    script = [
      (_q, _b, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '40' });
        res.write('{"fine":');
        setTimeout(() => res.socket?.destroy(), 20);
      },
      json(200, { fine: 2 }),
    ];
    expect(await client().get('/v1/x')).toEqual({ fine: 2 });
    expect(seen).toHaveLength(2);
    expect(seen[1].headers.range).toBeUndefined();
  });

  it('a Retry-After on a 500 is no promise: the read backs off instead of waiting it out or giving up', async () => {
    script = [json(500, {}, { 'retry-after': '120' }), json(200, { fine: true })];
    const read = client().get('/v1/x');
    // A backoff (at least 50 ms, within the first cap of 500 ms), not the 120 s it asked for.
    const w = await waited(read);
    expect([w >= 50, w < 500]).toEqual([true, true]);
    expect(await read).toEqual({ fine: true });
    expect(seen).toHaveLength(2);
  });

  it('a refused connection proves nothing was sent: even a create may say so', async () => {
    const c = new ApiClient(() => ({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k' }), { retries: 1, maxDelayMs: 100 });
    expect(await failure(c.create('/v1/c', {}))).toMatchObject({
      kind: 'network',
      mayHaveReachedServer: false,
      message: 'cannot reach the server: it refused the connection (ECONNREFUSED)',
    });
  });

  it('a reset after the request was sent makes a create ambiguous', async () => {
    script = [(req) => req.socket.destroy()];
    expect(await failure(client().create('/v1/c', { a: 1 }))).toMatchObject({
      kind: 'network',
      mayHaveReachedServer: true,
    });
    expect(seen).toHaveLength(1);
  });
});
