/**
 * (c) A 1 GB download from the Sandbox: the engine's streamed download (to a .part file, flushed)
 * beside curl on the same URL in the same run, and the engine process's peak RSS.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { downloadToPart } from '../electron/core/downloads/download.ts';
import { childSandbox, control, machine, mb, rssSampler } from './engine-common.ts';

const BYTES = Number(process.env.BENCH_BYTES ?? 1024 ** 3);
const sb = await childSandbox(1000);
const work = mkdtempSync(join(tmpdir(), 'mediadesk-bench-dl-'));
try {
  const { url } = await control(sb.url, 'blobs', { bytes: BYTES });
  const rssBefore = process.memoryUsage.rss();
  const rows: string[] = [];
  for (let round = 1; round <= 2; round++) {
    const rss = rssSampler(50);
    const t0 = performance.now();
    const r = await downloadToPart(url, join(work, `engine${round}.part`));
    const engineS = (performance.now() - t0) / 1000;
    rss.stop();
    const t1 = performance.now();
    execFileSync('curl', ['-s', '-f', '-o', join(work, `curl${round}.bin`), url]);
    const curlS = (performance.now() - t1) / 1000;
    if (r.bytes !== BYTES || statSync(join(work, `curl${round}.bin`)).size !== BYTES) throw new Error('size mismatch');
    const e = BYTES / 1048576 / engineS;
    const c = BYTES / 1048576 / curlS;
    rows.push(`| ${round} | ${e.toFixed(0)} MB/s | ${c.toFixed(0)} MB/s | ${((e / c) * 100).toFixed(0)}% | ${mb(rss.peak())} (${mb(rssBefore)} before) |`);
    rmSync(join(work, `engine${round}.part`));
    rmSync(join(work, `curl${round}.bin`));
  }
  console.log([`### (c) ${mb(BYTES)} download, Sandbox in a separate process (loopback)`, '', '| round | engine (node:http stream to .part, flushed) | curl -o | engine/curl | engine peak RSS |', '|---|---|---|---|---|', ...rows, '', `Machine: ${machine()}`].join('\n'));
} finally {
  sb.close();
  rmSync(work, { recursive: true, force: true });
}
