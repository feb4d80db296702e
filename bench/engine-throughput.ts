/**
 * (b) 10,000 zero-latency image jobs through the whole engine (create, list poll, download,
 * rename, every state change committed): jobs per second and peak RSS of the engine's process,
 * and the CPU each process used (the box is shared, so CPU per job is the steadier figure).
 * BENCH_RENDER=faithful renders every result for real; the default `fast` serves a fixed tiny image
 * so the engine is measured, not libvips. BENCH_PACED=1 paces every create and poll through the
 * limiter with rates it never reaches, its 1 s windows holding about as many rows as the service's
 * 2-minute window does: the limiter's overhead through the real submit and poll paths.
 * Metadata and provenance are off unless BENCH_METADATA=on: bench/provenance.ts measures their cost.
 * Run: node bench/engine-throughput.ts
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PLAN_TIERS } from '../shared/service-limits.ts';
import { DEFAULT_SETTINGS } from '../shared/settings.ts';
import { benchEngine } from './bench-engine.ts';
import {
  childRssSampler,
  childSandbox,
  control,
  cpuSecondsOf,
  loadavg1,
  machine,
  mb,
  rssSampler,
  TINY_PNG,
} from './engine-common.ts';

const N = Number(process.env.BENCH_JOBS ?? 10_000);
/** The app's own ceiling (Settings allows 1..32); BENCH_CONCURRENCY=256 stresses past it. */
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const RENDER = process.env.BENCH_RENDER === 'faithful' ? 'faithful' : 'fast';
const PACED = process.env.BENCH_PACED === '1';
const METADATA = process.env.BENCH_METADATA === 'on';
const settings = { ...DEFAULT_SETTINGS, keepMetadata: METADATA, writeProvenance: METADATA };
const UNREACHED = { burstPerSec: 100_000, burstWindowSec: 1, averagePerSec: 100_000, averageWindowSec: 1 };
const sb = await childSandbox(0, RENDER);
const work = mkdtempSync(join(tmpdir(), 'mediadesk-bench-tp-'));
try {
  const input = join(work, 'in');
  mkdirSync(input);
  for (let i = 0; i < N; i++) writeFileSync(join(input, `i${i}.png`), TINY_PNG);
  const rss = rssSampler();
  const engine = benchEngine(join(work, 'home'), sb.url, {
    concurrency: CONCURRENCY,
    rates: PACED ? UNREACHED : undefined,
    settings: () => settings,
  });
  // The plans' daily caps would hold the batch (2,000 upscales a day on enterprise).
  if (PACED) for (const plan of PLAN_TIERS) engine.pacer.limiter.setCap(plan, 'upscaler-precision', 1e9);
  const t0 = performance.now();
  const r = await engine.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: join(work, 'out') });
  const t1 = performance.now();
  const rssAfterEnqueue = process.memoryUsage.rss();
  const load0 = loadavg1();
  const cpu0 = process.cpuUsage();
  const sbCpu0 = cpuSecondsOf(sb.proc.pid!);
  const sbRss = childRssSampler(sb.proc.pid!);
  engine.start();
  for (;;) {
    const b = engine.store.batch(r.batch!.id)!;
    if (b.finished) break;
    await new Promise((res) => setTimeout(res, 100));
  }
  const t2 = performance.now();
  const cpu = process.cpuUsage(cpu0);
  const engineCpu = (cpu.user + cpu.system) / 1e6;
  const sbCpu = cpuSecondsOf(sb.proc.pid!) - sbCpu0;
  sbRss.stop();
  const load1 = loadavg1();
  const stats = await control(sb.url, 'stats');
  const v1 = Object.entries(stats.requests as Record<string, number>).filter(([k]) => / \/v1\//.test(k));
  const by = (re: RegExp) => v1.filter(([k]) => re.test(k)).reduce((a, [, n]) => a + n, 0);
  const b = engine.store.batch(r.batch!.id)!;
  await engine.close();
  rss.stop();
  console.log(
    [
      `### (b) ${N.toLocaleString('en')} zero-latency image jobs (concurrency ${CONCURRENCY}, Sandbox in a separate process)`,
      '',
      '| figure | value |',
      '|---|---|',
      `| enqueue incl. pre-flight of every input (image headers) | ${((t1 - t0) / 1000).toFixed(1)} s |`,
      `| run (create, poll, download, rename) | ${((t2 - t1) / 1000).toFixed(1)} s |`,
      `| jobs per second (run) | ${(N / ((t2 - t1) / 1000)).toFixed(0)} |`,
      `| done | ${b.counts.done} of ${b.total} |`,
      `| peak RSS of the engine process | ${mb(rss.peak())} (${mb(rssAfterEnqueue)} after the enqueue) |`,
      `| CPU of the engine process during the run | ${engineCpu.toFixed(1)} s (${((engineCpu * 1000) / N).toFixed(2)} ms per job) |`,
      `| CPU of the Sandbox process during the run | ${sbCpu.toFixed(1)} s (${((sbCpu * 1000) / N).toFixed(2)} ms per job), peak RSS ${mb(sbRss.peak())} |`,
      `| /v1 requests: creates, list pages, by-id | ${by(/^POST/)}, ${by(/^GET [^{]*$/)}, ${by(/\{task-id\}/)} |`,
      `| Sandbox result rendering | ${RENDER} |`,
      `| paced through the limiter (BENCH_PACED) | ${PACED ? 'yes, rates never reached' : 'no'} |`,
      `| load average (1 min) at start / end of the run | ${load0} / ${load1} |`,
      '',
      `Machine: ${machine()}`,
    ].join('\n'),
  );
} finally {
  sb.close();
  rmSync(work, { recursive: true, force: true });
}
