/**
 * Sandbox load benchmark: 200 concurrent clients create 10,000 tasks, poll them, page the lists
 * and the audit trail, and download results, while the server runs in a child process whose
 * memory we sample. Run: node bench/sandbox-load.ts  (figures go to bench/RESULTS.md by hand).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import sharp from 'sharp';
import { DEFAULT_SLUGS, getTool, resolvePaths } from '../shared/catalogue/index.ts';

const CLIENTS = 200;
const TASKS = 10_000;

const child = spawn(process.execPath, ['bin/mediadesk.js', 'sandbox', '--port', '0', '--task-duration-ms', '2000'], { stdio: ['ignore', 'pipe', 'inherit'] });
const [line] = (await once(child.stdout, 'data')) as [Buffer];
const url = /listening on (\S+)/.exec(line.toString())![1];
const pid = child.pid!;

async function rssMb(): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

const H = { 'x-service-api-key': 'sandbox-owner', 'content-type': 'application/json' };
const png = (await sharp({ create: { width: 256, height: 256, channels: 3, background: '#3366aa' } }).png().toBuffer()).toString('base64');
const tools = ['upscaler-precision', 'hires', 'music', 'video-2x', 'skin-faithful', 'context-t2i'].map((id) => {
  const tool = getTool(id);
  const p = resolvePaths(tool, DEFAULT_SLUGS, { resolution: '720p' });
  const body = id === 'upscaler-precision' || id === 'skin-faithful' ? { image: png } : { prompt: `bench ${id}` };
  return { id, p, body };
});

const latencies: number[] = [];
const downloadLatencies: number[] = [];
let errors = 0;
async function timed(fn: () => Promise<Response>, into = latencies): Promise<Response | null> {
  const t0 = performance.now();
  try {
    const r = await fn();
    into.push(performance.now() - t0);
    if (!r.ok) errors++;
    return r;
  } catch {
    errors++;
    return null;
  }
}

const rssStart = await rssMb();
let peak = rssStart;
const sampler = setInterval(async () => (peak = Math.max(peak, await rssMb())), 200);

// Phase 1: 200 clients create 10,000 tasks.
const ids: { id: string; tool: (typeof tools)[number] }[] = [];
let next = 0;
const t1 = performance.now();
await Promise.all(Array.from({ length: CLIENTS }, async () => {
  while (next < TASKS) {
    const tool = tools[next++ % tools.length];
    const r = await timed(() => fetch(url + tool.p.create, { method: 'POST', headers: H, body: JSON.stringify(tool.body) }));
    if (r?.ok) ids.push({ id: (await r.json()).data.task_id, tool });
    else await r?.arrayBuffer();
  }
}));
const createSec = (performance.now() - t1) / 1000;
const createLat = [...latencies].sort((a, b) => a - b);
latencies.length = 0;

// Phase 2: 200 clients poll by id, page lists and the audit trail, and download results.
await new Promise((r) => setTimeout(r, 2100));
let polls = 0;
let downloads = 0;
let downloadedBytes = 0;
const t2 = performance.now();
await Promise.all(Array.from({ length: CLIENTS }, async (_, c) => {
  for (let i = 0; i < 25; i++) {
    const t = ids[(c * 25 + i) % ids.length];
    const r = await timed(() => fetch(url + t.tool.p.byId(t.id), { headers: H }));
    polls++;
    const body = r?.ok ? await r.json() : null;
    if (i % 5 === 0 && body?.data.generated[0]) {
      const d = await timed(() => fetch(body.data.generated[0]), downloadLatencies);
      if (d) downloadedBytes += (await d.arrayBuffer()).byteLength;
      downloads++;
    }
    if (i % 10 === 0) await (await timed(() => fetch(`${url}${t.tool.p.list}?per_page=1000&page=${1 + (i % 2)}`, { headers: H })))?.arrayBuffer();
    if (i % 10 === 5) await (await timed(() => fetch(`${url}/v1/analytics/audit-logs/events?per_page=100&page=${1 + c % 50}`, { headers: { 'x-service-api-key': `sandbox-${c % 2 ? 'owner' : 'admin'}` } })))?.arrayBuffer();
  }
}));
const readSec = (performance.now() - t2) / 1000;
const readLat = [...latencies].sort((a, b) => a - b);
const dlLat = [...downloadLatencies].sort((a, b) => a - b);
clearInterval(sampler);
peak = Math.max(peak, await rssMb());

// Responsiveness afterwards: a single request's latency with 10,000 tasks held.
const t3 = performance.now();
await (await fetch(`${url}/v1/ai/loras`, { headers: H })).arrayBuffer();
const idleMs = performance.now() - t3;
const stats = await (await fetch(`${url}/__sandbox/stats`)).json();
const rssEnd = await rssMb();
child.kill('SIGTERM');
await once(child, 'exit');

const pct = (a: number[], p: number) => a[Math.min(a.length - 1, Math.floor((a.length * p) / 100))]?.toFixed(1);
console.log(JSON.stringify({
  clients: CLIENTS, tasks: stats.tasks, errors,
  create: { seconds: createSec.toFixed(2), perSec: (TASKS / createSec).toFixed(0), p50ms: pct(createLat, 50), p99ms: pct(createLat, 99) },
  apiReads: { seconds: readSec.toFixed(2), requests: readLat.length, polls, p50ms: pct(readLat, 50), p99ms: pct(readLat, 99) },
  downloads: { count: downloads, downloadedMB: (downloadedBytes / 1e6).toFixed(1), p50ms: pct(dlLat, 50), p99ms: pct(dlLat, 99) },
  afterwardsSingleRequestMs: idleMs.toFixed(1),
  rssMB: { start: rssStart.toFixed(0), peak: peak.toFixed(0), end: rssEnd.toFixed(0) },
}, null, 2));
