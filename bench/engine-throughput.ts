/**
 * (b) 10,000 zero-latency image jobs through the whole engine (create, list poll, download,
 * rename, every state change committed): jobs per second and peak RSS of the engine's process.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { DEFAULT_SLUGS } from '../shared/catalogue/index.ts';
import { DEFAULT_SETTINGS } from '../shared/settings.ts';
import { openEngine } from '../electron/core/engine/open.ts';
import { childSandbox, machine, mb, rssSampler } from './engine-common.ts';

const N = Number(process.env.BENCH_JOBS ?? 10_000);
const sb = await childSandbox(0);
const work = mkdtempSync(join(tmpdir(), 'mediadesk-bench-tp-'));
try {
  const input = join(work, 'in');
  mkdirSync(input);
  const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#345' } }).png().toBuffer();
  for (let i = 0; i < N; i++) writeFileSync(join(input, `i${i}.png`), png);
  const rss = rssSampler();
  const engine = openEngine({
    home: join(work, 'home'), target: async () => ({ baseUrl: sb.url, apiKey: 'sandbox-owner' }), slugs: () => ({ ...DEFAULT_SLUGS }),
    settings: () => DEFAULT_SETTINGS, concurrency: 256, poll: { firstMs: 20, minMs: 20 },
  });
  const t0 = performance.now();
  const r = await engine.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: join(work, 'out') });
  const t1 = performance.now();
  engine.start();
  for (;;) {
    const b = engine.store.batch(r.batch.id)!;
    if (b.finished) break;
    await new Promise((res) => setTimeout(res, 100));
  }
  const t2 = performance.now();
  const b = engine.store.batch(r.batch.id)!;
  await engine.close();
  rss.stop();
  console.log([
    `### (b) ${N.toLocaleString('en')} zero-latency image jobs (concurrency 256, Sandbox in a separate process)`, '',
    '| figure | value |', '|---|---|',
    `| enqueue incl. pre-flight of every input (sharp) | ${((t1 - t0) / 1000).toFixed(1)} s |`,
    `| run (create, poll, download, rename) | ${((t2 - t1) / 1000).toFixed(1)} s |`,
    `| jobs per second (run) | ${(N / ((t2 - t1) / 1000)).toFixed(0)} |`,
    `| done | ${b.counts.done} of ${b.total} |`,
    `| peak RSS of the engine process | ${mb(rss.peak())} |`, '',
    `Machine: ${machine()}`,
  ].join('\n'));
} finally {
  sb.close();
  rmSync(work, { recursive: true, force: true });
}
