/**
 * (c) A 1 GB download from the Sandbox (separate process, loopback): curl -o, a bare node:http GET
 * to nowhere (the Node ceiling), and the engine's downloadToPart (to a .part file, flushed to disk
 * before it resolves), each in its own process, alternating, BENCH_ROUNDS rounds; medians.
 * Run: node bench/engine-download.ts
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { childSandbox, control, loadavg1, machine, mb } from './engine-common.ts';

const BYTES = Number(process.env.BENCH_BYTES ?? 1024 ** 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WORKER = resolve(import.meta.dirname, 'engine-download-worker.ts');
const sb = await childSandbox(1000);
const work = mkdtempSync(join(tmpdir(), 'mediadesk-bench-dl-'));
type Method = 'curl' | 'raw' | 'engine';
const runs: Record<Method, { mbs: number; peak?: number; before?: number }[]> = { curl: [], raw: [], engine: [] };
const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
try {
  const { url } = await control(sb.url, 'blobs', { bytes: BYTES });
  const load0 = loadavg1();
  const order: Method[] = ['curl', 'raw', 'engine'];
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < order.length; k++) {
      const m = order[(round + k) % order.length];
      const file = join(work, `${m}${round}.part`);
      if (m === 'curl') {
        const t0 = performance.now();
        execFileSync('curl', ['-s', '-f', '-o', file, url]);
        const s = (performance.now() - t0) / 1000;
        if (statSync(file).size !== BYTES) throw new Error('curl: size mismatch');
        runs.curl.push({ mbs: BYTES / 1048576 / s });
      } else {
        const out = JSON.parse(execFileSync(process.execPath, [WORKER, m, url, file], { encoding: 'utf8' }));
        if (out.bytes !== BYTES) throw new Error(`${m}: ${out.bytes} bytes`);
        runs[m].push({ mbs: BYTES / 1048576 / out.seconds, peak: out.peakRss, before: out.rssBefore });
      }
      rmSync(file, { force: true });
    }
  }
  const load1 = loadavg1();
  const med = (m: Method) => median(runs[m].map((r) => r.mbs));
  const row = (m: Method, label: string) =>
    `| ${label} | ${med(m).toFixed(0)} MB/s | ${runs[m].map((r) => r.mbs.toFixed(0)).join(' / ')} | ${((med(m) / med('curl')) * 100).toFixed(0)}% | ${runs[m][0].peak ? `${mb(median(runs[m].map((r) => r.peak!)))} (${mb(median(runs[m].map((r) => r.before!)))} at start)` : '-'} |`;
  console.log(
    [
      `### (c) ${mb(BYTES)} download, Sandbox in a separate process (loopback), ${ROUNDS} rounds alternating`,
      '',
      '| client | median | each round | of curl (medians) | peak RSS of its process (median) |',
      '|---|---|---|---|---|',
      row('curl', 'curl -o file'),
      row('raw', 'bare node:http GET, bytes dropped'),
      row('engine', 'engine downloadToPart (.part, flushed)'),
      '',
      `Load average (1 min) at start / end: ${load0} / ${load1}. Machine: ${machine()}`,
    ].join('\n'),
  );
} finally {
  sb.close();
  rmSync(work, { recursive: true, force: true });
}
