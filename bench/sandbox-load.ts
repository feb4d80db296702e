/**
 * Sandbox load benchmark: 200 concurrent clients create 10,000 tasks, poll them, read the lists
 * and the audit trail, and download results, while the server runs in a child process whose
 * memory we sample. Run: node bench/sandbox-load.ts [--timeout-ms MS]  (figures go to
 * bench/history/sandbox-load.md and bench/RESULTS.md by hand).
 *
 * It cannot hang silently. Every request must be answered and its body read within --timeout-ms
 * (default 120 s: a download may wait that long for a render slot on a busy machine). Every 10 s
 * a progress line on stderr gives the requests done, the oldest one still open and the server's
 * render queue, so a slow phase shows that it moves. A request that does not finish ends the run
 * (exit 1) with its phase, client and URL, what else was open, and the render queue then.
 */
import sharp from 'sharp';
import { DEFAULT_SLUGS, getTool, resolvePaths } from '../shared/catalogue/index.ts';
import { childRssSampler, childSandbox, loadavg1, machine } from './engine-common.ts';

const CLIENTS = 200;
const TASKS = 10_000;
const timeoutArg = process.argv.indexOf('--timeout-ms');
const TIMEOUT_MS = timeoutArg === -1 ? 120_000 : Number(process.argv[timeoutArg + 1]);
if (!(TIMEOUT_MS > 0))
  throw new Error(`--timeout-ms expects a number of milliseconds above 0, got ${process.argv[timeoutArg + 1]}`);

const run = { machine: machine(), startedUtc: new Date().toISOString(), loadAverageAtStart: loadavg1() };
console.error(`${run.machine}; ${run.startedUtc}; load average ${run.loadAverageAtStart}`);
const sb = await childSandbox(2000);
const url = sb.url;
const rss = childRssSampler(sb.proc.pid!, 200);
const rssStart = rss.now();

const H = { 'x-magnific-api-key': 'sandbox-owner', 'content-type': 'application/json' };
const png = (
  await sharp({ create: { width: 256, height: 256, channels: 3, background: '#3366aa' } })
    .png()
    .toBuffer()
).toString('base64');
const tools = ['upscaler-precision', 'hires', 'music', 'video-2x', 'skin-faithful', 'context-t2i'].map((id) => {
  const tool = getTool(id);
  const p = resolvePaths(tool, DEFAULT_SLUGS, { resolution: '720p' });
  const body =
    id === 'upscaler-precision' || id === 'skin-faithful'
      ? { image: png }
      : // The description requires the length of a track.
        { prompt: `bench ${id}`, ...(id === 'music' ? { music_length_seconds: 30 } : {}) };
  return { id, p, body };
});

type Phase = 'create' | 'read' | 'afterwards';
interface Open {
  phase: Phase;
  client: number;
  what: string;
  t0: number;
}
const open = new Set<Open>();
let phase: Phase = 'create';
let finished = 0;
const errorsByStatus: Record<string, number> = {};
const firstErrors: string[] = [];

/** A request that got no complete response within TIMEOUT_MS, or none at all. */
class Unfinished extends Error {}

/**
 * One request with its body read whole, all within TIMEOUT_MS. `into` gets the time to the
 * response headers (for a download: the wait for its render), as the figures always measured.
 */
