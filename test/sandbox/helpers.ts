import sharp from 'sharp';
import { until as waitUntil } from '../wait.ts';
import { startSandbox, type RunningSandbox, type StartSandboxOptions } from '../../electron/sandbox/index.ts';

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** A client over real HTTP, as the app's engine would talk to the Sandbox. */
export function client(sb: RunningSandbox) {
  async function call(
    method: string,
    path: string,
    opts: { key?: string | null; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = { ...opts.headers };
    const key = opts.key === undefined ? 'sandbox-owner' : opts.key;
    if (key !== null) headers['x-magnific-api-key'] = key;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(path.startsWith('http') ? path : sb.url + path, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
    const text = await res.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: res.status, headers: res.headers, body, text };
  }
  return {
    get: (path: string, key?: string | null) => call('GET', path, { key }),
    post: (path: string, body: unknown, key?: string | null) => call('POST', path, { key, body }),
    call,
    control: (path: string, body?: unknown) =>
      call(body === undefined ? 'GET' : 'POST', `/__sandbox/${path}`, { key: null, body }),
  };
}

export async function bytesOf(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const res = await fetch(url, { headers });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** A small real PNG: left half one colour, right half another, so transforms are visible. */
export async function testPng(width = 64, height = 48): Promise<Buffer> {
  const left = await sharp({ create: { width: width / 2, height, channels: 3, background: '#d02020' } })
    .png()
    .toBuffer();
  return sharp({ create: { width, height, channels: 3, background: '#2040d0' } })
    .composite([{ input: left, left: 0, top: 0 }])
    .png()
    .toBuffer();
}

/** A controllable clock: tests advance it instead of sleeping. */
export function fakeClock(start = Date.parse('2026-03-15T12:00:00Z')) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms), set: (ms: number) => void (t = ms) };
}

export async function start(opts: StartSandboxOptions = {}) {
  const sb = await startSandbox({ port: 0, ...opts });
  return { sb, api: client(sb) };
}

/** Resolves with `fn`'s first truthy answer, failing after `timeoutMs`. */
export const until = <T>(fn: () => Promise<T | undefined | false>, timeoutMs = 5000): Promise<T> =>
  waitUntil(fn, { timeout: timeoutMs, interval: 20 }) as Promise<T>;
