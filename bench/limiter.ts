/**
 * The pacing limiter's overhead per grant (electron/core/limits): one acquire, its BEGIN IMMEDIATE
 * transaction on mediadesk.db included, at the service's rates: (a) empty windows (a clock 130 s
 * on per grant), (b) the 2-minute window nearly full (about 1,190 rows, a clock at 10 grants/s),
 * (c) two processes on one data folder at once (one clock 20,000 times the real one, so the windows
 * hold a few hundred rows and none waits); beside (0), the floor: one bare BEGIN IMMEDIATE, INSERT,
 * COMMIT on the same kind of file; (d) as (b) with each create taken as the engine's submitter
 * takes it (two peeks, then the grant). BENCH_GRANTS grants per case (20,000).
 * Run: node bench/limiter.ts
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../electron/core/db/open.ts';
import { openLimiter, type GrantRequest } from '../electron/core/limits/limiter.ts';
import { QUEUE_MIGRATIONS } from '../electron/core/queue/migrations.ts';
import { loadavg1, machine } from './engine-common.ts';

const GRANTS = Number(process.env.BENCH_GRANTS ?? 20_000);
/** A clock that moves `stepMs` on each reading. */
const stepping = (stepMs: number) => {
  let t = Date.parse('2026-03-15T00:00:00Z');
  return () => (t += stepMs);
};
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

/**
 * Grants alternately a create and a poll; per-grant times in µs, sorted. Fails if any grant was
 * refused. `submitPath`: each create as the engine's submitter takes it, two peeks then the grant.
 */
function run(home: string, opts: Parameters<typeof openLimiter>[1], n: number, submitPath = false): number[] {
  const { limiter, close } = openLimiter(home, opts);
  limiter.setCap('enterprise', '*', 1e9);
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const req: GrantRequest =
      i % 2 ? { scope: 'bench', kind: 'poll' } : { scope: 'bench', kind: 'create', tool: 'editor', plan: 'enterprise' };
    const t0 = process.hrtime.bigint();
    if (submitPath && req.kind === 'create') {
      limiter.peek(req, 8);
      limiter.peek(req, 2);
    }
    const g = limiter.acquire(req);
    times.push(Number(process.hrtime.bigint() - t0) / 1000);
    if (!g.go) throw new Error(`grant ${i} refused: ${g.reason}`);
  }
  close();
  return times.sort((a, b) => a - b);
}

/** The floor under any grant: one write transaction of one row, µs per transaction, sorted. */
function floor(home: string, n: number): number[] {
  const db = openDatabase(join(home, 'mediadesk.db'), QUEUE_MIGRATIONS);
  const insert = db.prepare('INSERT INTO limiter_grants (scope, granted_at) VALUES (?, ?)');
  const tx = db.transaction((i: number) => insert.run('floor', i));
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    tx.immediate(i);
    times.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  db.close();
  return times.sort((a, b) => a - b);
}

const line = (label: string, t: number[]) =>
  console.log(
    `${label}: mean ${(t.reduce((a, b) => a + b, 0) / t.length).toFixed(1)} µs, p50 ${pct(t, 0.5).toFixed(1)}, p99 ${pct(t, 0.99).toFixed(1)}, max ${t.at(-1)!.toFixed(0)} µs per grant (${t.length} grants)`,
  );

if (process.argv[2] === '--child') {
  const origin = Number(process.argv[4]);
  const t = run(process.argv[3], { now: () => origin + (Date.now() - origin) * 20_000 }, GRANTS);
  process.stdout.write(JSON.stringify(t));
} else {
  const work = mkdtempSync(join(tmpdir(), 'mediadesk-bench-limiter-'));
  try {
    console.log(`${machine()}; load ${loadavg1()} at start`);
    line('(0) floor: one bare write transaction', floor(join(work, '0'), GRANTS));
    line('(a) empty windows, one process', run(join(work, 'a'), { now: stepping(130_000) }, GRANTS));
    line('(b) 2-minute window nearly full, one process', run(join(work, 'b'), { now: stepping(101) }, GRANTS));
    line(
      '(d) as (b), each create as the submitter takes it (two peeks, then the grant)',
      // Seven clock readings per create and poll instead of three: the same time per pair as (b).
      run(join(work, 'd'), { now: stepping((101 * 3) / 7) }, GRANTS, true),
    );
    const home = join(work, 'c');
    openLimiter(home).close();
    // One origin for both clocks, so each reads the other's grants at the same time.
    const origin = Date.now();
    const child = () =>
      new Promise<number[]>((res, rej) => {
        const p = spawn(process.execPath, [import.meta.filename, '--child', home, String(origin)], {
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        let out = '';
        p.stdout.on('data', (d) => (out += d));
        p.once('exit', (code) => (code === 0 ? res(JSON.parse(out)) : rej(new Error(`child exited ${code}`))));
      });
    const t0 = Date.now();
    const [x, y] = await Promise.all([child(), child()]);
    const wall = Date.now() - t0;
    line(
      '(c) two processes on one folder, each',
      [...x, ...y].sort((a, b) => a - b),
    );
    console.log(
      `(c) ${x.length + y.length} grants in ${wall} ms wall (processes started included); load ${loadavg1()} at end`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
