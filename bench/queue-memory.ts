/**
 * Memory of a queue of N queued jobs (1,000, 10,000 and 50,000 by default, BENCH_SIZES to change):
 * each N in a fresh process, which queues a folder of N tiny images (startBatch, every pre-flight
 * check) on an engine that runs with the queue paused, so every job stays queued; with
 * BENCH_RUNNING=1 the queue runs against a Sandbox (its own process) for 10 s instead, at the
 * default concurrency, so nearly all of them wait queued while some are sent. Prints the peak
 * RSS over the whole process, the RSS and heap after a few ticks and a GC, and the database's size.
 * BENCH_ENGINE_ROOT: another checkout whose engine is measured (its baseline; it must have stateCounts).
 * Run: node --expose-gc bench/queue-memory.ts
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFAULT_SLUGS } from '../shared/catalogue/index.ts';
import { DEFAULT_SETTINGS } from '../shared/settings.ts';
import { childSandbox, loadavg1, machine, mb, rssSampler, TINY_PNG } from './engine-common.ts';

const ROOT = resolve(process.env.BENCH_ENGINE_ROOT ?? resolve(import.meta.dirname, '..'));

async function child(n: number, work: string, url: string | undefined): Promise<void> {
  const { openEngine } = (await import(
    pathToFileURL(join(ROOT, 'electron/core/engine/open.ts')).href
  )) as typeof import('../electron/core/engine/open.ts');
  const input = join(work, 'in');
  mkdirSync(input, { recursive: true });
  for (let i = 0; i < n; i++) writeFileSync(join(input, `i${i}.png`), TINY_PNG);
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
  gc();
  const before = process.memoryUsage();
  const rss = rssSampler(20);
  const engine = openEngine({
    home: join(work, 'home'),
    target: async () => ({ baseUrl: url ?? 'http://127.0.0.1:9', apiKey: 'sandbox-owner' }),
    slugs: () => ({ ...DEFAULT_SLUGS }),
    settings: () => DEFAULT_SETTINGS,
  });
  if (!url) engine.pause();
  const r = await engine.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: join(work, 'out') });
  if (r.queued !== n) throw new Error(`queued ${r.queued} of ${n}`);
  engine.start();
  // A few ticks, status reads of the queue as the app makes them and the CLI's progress count (stateCounts), then what stays.
  for (let i = 0; i < (url ? 33 : 5); i++) {
    engine.status();
    engine.stateCounts(r.jobIds);
    await new Promise((res) => setTimeout(res, 300));
  }
  gc();
  const after = process.memoryUsage();
  const peak = rss.peak();
  rss.stop();
  await engine.close();
  const db = statSync(join(work, 'home', 'mediadesk.db')).size;
  process.stdout.write(
    JSON.stringify({
      n,
      peakRss: peak,
      rssAfter: after.rss,
      rssGrowth: after.rss - before.rss,
      heapAfter: after.heapUsed,
      heapGrowth: after.heapUsed - before.heapUsed,
      db,
    }),
  );
}

if (process.argv[2] === '--child') {
  await child(Number(process.argv[3]), process.argv[4], process.argv[5]);
} else {
  const sizes = (process.env.BENCH_SIZES ?? '1000,10000,50000').split(',').map(Number);
  const rows: string[] = [];
  const started = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const load = loadavg1();
  const sb = process.env.BENCH_RUNNING === '1' ? await childSandbox(3000) : null;
  for (const n of sizes) {
    const work = mkdtempSync(join(tmpdir(), 'mediadesk-bench-queue-'));
    try {
      const out = await new Promise<string>((res, rej) => {
        const p = spawn(
          process.execPath,
          ['--expose-gc', import.meta.filename, '--child', String(n), work, ...(sb ? [sb.url] : [])],
          {
            stdio: ['ignore', 'pipe', 'inherit'],
            env: process.env,
          },
        );
        let s = '';
        p.stdout.on('data', (d) => (s += d));
        p.once('exit', (code) => (code === 0 ? res(s) : rej(new Error(`child for ${n} exited ${code}`))));
      });
      const m = JSON.parse(out);
      rows.push(
        `| ${n} | ${mb(m.peakRss)} | ${mb(m.rssAfter)} | ${mb(m.heapAfter)} (${((m.heapGrowth / n) | 0).toLocaleString('en')} B per job) | ${mb(m.db)} |`,
      );
      console.error(rows.at(-1));
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  sb?.close();
  console.log(
    [
      `### Queue memory: N queued jobs (${sb ? 'queue running for 10 s' : 'queue paused'}), engine of ${ROOT}`,
      '',
      '| queued jobs | peak RSS | RSS after GC | heap after GC (growth per job) | mediadesk.db |',
      '|---|---|---|---|---|',
      ...rows,
      '',
      `${started} UTC, load ${load} at start, ${loadavg1()} at end. Machine: ${machine()}`,
    ].join('\n'),
  );
}
