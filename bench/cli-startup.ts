/**
 * CLI start-up: `mediadesk --help` and `mediadesk jobs list` against a bare `node -e 0`, run in turn
 * (A B A B …) so each ratio compares runs that met the same machine. `jobs list` reads a data folder
 * holding one batch of `--queued N` queued jobs (1,000; 0: a new folder, an empty queue), which the
 * checkout's own store writes first. `--base DIR`: the same commands from another checkout too (main before a change), in the
 * same turns. The CPU is the children's, as the kernel counts it (Linux; 10 ms steps). The first
 * run of each command is not counted (it fills Node's compile cache, as a user's first call does).
 * Run: node bench/cli-startup.ts [--runs N] [--base DIR] [--queued N]
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { loadavg1, machine } from './engine-common.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '9' },
    base: { type: 'string' },
    queued: { type: 'string', default: '1000' },
  },
});
const RUNS = Number(values.runs);
const QUEUED = Number(values.queued);
const homes: string[] = [];

/** A data folder for one checkout, holding QUEUED queued jobs written by that checkout's own store. */
async function homeFor(dir: string): Promise<string> {
  const home = mkdtempSync(join(tmpdir(), 'bench-cli-startup-'));
  homes.push(home);
  if (!QUEUED) return home;
  const load = (path: string) => import(pathToFileURL(join(dir, path)).href);
  const [{ openDatabase }, { QUEUE_MIGRATIONS }, { JobStore }] = await Promise.all([
    load('electron/core/db/open.ts'),
    load('electron/core/queue/migrations.ts'),
    load('electron/core/queue/store.ts'),
  ]);
  const db = openDatabase(join(home, 'mediadesk.db'), QUEUE_MIGRATIONS);
  new JobStore(db).insertBatch({
    id: 'bench',
    tool: 'upscaler-precision',
    outDir: home,
    params: {},
    roots: [],
    snapshot: { namingTemplate: '{name}_{tool}.{ext}', slugs: {} },
    backend: 'sandbox',
    jobs: Array.from({ length: QUEUED }, (_, i) => ({
      id: `j${i}`,
      inputPath: `/in/${i}.png`,
      relDir: '',
      params: {},
    })),
  });
  db.close();
  return home;
}

/** This process's waited-for children's CPU seconds (user + system), from /proc; null elsewhere. */
function childCpu(): number | null {
  if (!existsSync('/proc/self/stat')) return null;
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  // cutime and cstime: fields 16 and 17 of stat(5), counted here from field 3.
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

function timed(argv: string[], home = homes[0]): { wall: number; cpu: number | null } {
  const cpu0 = childCpu();
  const t0 = performance.now();
  const r = spawnSync(process.execPath, argv, { env: { ...process.env, MEDIADESK_HOME: home }, stdio: 'ignore' });
  const wall = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}`);
  const cpu1 = childCpu();
  return { wall, cpu: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const checkouts = [['this checkout', resolve(import.meta.dirname, '..')]];
if (values.base) checkouts.push([`base (${values.base})`, resolve(values.base)]);
const commands = [];
for (const [label, dir] of checkouts) {
  const home = await homeFor(dir);
  for (const args of [['--help'], ['jobs', 'list']])
    commands.push({
      label: `${label}: mediadesk ${args.join(' ')}`,
      argv: [join(dir, 'bin/mediadesk.js'), ...args],
      home,
    });
}

console.log(
  `${machine()}; load ${loadavg1()}; ${RUNS} runs each after one not counted; jobs list over ${QUEUED} queued jobs`,
);
try {
  for (const c of commands) timed(c.argv, c.home);
  timed(['-e', '0']);
  const rows = commands.map(() => ({ wall: [] as number[], cpu: [] as number[], wallRatio: [] as number[] }));
  const bare = { wall: [] as number[], cpu: [] as number[] };
  for (let i = 0; i < RUNS; i++)
    commands.forEach((c, k) => {
      const a = timed(c.argv, c.home);
      const b = timed(['-e', '0']);
      rows[k].wall.push(a.wall);
      rows[k].wallRatio.push(a.wall / b.wall);
      bare.wall.push(b.wall);
      if (a.cpu !== null && b.cpu !== null) {
        rows[k].cpu.push(a.cpu);
        bare.cpu.push(b.cpu);
      }
    });
  const cpu = (xs: number[]) => (xs.length ? `${median(xs).toFixed(2)} CPU-s` : 'CPU unknown');
  const cpuRatio = (xs: number[]) =>
    xs.length && median(bare.cpu) > 0 ? `, CPU ${(median(xs) / median(bare.cpu)).toFixed(1)} times` : '';
  console.log(`node -e 0: median ${median(bare.wall).toFixed(3)} s wall, ${cpu(bare.cpu)}`);
  commands.forEach((c, k) =>
    console.log(
      `${c.label}: median ${median(rows[k].wall).toFixed(3)} s wall, ${cpu(rows[k].cpu)}; ` +
        `wall ${median(rows[k].wallRatio).toFixed(1)} times node -e 0 (median of the pairs)${cpuRatio(rows[k].cpu)}; goal at most 4`,
    ),
  );
  console.log(`load ${loadavg1()} at the end`);
} finally {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
}
