/**
 * A paced batch at the service's published limits (SERVICE_RATES: 10 requests/s over 2 minutes,
 * 50/s over 5 s) against a Sandbox that enforces them: the 429s the service would answer, and how
 * much of the 2-minute average the batch uses. Beside the queue, another client of the app asks
 * the credit usage once before the batch (as the estimate does) and the LoRAs every 15 s (any
 * other screen), paced as createCore wires it. BENCH_JOBS jobs (1,800, about 3 minutes).
 * BENCH_ENGINE_ROOT: another checkout whose engine and client are measured (its baseline).
 * Run: node bench/paced-batch.ts
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFAULT_SLUGS } from '../shared/catalogue/index.ts';
import { SERVICE_RATES } from '../shared/service-limits.ts';
import { DEFAULT_SETTINGS } from '../shared/settings.ts';
import { childSandbox, control, loadavg1, machine, TINY_PNG } from './engine-common.ts';

const ROOT = resolve(process.env.BENCH_ENGINE_ROOT ?? resolve(import.meta.dirname, '..'));
const from = async <T>(path: string): Promise<T> => (await import(pathToFileURL(join(ROOT, path)).href)) as T;
const { openEngine } = await from<typeof import('../electron/core/engine/open.ts')>('electron/core/engine/open.ts');
const { ApiClient } = await from<typeof import('../electron/core/api/client.ts')>('electron/core/api/client.ts');
const { usageBody } = await from<typeof import('../electron/core/analytics/service.ts')>(
  'electron/core/analytics/service.ts',
);

const JOBS = Number(process.env.BENCH_JOBS ?? 1800);
const WINDOW_MS = SERVICE_RATES.averageWindowSec * 1000;
const ALLOWED = SERVICE_RATES.averagePerSec * SERVICE_RATES.averageWindowSec;

const sb = await childSandbox(2000);
const work = mkdtempSync(join(tmpdir(), 'mediadesk-bench-paced-'));
const started = new Date().toISOString().slice(0, 16).replace('T', ' ');
const load = loadavg1();
/** When each /v1 request was sent (every attempt, retries included), by either client. */
const sent: number[] = [];
const onAttempt = (_m: string, path: string) => {
  if (path.startsWith('/v1/')) sent.push(Date.now());
};
try {
  await control(sb.url, 'limits', { limits: 'service' });
  const input = join(work, 'in');
  mkdirSync(input, { recursive: true });
  for (let i = 0; i < JOBS; i++) writeFileSync(join(input, `i${i}.png`), TINY_PNG);
  const target = async () => ({ baseUrl: sb.url, apiKey: 'sandbox-owner' });
  const engine = openEngine({
    home: join(work, 'home'),
    target,
    slugs: () => ({ ...DEFAULT_SLUGS }),
    settings: () => DEFAULT_SETTINGS,
    rates: SERVICE_RATES,
    concurrency: 64,
    client: { onAttempt },
  });
  const other = new ApiClient(target, { onAttempt, pace: () => engine.pacer.gate() });
  await other.query('/v1/analytics/team-credit-usage', usageBody({ granularity: 'day' }, Date.now()));
  const r = await engine.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: join(work, 'out') });
  engine.start();
  const reads = setInterval(() => void other.get('/v1/ai/loras').catch(() => {}), 15_000);
  while (!engine.store.batch(r.batch!.id)!.finished) await new Promise((res) => setTimeout(res, 250));
  clearInterval(reads);
  const states = engine.store.byIds(r.jobIds).map((j) => j.state);
  await engine.close();
  const stats = await control(sb.url, 'stats');
  // The busiest 2-minute window, from the first request on.
  let best = 0;
  for (let i = 0, j = 0; i < sent.length; i++) {
    while (sent[i] - sent[j] >= WINDOW_MS) j++;
    best = Math.max(best, i - j + 1);
  }
  const spanSec = (sent.at(-1)! - sent[0]) / 1000;
  console.log(
    [
      `### Paced batch at the published limits (${JOBS} jobs, 2 s tasks, concurrency 64), engine of ${ROOT}`,
      '',
      `- 429s: burst ${stats.limited.burst}, average ${stats.limited.average} (daily cap ${stats.limited.daily_cap})`,
      `- requests sent: ${sent.length} in ${spanSec.toFixed(0)} s; busiest 2-minute window ${best} of ${ALLOWED} allowed: **${((100 * best) / ALLOWED).toFixed(1)} %**`,
      `- jobs done: ${states.filter((s) => s === 'done').length} of ${JOBS}`,
      '',
      `${started} UTC, load ${load} at start, ${loadavg1()} at end. Machine: ${machine()}`,
    ].join('\n'),
  );
} finally {
  sb.close();
  rmSync(work, { recursive: true, force: true });
}