async function request(
  client: number,
  target: string,
  init: RequestInit = {},
  into?: number[],
): Promise<{ ok: boolean; body: Buffer }> {
  const full = target.startsWith('http') ? target : url + target;
  const o: Open = { phase, client, what: `${init.method ?? 'GET'} ${full.slice(url.length)}`, t0: performance.now() };
  open.add(o);
  try {
    const r = await fetch(full, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
    into?.push(performance.now() - o.t0);
    const body = Buffer.from(await r.arrayBuffer());
    if (!r.ok) {
      errorsByStatus[r.status] = (errorsByStatus[r.status] ?? 0) + 1;
      if (firstErrors.length < 5)
        firstErrors.push(`${o.phase}: ${o.what} -> ${r.status} ${body.toString().slice(0, 200)}`);
    }
    finished++;
    return { ok: r.ok, body };
  } catch (err) {
    const e = err as Error & { cause?: Error };
    const why =
      e.name === 'TimeoutError'
        ? `no complete response within ${TIMEOUT_MS} ms`
        : `${e.message}${e.cause ? ` (${e.cause.message})` : ''}`;
    throw new Unfinished(
      `${o.phase} phase, client ${client}: ${o.what} did not finish: ${why}; it was open ${sec(performance.now() - o.t0)}`,
    );
  } finally {
    open.delete(o);
  }
}

const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The server's render queue, or why it could not be read. */
async function renderQueue(): Promise<string> {
  try {
    const s = await (await fetch(`${url}/__sandbox/stats`, { signal: AbortSignal.timeout(5000) })).json();
    const r = s.renders;
    return `server renders: ${r.running} running, ${r.queued} queued, ${r.done} done, ${r.abandoned} abandoned`;
  } catch (err) {
    return `server stats did not answer in 5 s (${(err as Error).message})`;
  }
}

function oldestOpen(n: number): string[] {
  const now = performance.now();
  return [...open]
    .sort((a, b) => a.t0 - b.t0)
    .slice(0, n)
    .map((o) => `client ${o.client} ${o.what}, open ${sec(now - o.t0)}`);
}

let phaseStart = performance.now();
const progress = setInterval(() => {
  const elapsed = sec(performance.now() - phaseStart);
  void renderQueue().then((q) =>
    console.error(
      `[${phase} ${elapsed}] ${finished} requests done, ${open.size} open; oldest: ${oldestOpen(1)[0] ?? 'none'}; ${q}`,
    ),
  );
}, 10_000);

const latencies: number[] = [];
const downloadLatencies: number[] = [];
const createLat: number[] = [];
const ids: { id: string; tool: (typeof tools)[number] }[] = [];
let polls = 0;
let downloads = 0;
let downloadedBytes = 0;
let createSec = 0;
let readSec = 0;
let idleMs = 0;

try {
  // Phase 1: 200 clients create 10,000 tasks.
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      while (next < TASKS) {
        const tool = tools[next++ % tools.length];
        const r = await request(
          c,
          tool.p.create,
          { method: 'POST', headers: H, body: JSON.stringify(tool.body) },
          createLat,
        );
        if (r.ok) ids.push({ id: JSON.parse(r.body.toString()).data.task_id, tool });
      }
    }),
  );
  createSec = (performance.now() - phaseStart) / 1000;
  if (ids.length === 0) throw new Error('create phase: no task was created; nothing to read');

  // Phase 2: 200 clients poll by id, read lists (plain GETs: they declare no paging) and page the audit trail, and download results.
  await new Promise((r) => setTimeout(r, 2100));
  phase = 'read';
  phaseStart = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      for (let i = 0; i < 25; i++) {
        const t = ids[(c * 25 + i) % ids.length];
        const r = await request(c, t.tool.p.byId(t.id), { headers: H }, latencies);
        polls++;
        const generated: string | undefined = r.ok ? JSON.parse(r.body.toString()).data.generated[0] : undefined;
        if (i % 5 === 0 && generated) {
          // Not `downloadedBytes += await ...`: that reads the total before the await and loses the other clients' bytes.
          const { body } = await request(c, generated, {}, downloadLatencies);
          downloadedBytes += body.byteLength;
          downloads++;
        }
        if (i % 10 === 0) await request(c, t.tool.p.list, { headers: H }, latencies);
        if (i % 10 === 5)
          await request(
            c,
            `/v1/analytics/audit-logs/events?per_page=100&page=${1 + (c % 50)}`,
            { headers: { 'x-magnific-api-key': `sandbox-${c % 2 ? 'owner' : 'admin'}` } },
            latencies,
          );
      }
    }),
  );
  readSec = (performance.now() - phaseStart) / 1000;

  // Responsiveness afterwards: a single request's latency with 10,000 tasks held.
  phase = 'afterwards';
  const single: number[] = [];
  await request(0, '/v1/ai/loras', { headers: H }, single);
  idleMs = single[0];
} catch (err) {
  clearInterval(progress);
  console.error(`\nsandbox-load failed: ${(err as Error).message}`);
  const others = oldestOpen(5);
  if (others.length) console.error(`still open (${open.size}), oldest first:\n  ${others.join('\n  ')}`);
  console.error(await renderQueue());
  sb.close();
  process.exit(1);
}
clearInterval(progress);

const stats = await (await fetch(`${url}/__sandbox/stats`, { signal: AbortSignal.timeout(TIMEOUT_MS) })).json();
const rssPeak = rss.peak();
const rssEnd = rss.now();
rss.stop();
sb.close();

const sorted = (a: number[]) => [...a].sort((x, y) => x - y);
const pct = (a: number[], p: number) => a[Math.min(a.length - 1, Math.floor((a.length * p) / 100))]?.toFixed(1);
const [cl, rl, dl] = [sorted(createLat), sorted(latencies), sorted(downloadLatencies)];
const mbOf = (b: number) => (b / 1048576).toFixed(0);
console.log(
  JSON.stringify(
    {
      run,
      clients: CLIENTS,
      tasks: stats.tasks,
      errors: Object.values(errorsByStatus).reduce((s, n) => s + n, 0),
      errorsByStatus,
      firstErrors,
      create: {
        seconds: createSec.toFixed(2),
        perSec: (TASKS / createSec).toFixed(0),
        p50ms: pct(cl, 50),
        p99ms: pct(cl, 99),
      },
      apiReads: { seconds: readSec.toFixed(2), requests: rl.length, polls, p50ms: pct(rl, 50), p99ms: pct(rl, 99) },
      downloads: {
        count: downloads,
        downloadedMB: (downloadedBytes / 1e6).toFixed(1),
        p50ms: pct(dl, 50),
        p99ms: pct(dl, 99),
      },
      renders: stats.renders,
      afterwardsSingleRequestMs: idleMs.toFixed(1),
      rssMB: { start: mbOf(rssStart), peak: mbOf(rssPeak), end: mbOf(rssEnd) },
    },
    null,
    2,
  ),
);
// A run with errors is no figure to record: it says so and fails.
const errorCount = Object.values(errorsByStatus).reduce((s, n) => s + n, 0);
if (errorCount > 0) {
  console.error(
    `${errorCount} requests failed (${JSON.stringify(errorsByStatus)}): fix them before recording this run`,
  );
  process.exitCode = 1;
}
