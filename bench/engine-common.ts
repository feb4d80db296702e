import { spawn, type ChildProcess } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';

const BIN = resolve(import.meta.dirname, '../bin/mediadesk.js');

/** The Sandbox in its own process, so its memory and CPU are not counted as the engine's. */
export async function childSandbox(taskDurationMs: number): Promise<{ url: string; proc: ChildProcess; close(): void }> {
  const proc = spawn(process.execPath, [BIN, 'sandbox', '--port', '0', '--task-duration-ms', String(taskDurationMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((res, rej) => {
    createInterface({ input: proc.stdout! }).on('line', (l) => {
      const m = /listening on (http:\/\/\S+)/.exec(l);
      if (m) res(m[1]);
    });
    proc.once('exit', (c) => rej(new Error(`sandbox exited ${c}`)));
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
  const res = await fetch(`${url}/__sandbox/${path}`, body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return res.json();
}

export const mb = (n: number) => `${(n / 1048576).toFixed(0)} MB`;
export const machine = () => `${cpus().length} CPUs (${cpus()[0]?.model.trim()}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Node ${process.version}, ${process.platform}`;
