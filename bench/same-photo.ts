/**
 * The same-photo check of a folder dropped again (web host: copied anew under a new path): the
 * bytes read and the time to decide that each photo of the second copy is one already done,
 * (a) comparing it with the first copy (what a job recorded before schema 5 gets: both read) and
 * (b) with the size and SHA-256 the job recorded when it sent the photo (only the new copy read).
 * BENCH_FILES files of BENCH_MB MB each; BENCH_ROUNDS rounds alternating; medians. Linux only
 * (bytes read from /proc/self/io rchar, page cache included).
 * Run: node bench/same-photo.ts
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { samePhoto, sha256Of } from '../electron/core/batch/same-bytes.ts';
import type { MadeFrom } from '../electron/core/queue/store.ts';
import { loadavg1, machine } from './engine-common.ts';

const FILES = Number(process.env.BENCH_FILES ?? 10);
const MB = Number(process.env.BENCH_MB ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const rchar = () => Number(/rchar:\s*(\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];

const work = join(tmpdir(), `mediadesk-bench-same-${process.pid}`);
try {
  const recorded: MadeFrom[] = [];
  for (let i = 0; i < FILES; i++) {
    const bytes = randomBytes(MB * 1024 * 1024);
    for (const d of ['d1', 'd2']) mkdirSync(join(work, d), { recursive: true });
    writeFileSync(join(work, 'd1', `${i}.jpg`), bytes);
    writeFileSync(join(work, 'd2', `${i}.jpg`), bytes);
    recorded.push({ input: join(work, 'd1', `${i}.jpg`), size: bytes.length, sha256: await sha256Of(bytes) });
  }
  const ways = {
    'both copies read (no recorded digest)': (i: number) => ({ ...recorded[i], size: null, sha256: null }),
    'recorded size + SHA-256, new copy read': (i: number) => recorded[i],
  };
  const runs = new Map<string, { ms: number; mb: number }[]>(Object.keys(ways).map((k) => [k, []]));
  const load0 = loadavg1();
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, earlier] of r % 2 ? Object.entries(ways).reverse() : Object.entries(ways)) {
      const [t0, b0] = [performance.now(), rchar()];
      for (let i = 0; i < FILES; i++)
        if (!(await samePhoto(earlier(i), join(work, 'd2', `${i}.jpg`)))) throw new Error('not the same photo');
      runs.get(name)!.push({ ms: performance.now() - t0, mb: (rchar() - b0) / 1024 / 1024 });
    }
  }
  console.log(`${machine()}; load ${load0} at start; ${FILES} files x ${MB} MB, ${ROUNDS} rounds (medians)`);
  for (const [name, rs] of runs)
    console.log(
      `${name}: ${median(rs.map((x) => x.mb)).toFixed(0)} MB read, ${median(rs.map((x) => x.ms)).toFixed(0)} ms`,
    );
} finally {
  rmSync(work, { recursive: true, force: true });
}
