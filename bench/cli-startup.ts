/**
 * CLI start-up: `mediadesk --help` and `mediadesk jobs list` (a new data folder, so an empty queue)
 * against a bare `node -e 0`, run in turn (A B A B …) so each ratio compares runs that met the same
 * machine. `--base DIR`: the same commands from another checkout too (main before a change), in the
 * same turns. The CPU is the children's, as the kernel counts it (Linux; 10 ms steps). The first
 * run of each command is not counted (it fills Node's compile cache, as a user's first call does).
 * Run: node bench/cli-startup.ts [--runs N] [--base DIR]
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadavg1, machine } from './engine-common.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '9' }, base: { type: 'string' } } });
const RUNS = Number(values.runs);
const home = mkdtempSync(join(tmpdir(), 'bench-cli-startup-'));
const env = { ...process.env, MEDIADESK_HOME: home };

/** This process's waited-for children's CPU seconds (user + system), from /proc; null elsewhere. */
function childCpu(): number | null {
  if (!existsSync('/proc/self/stat')) return null;
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  // cutime and cstime: fields 16 and 17 of stat(5), counted here from field 3.
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

function timed(argv: string[]): { wall: number; cpu: number | null } {
  const cpu0 = childCpu();
  const t0 = performance.now();
  const r = spawnSync(process.execPath, argv, { env, stdio: 'ignore' });
  const wall = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}`);
  const cpu1 = childCpu();
  return { wall, cpu: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const checkouts = [['this checkout', resolve(import.meta.dirname, '..')]];
if (values.base) checkouts.push([`base (${values.base})`, resolve(values.base)]);
const commands = checkouts.flatMap(([label, dir]) =>
  [['--help'], ['jobs', 'list']].map((args) => ({
    label: `${label}: mediadesk ${args.join(' ')}`,
    argv: [join(dir, 'bin/mediadesk.js'), ...args],
  })),
);

console.log(`${machine()}; load ${loadavg1()}; ${RUNS} runs each after one not counted`);
try {
  for (const c of commands) timed(c.argv);
  timed(['-e', '0']);
  const rows = commands.map(() => ({ wall: [] as number[], cpu: [] as number[], wallRatio: [] as number[] }));
  const bare = { wall: [] as number[], cpu: [] as number[] };
  for (let i = 0; i < RUNS; i++)
    commands.forEach((c, k) => {
      const a = timed(c.argv);
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
  rmSync(home, { recursive: true, force: true });
}
