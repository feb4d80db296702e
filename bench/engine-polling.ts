/**
 * (a) API requests per completed task with 1, 100 and 1,000 tasks in flight: the engine (list
 * polling) beside a naive per-task poller (by-id every second), same Sandbox, same run.
 * Counts /v1 requests only (create, list, by-id); result downloads are file transfers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { DEFAULT_SLUGS } from '../shared/catalogue/index.ts';
import { DEFAULT_SETTINGS } from '../shared/settings.ts';
import { openEngine } from '../electron/core/engine/open.ts';
import { ApiClient } from '../electron/core/api/client.ts';
import { ToolClient } from '../electron/core/api/tools.ts';
import { childSandbox, control, machine } from './engine-common.ts';

const TASK_MS = 4000;
const apiRequests = (stats: { requests: Record<string, number> }) =>
  Object.entries(stats.requests)
    .filter(([k]) => / \/v1\//.test(k))
    .reduce((a, [, n]) => a + n, 0);

async function engineRun(url: string, n: number, work: string): Promise<number> {
  const input = join(work, `in${n}`);
  const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#345' } })
    .png()
    .toBuffer();
  const { mkdirSync, writeFileSync } = await import('node:fs');
  mkdirSync(input, { recursive: true });
  for (let i = 0; i < n; i++) writeFileSync(join(input, `i${i}.png`), png);
  const engine = openEngine({
    home: join(work, `home${n}`),
    target: async () => ({ baseUrl: url, apiKey: 'sandbox-owner' }),
    slugs: () => ({ ...DEFAULT_SLUGS }),
    settings: () => DEFAULT_SETTINGS,
    concurrency: n,
  });
  const r = await engine.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: join(work, `out${n}`) });
  await control(url, 'reset', {});
  await control(url, 'faults', { taskDurationMs: TASK_MS });
  engine.start();
  while (!engine.store.batch(r.batch!.id)!.finished) await new Promise((res) => setTimeout(res, 100));
  const stats = await control(url, 'stats');
  await engine.close();
  return apiRequests(stats) / n;
}

async function naiveRun(url: string, n: number): Promise<number> {
  await control(url, 'reset', {});
  await control(url, 'faults', { taskDurationMs: TASK_MS });
  const tools = new ToolClient(new ApiClient(async () => ({ baseUrl: url, apiKey: 'sandbox-owner' })));
  const image = (
    await sharp({ create: { width: 8, height: 8, channels: 3, background: '#345' } })
      .png()
      .toBuffer()
  ).toString('base64');
  await Promise.all(
    Array.from({ length: n }, async () => {
      const t = await tools.create('upscaler-precision', DEFAULT_SLUGS, { image });
      for (;;) {
        await new Promise((res) => setTimeout(res, 1000));
        const e = await tools.byId('upscaler-precision', DEFAULT_SLUGS, {}, t.taskId);
        if (e.status === 'COMPLETED' || e.status === 'FAILED') return;
      }
    }),
  );
  return apiRequests(await control(url, 'stats')) / n;
}

const sb = await childSandbox(TASK_MS);
const work = mkdtempSync(join(tmpdir(), 'mediadesk-bench-poll-'));
const rows: string[] = [];
try {
  for (const n of [1, 100, 1000]) {
    const engine = await engineRun(sb.url, n, work);
    const naive = await naiveRun(sb.url, n);
    rows.push(`| ${n} | ${engine.toFixed(2)} | ${naive.toFixed(2)} |`);
    console.error(`in flight ${n}: engine ${engine.toFixed(2)} req/task, naive ${naive.toFixed(2)} req/task`);
  }
} finally {
  sb.close();
  rmSync(work, { recursive: true, force: true });
}
console.log(
  [
    `### (a) API requests per completed task (task duration ${TASK_MS / 1000} s, default poll policy)`,
    '',
    '| tasks in flight | engine (list polling) | naive by-id poller (1 s) |',
    '|---|---|---|',
    ...rows,
    '',
    `Machine: ${machine()}`,
  ].join('\n'),
);
