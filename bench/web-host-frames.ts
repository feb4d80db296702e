/**
 * Memory of the web host after hostile socket frames of the largest size it reads (issue #40,
 * finding 7): the host runs in a child (`--expose-gc`), the frames come from this process, so the
 * client's buffers are not counted. Per kind, in a fresh child: RSS, heap used and external memory
 * at start, the peak while 20 frames arrive, then after a GC and BENCH_IDLE_MS (3000) of idle;
 * then 20 more, to tell memory kept by something (it grows again) from memory the allocator did
 * not give back (it plateaus). Kinds: `nested` (16 MB of `{"a":` ...), `string` (one string
 * filling the frame), `oversize` (a frame one byte over the limit: refused by its header, the
 * socket closed with 1009 and opened again). BENCH_KINDS=nested,string to choose; the child
 * inherits the environment (MALLOC_ARENA_MAX=2, say). BENCH_LIMIT: the frame size to fill (bytes),
 * else the host's own MAX_MESSAGE_BYTES (16 MiB before it existed). BENCH_ROOT: another checkout
 * whose web host is measured (its baseline).
 * Run: node bench/web-host-frames.ts
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import WebSocket from 'ws';
import { childRssSampler, loadavg1, machine, mb } from './engine-common.ts';

type Mem = { rss: number; heapTotal: number; heapUsed: number; external: number };
type FromChild = { origin: string; token: string; limit: number } | { mem: Mem };

const ROOT = resolve(process.env.BENCH_ROOT ?? resolve(import.meta.dirname, '..'));

async function child(): Promise<void> {
  const { startWebHost } = (await import(
    pathToFileURL(join(ROOT, 'electron/host/web/server.ts')).href
  )) as typeof import('../electron/host/web/server.ts');
  const limitFile = join(ROOT, 'shared/socket-limit.ts');
  const limit = existsSync(limitFile)
    ? ((await import(pathToFileURL(limitFile).href)) as { MAX_MESSAGE_BYTES: number }).MAX_MESSAGE_BYTES
    : 16 * 1024 * 1024;
  const home = mkdtempSync(join(tmpdir(), 'mediadesk-bench-frames-'));
  const host = await startWebHost({ home, env: {} });
  const gc = (globalThis as { gc?: () => void }).gc!;
  const idleMs = Number(process.env.BENCH_IDLE_MS ?? 3000);
  process.on('message', async (m: string) => {
    if (m === 'mem') {
      gc();
      await new Promise((r) => setTimeout(r, idleMs));
      gc();
      const u = process.memoryUsage();
      process.send!({ mem: { rss: u.rss, heapTotal: u.heapTotal, heapUsed: u.heapUsed, external: u.external } });
    } else if (m === 'stop') {
      await host.close();
      rmSync(home, { recursive: true, force: true });
      process.exit(0);
    }
  });
  process.send!({ origin: host.origin, token: host.token, limit });
}

function frameOf(kind: string, size: number): string {
  const head = '{"id":1,"cmd":"settings.get","payload":';
  if (kind === 'nested') {
    const levels = Math.floor((size - head.length - 2) / 6);
    return `${head}${'{"a":'.repeat(levels)}0${'}'.repeat(levels)}}`;
  }
  const pad = size - head.length - '{"pad":""}}'.length;
  return `${head}{"pad":"${'x'.repeat(kind === 'oversize' ? pad + 1 : pad)}"}}`;
}

/** Sends `frame` 20 times, each on an open socket, and waits for its reply, or for the close that refuses it. */
async function send20(origin: string, token: string, frame: string): Promise<string> {
  const outcomes = new Map<string, number>();
  let ws: WebSocket | null = null;
  for (let i = 0; i < 20; i++) {
    if (!ws || ws.readyState !== WebSocket.OPEN) {
      ws = new WebSocket(`${origin.replace('http', 'ws')}/ws?token=${token}`, { maxPayload: 256 * 1024 * 1024 });
      ws.on('error', () => {});
      await new Promise((res, rej) => ws!.once('open', res).once('error', rej));
    }
    const socket = ws;
    const outcome = await new Promise<string>((res) => {
      const answered = (m: WebSocket.RawData) => done(`answered: ${String(m).slice(0, 90)}`);
      const closed = (code: number) => done(`closed ${code}`);
      const done = (said: string) => {
        socket.off('message', answered).off('close', closed);
        res(said);
      };
      socket.on('message', answered).on('close', closed);
      socket.send(frame);
    });
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  }
  ws?.close();
  return [...outcomes].map(([o, n]) => `${n} × ${o}`).join('; ');
}

if (process.argv[2] === '--child') {
  await child();
} else {
  const kinds = (process.env.BENCH_KINDS ?? 'nested,string,oversize').split(',');
  const started = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const load = loadavg1();
  const rows: string[] = [];
  for (const kind of kinds) {
    const proc: ChildProcess = fork(import.meta.filename, ['--child'], {
      execArgv: ['--expose-gc'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const next = () => new Promise<FromChild>((res) => proc.once('message', (m) => res(m as FromChild)));
    const ready = (await next()) as { origin: string; token: string; limit: number };
    const mem = async () => {
      const m = next();
      proc.send('mem');
      return ((await m) as { mem: Mem }).mem;
    };
    const frame = frameOf(kind, Number(process.env.BENCH_LIMIT ?? ready.limit));
    const base = await mem();
    const rss = childRssSampler(proc.pid!, 20);
    const said = await send20(ready.origin, ready.token, frame);
    const peak1 = rss.peak();
    const after1 = await mem();
    const said2 = await send20(ready.origin, ready.token, frame);
    const after2 = await mem();
    rss.stop();
    proc.send('stop');
    await new Promise((r) => proc.once('exit', r));
    const cell = (m: Mem) => `${mb(m.rss)} / ${mb(m.heapTotal)} / ${mb(m.heapUsed)} / ${mb(m.external)}`;
    rows.push(
      `| ${kind} | ${(Buffer.byteLength(frame) / 1048576).toFixed(2)} MB | ${cell(base)} | ${mb(peak1)} | ${cell(after1)} | ${cell(after2)} |`,
    );
    process.stderr.write(`${kind}: ${said}${said2 === said ? '' : ` / then ${said2}`}\n`);
  }
  process.stdout.write(
    [
      `web host, 20 + 20 frames of each kind, ${started} UTC, ${machine()}, load ${load}` +
        `${Object.entries(process.env)
          .filter(([k]) => k.startsWith('MALLOC_'))
          .map(([k, v]) => `, ${k}=${v}`)
          .join('')}`,
      '',
      '| kind | frame | start: RSS / heap total / used / external | peak RSS (first 20) | after 20, GC, idle | after 40 |',
      '|---|---|---|---|---|---|',
      ...rows,
      '',
    ].join('\n'),
  );
}
