/**
 * API requests per completed task with 1, 100 and 1,000 tasks in flight: the engine with lists
 * that show every task (as the description says), the same after an earlier run on its data folder
 * saw a task of the tool finish (its duration kept), and with lists windowed to the newest 50 (a
 * Sandbox fault), beside a naive per-task poller (by-id every second), same Sandbox, same run.
 * Counts /v1 requests only (create, list, by-id); result downloads are file transfers.
 * BENCH_ENGINE_ROOT: another checkout whose engine is measured (its baseline) against this Sandbox.
 * BENCH_NAIVE=0 skips the naive poller. Run: node bench/engine-polling.ts
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFAULT_SLUGS } from '../shared/catalogue/index.ts';
import { DEFAULT_SETTINGS } from '../shared/settings.ts';
import { ApiClient } from '../electron/core/api/client.ts';
import { ToolClient } from '../electron/core/api/tools.ts';
import { LIST_WINDOW_FAULT } from '../electron/sandbox/tool-routes.ts';
import { childSandbox, control, loadavg1, machine, TINY_PNG } from './engine-common.ts';

const TASK_MS = 4000;
const ROOT = resolve(process.env.BENCH_ENGINE_ROOT ?? resolve(import.meta.dirname, '..'));
const { openEngine } = (await import(
  pathToFileURL(join(ROOT, 'electron/core/engine/open.ts')).href
)) as typeof import('../electron/core/engine/open.ts');

type Counts = { creates: number; lists: number; byId: number };
function countsOf(stats: { requests: Record<string, number> }): Counts {
  const c = { creates: 0, lists: 0, byId: 0 };
  for (const [k, n] of Object.entries(stats.requests)) {
    if (!/ \/v1\//.test(k)) continue;
    if (k.startsWith('POST')) c.creates += n;
    else if (k.includes('{task-id}')) c.byId += n;
    else c.lists += n;
  }
  return c;
}
const perTask = (c: Counts, n: number) => (c.creates + c.lists + c.byId) / n;

/** `usedBefore`: an earlier run on the same data folder saw one task of the tool finish (not counted). */
async function engineRun(
  url: string,
  n: number,
  work: string,
  window: number | null,
  usedBefore = false,
): Promise<Counts> {
  const tag = `${n}-${window ?? 'all'}${usedBefore ? '-used' : ''}`;
  const home = join(work, `home${tag}`);
  if (usedBefore) await batchOn(url, home, 1, join(work, `before${tag}`), window);
  return batchOn(url, home, n, join(work, tag), window);
}

/** One engine run of n tasks on `home`, from the Sandbox's reset to the batch's end: its requests. */
async function batchOn(url: string, home: string, n: number, dir: string, window: number | null): Promise<Counts> {
  const input = join(dir, 'in');
  mkdirSync(input, { recursive: true });
  for (let i = 0; i < n; i++) writeFileSync(join(input, `i${i}.png`), TINY_PNG);
  const engine = openEngine({
    home,
    target: async () => ({ baseUrl: url, apiKey: 'sandbox-owner' }),
    slugs: () => ({ ...DEFAULT_SLUGS }),
    settings: () => DEFAULT_SETTINGS,
    concurrency: n,
  });
  const r = await engine.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: join(dir, 'out') });
  await control(url, 'reset', {});
  await control(url, 'faults', { taskDurationMs: TASK_MS, listWindow: window });
  engine.start();
  while (!engine.store.batch(r.batch!.id)!.finished) await new Promise((res) => setTimeout(res, 100));
  const stats = await control(url, 'stats');
  await engine.close();
  return countsOf(stats);
}

async function naiveRun(url: string, n: number): Promise<Counts> {
  await control(url, 'reset', {});
  await control(url, 'faults', { taskDurationMs: TASK_MS });
  const tools = new ToolClient(new ApiClient(async () => ({ baseUrl: url, apiKey: 'sandbox-owner' })));
  const image = TINY_PNG.toString('base64');
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
  return countsOf(await control(url, 'stats'));
}

/**
 * The fewest requests per task any client can spend when lists show the newest LIST_WINDOW_FAULT
 * tasks and all n are created at once: each create, one list read after they end, and one by-id
 * read for each of the n - window tasks no list ever shows (bench/RESULTS.md).
 */
const windowFloor = (n: number) => (n + 1 + Math.max(0, n - LIST_WINDOW_FAULT)) / n;

const sb = await childSandbox(TASK_MS);
const work = mkdtempSync(join(tmpdir(), 'mediadesk-bench-poll-'));
const rows: string[] = [];
const started = new Date().toISOString().slice(0, 16).replace('T', ' ');
const loadAtStart = loadavg1();
const cell = (c: Counts, n: number) => `${perTask(c, n).toFixed(2)} (${c.lists} lists, ${c.byId} by id)`;
try {
  for (const n of [1, 100, 1000]) {
    const full = await engineRun(sb.url, n, work, null);
    const used = await engineRun(sb.url, n, work, null, true);
    const windowed = await engineRun(sb.url, n, work, LIST_WINDOW_FAULT);
    const naive = process.env.BENCH_NAIVE === '0' ? null : await naiveRun(sb.url, n);
    rows.push(
      `| ${n} | ${cell(full, n)} | ${cell(used, n)} | ${cell(windowed, n)} | ${windowFloor(n).toFixed(3)} | ${naive ? perTask(naive, n).toFixed(2) : '-'} |`,
    );
    console.error(rows.at(-1));
  }
} finally {
  sb.close();
  rmSync(work, { recursive: true, force: true });
}
console.log(
  [
    `### API requests per completed task (task duration ${TASK_MS / 1000} s), engine of ${ROOT}`,
    '',
    `| tasks in flight | engine, full list | the same, tool used before | engine, list of the newest ${LIST_WINDOW_FAULT} | floor of any client, newest ${LIST_WINDOW_FAULT} | naive by-id poller (1 s) |`,
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    `${started} UTC, load ${loadAtStart} at start, ${loadavg1()} at end. Machine: ${machine()}`,
  ].join('\n'),
);
