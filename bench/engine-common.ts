import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';

const BIN = resolve(import.meta.dirname, '../bin/mediadesk.js');
const SERVER = resolve(import.meta.dirname, 'sandbox-server.ts');

/**
 * The Sandbox in its own process, so its memory and CPU are not counted as the engine's. With a
 * `renderMode` it runs through bench/sandbox-server.ts (the CLI has no such switch).
 */
export async function childSandbox(
  taskDurationMs: number,
  renderMode?: 'fast' | 'faithful',
): Promise<{ url: string; proc: ChildProcess; close(): void }> {
  const args = renderMode
    ? [SERVER, '--task-duration-ms', String(taskDurationMs), '--render-mode', renderMode]
    : [BIN, 'sandbox', '--port', '0', '--task-duration-ms', String(taskDurationMs)];
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((res, rej) => {
    // A bench must not wait silently for a Sandbox that never comes up.
    const timer = setTimeout(() => {
      proc.kill();
      rej(new Error('the Sandbox child did not say "listening on" within 60 s'));
    }, 60_000);
    createInterface({ input: proc.stdout! }).on('line', (l) => {
      const m = /listening on (http:\/\/\S+)/.exec(l);
      if (m) {
        clearTimeout(timer);
        res(m[1]);
      }
    });
    proc.once('exit', (c) => {
      clearTimeout(timer);
      rej(new Error(`sandbox exited ${c}`));
    });
  });
  return { url, proc, close: () => proc.kill() };
}

/** Samples this process's RSS; `peak()` is the highest seen. */
export function rssSampler(everyMs = 100) {
  let peak = process.memoryUsage.rss();
  const t = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), everyMs);
  return { peak: () => Math.max(peak, process.memoryUsage.rss()), stop: () => clearInterval(t) };
}

export async function control(url: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(
    `${url}/__sandbox/${path}`,
    body === undefined
      ? {}
      : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) },
  );
  return res.json();
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
export function cpuSecondsOf(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** RSS of another process (sampled from /proc), for a child Sandbox: `peak()` and `now()`. */
export function childRssSampler(pid: number, everyMs = 100) {
  const read = () => {
    try {
      return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
    } catch {
      return 0;
    }
  };
  let peak = read();
  const t = setInterval(() => (peak = Math.max(peak, read())), everyMs);
  return { peak: () => Math.max(peak, read()), now: read, stop: () => clearInterval(t) };
}

/**
 * An 8x8 PNG (#345), as sharp made it. A literal rather than sharp in the bench: loading libvips
 * into the measured process would add its code and arenas to the engine's RSS, and the engine's
 * own path (pre-flight reads headers) does not load it.
 */
export const TINY_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAAEUlEQVQImWMwdgnFihiGlgQA5WUzARflJ6YAAAAASUVORK5CYII=',
  'base64',
);

export const loadavg1 = () => loadavg()[0].toFixed(1);

export const mb = (n: number) => `${(n / 1048576).toFixed(0)} MB`;
export const machine = () =>
  `${cpus().length} CPUs (${cpus()[0]?.model.trim()}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Node ${process.version}, ${process.platform}`;
