/**
 * `npm test`: the checks in two lanes side by side (format then the build, lint then the types), then
 * vitest, then Playwright, each step once those it comes after have ended; then a summary naming each
 * failed test, as CI keeps only a long log's tail. A failed test runs once more: one that then passes
 * is named flaky, so a timing race neither sinks the run nor passes unseen.
 *
 * Each step runs in a process group of its own, with a time limit: a step over it, and any process a
 * step leaves running, is named with what it runs and ended, so a hang fails the run saying where
 * instead of holding CI's output open until its own limit.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { finished } from 'node:stream/promises';

interface Step {
  name: string;
  cmd: string;
  args: string[];
  env?: Record<string, string>;
  report?: string;
  /** Minutes the step may take (MEDIADESK_STEP_MINUTES overrides every step's). */
  minutes: number;
  /** The steps this one starts after (by name; those not run are not waited for). Steps run side by side. */
  after?: string[];
  /**
   * Output held and printed whole as the step ends (the short checks); otherwise printed live, each
   * line after the step's name, as steps beside each other print at once.
   */
  held?: boolean;
}

// Not under test-results/, which Playwright empties as it starts.
const reports = join(process.cwd(), '.tmp', 'test-summary');
const vitestJson = join(reports, 'vitest.json');
const playwrightJson = join(reports, 'playwright.json');

// The checks in two lanes, each mostly a core's work (tsgo takes two for a few seconds), then vitest,
// then Playwright. vitest beside Playwright took 10 % more CPU than one after the other, and no less
// time: the run is bound by CPU, and two suites' workers on two cores cost more in switching than the
// cores' idle time they fill (docs/TESTING.md); their tests also share the temp folder's state.
const npmTestSteps: Step[] = [
  { name: 'format', cmd: 'npx', args: ['prettier', '--check', '.'], minutes: 5, held: true },
  {
    // svelte-check type-checks every file tsconfig.json includes, .ts as well as .svelte: tsc beside it
    // checked the same files a second time (30 CPU-s). Through TypeScript 7's native compiler (--tsgo):
    // 23 CPU-s and 13 s against 36 and 25.
    name: 'types',
    cmd: 'npx',
    args: ['svelte-check', '--tsconfig', './tsconfig.json', '--threshold', 'error', '--output', 'human', '--tsgo'],
    minutes: 8,
    held: true,
    after: ['lint'],
  },
  { name: 'lint', cmd: 'npx', args: ['eslint', '.'], minutes: 5, held: true },
  { name: 'build', cmd: 'npx', args: ['electron-vite', 'build'], minutes: 5, held: true, after: ['format'] },
  {
    name: 'vitest',
    cmd: 'npx',
    report: vitestJson,
    minutes: 25,
    after: ['format', 'types', 'lint', 'build'],
    args: ['vitest', 'run', '--retry=1', '--reporter=default', '--reporter=json', `--outputFile.json=${vitestJson}`],
  },
  {
    name: 'playwright',
    cmd: 'npx',
    report: playwrightJson,
    minutes: 35,
    after: ['vitest'],
    args: ['playwright', 'test', '--retries=1', '--reporter=list,json'],
    env: { PLAYWRIGHT_JSON_OUTPUT_NAME: playwrightJson },
  },
];
// MEDIADESK_TEST_ALL_STEPS: a JSON file of steps run instead (test/unit/test-all.test.ts).
const stepsFile = process.env.MEDIADESK_TEST_ALL_STEPS;
const steps: Step[] = stepsFile ? (JSON.parse(readFileSync(stepsFile, 'utf8')) as Step[]) : npmTestSteps;

interface Finding {
  test: string;
  error: string;
}

const firstLine = (text: unknown): string =>
  String(text ?? '')
    .replace(/\u001b\[[0-9;]*m/g, '')
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '') ?? '';

/** Failed and flaky (passed on a retry) tests from vitest's JSON report. */
function vitestFindings(file: string): { failed: Finding[]; flaky: Finding[] } {
  const report = JSON.parse(readFileSync(file, 'utf8')) as {
    testResults: {
      name: string;
      message?: string;
      status: string;
      assertionResults: { fullName: string; status: string; failureMessages: string[]; retryCount?: number }[];
    }[];
  };
  const failed: Finding[] = [];
  const flaky: Finding[] = [];
  for (const suite of report.testResults) {
    const suitePath = suite.name.replace(process.cwd() + '/', '');
    if (suite.status === 'failed' && suite.assertionResults.every((t) => t.status !== 'failed')) {
      failed.push({ test: suitePath, error: firstLine(suite.message) });
    }
    for (const t of suite.assertionResults) {
      if (t.status === 'failed')
        failed.push({ test: `${suitePath} › ${t.fullName}`, error: firstLine(t.failureMessages[0]) });
      else if (t.status === 'passed' && (t.retryCount ?? 0) > 0)
        flaky.push({ test: `${suitePath} › ${t.fullName}`, error: `passed on retry ${t.retryCount}` });
    }
  }
  return { failed, flaky };
}

interface PwSuite {
  title: string;
  file?: string;
  specs?: PwSpec[];
  suites?: PwSuite[];
}
interface PwSpec {
  title: string;
  file: string;
  line: number;
  tests: { status: string; results: { status: string; error?: { message?: string } }[] }[];
}

/** Failed and flaky tests from Playwright's JSON report. */
function playwrightFindings(file: string): { failed: Finding[]; flaky: Finding[] } {
  const report = JSON.parse(readFileSync(file, 'utf8')) as { suites: PwSuite[]; errors?: { message?: string }[] };
  const failed: Finding[] = (report.errors ?? []).map((e) => ({
    test: '(outside any test)',
    error: firstLine(e.message),
  }));
  const flaky: Finding[] = [];
  const walk = (suite: PwSuite, path: string[]) => {
    const titles = suite.file === suite.title ? path : [...path, suite.title];
    for (const spec of suite.specs ?? []) {
      for (const t of spec.tests) {
        const name = `test/e2e/${spec.file}:${spec.line} › ${[...titles, spec.title].join(' › ')}`;
        const firstError = t.results.find((r) => r.error)?.error?.message;
        if (t.status === 'unexpected') failed.push({ test: name, error: firstLine(firstError) });
        else if (t.status === 'flaky')
          flaky.push({ test: name, error: `passed on retry; first try: ${firstLine(firstError)}` });
      }
    }
    for (const s of suite.suites ?? []) walk(s, titles);
  };
  for (const s of report.suites) walk(s, []);
  return { failed, flaky };
}

/** `pid args` of each live process in group `pgid`, read from `ps` (the step's leader among them while it runs). */
function processesIn(pgid: number): string[] {
  let table = '';
  try {
    table = execFileSync('ps', ['-eo', 'pid=,pgid=,stat=,args='], { encoding: 'utf8' });
  } catch {
    return [];
  }
  return (
    table
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      // A zombie (Z) has ended already; it waits only for its parent to read its exit.
      .filter(([pid, group, stat]) => pid && Number(group) === pgid && !stat.startsWith('Z'))
      .map(([pid, , , ...args]) => `${pid} ${args.join(' ').slice(0, 240)}`)
  );
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // the group is gone already
  }
}

let interruptedBy: NodeJS.Signals | null = null;

interface StepRun {
  status: number | null;
  signal: string | null;
  timedOut: boolean;
  /** Processes the step started that were still running once it ended (then ended by us). */
  leftRunning: string[];
  /** What a held step printed, held until it ended; empty for a step printed live. */
  output: string;
}

/** Runs a step in a process group of its own, ended at its time limit; what it leaves running is ended too. */
async function runStep(step: Step): Promise<StepRun> {
  const env = { ...process.env, ...step.env };
  if (process.platform === 'win32') {
    const r = spawnSync(step.cmd, step.args, { stdio: 'inherit', env, shell: true });
    return { status: r.status, signal: r.signal, timedOut: false, leftRunning: [], output: '' };
  }
  const minutes = Number(process.env.MEDIADESK_STEP_MINUTES) || step.minutes;
  const child = spawn(step.cmd, step.args, { stdio: ['ignore', 'pipe', 'pipe'], env, detached: true });
  const pgid = child.pid!;
  let output = '';
  for (const stream of [child.stdout, child.stderr]) {
    if (step.held) stream.on('data', (d) => (output += d));
    else createInterface({ input: stream, crlfDelay: Infinity }).on('line', (l) => console.log(`[${step.name}] ${l}`));
  }
  // Ctrl-C (or CI's stop) reaches the step's group, then ends the run: no step after it starts.
  const forward = (signal: NodeJS.Signals) => {
    interruptedBy = signal;
    signalGroup(pgid, signal);
  };
  process.on('SIGINT', forward).on('SIGTERM', forward);
  let timedOut = false;
  const limit = setTimeout(() => {
    timedOut = true;
    const running = processesIn(pgid);
    process.stdout.write(
      `\n=== ${step.name} is over its ${minutes} min; ending it. Still running:\n` +
        running
          .slice(0, 80)
          .map((p) => `  ${p}\n`)
          .join(''),
    );
    signalGroup(pgid, 'SIGTERM');
    setTimeout(() => signalGroup(pgid, 'SIGKILL'), 15_000).unref();
  }, minutes * 60_000);
  const [status, signal] = (await once(child, 'exit')) as [number | null, string | null];
  clearTimeout(limit);
  process.off('SIGINT', forward).off('SIGTERM', forward);
  const leftRunning = processesIn(pgid);
  if (leftRunning.length) signalGroup(pgid, 'SIGKILL');
  // Its last lines, read once whatever held its output open has ended too (a process outside its
  // group could hold it for ever: not past 10 s).
  const outputEnded = Promise.all([finished(child.stdout!), finished(child.stderr!)]).catch(() => {});
  await Promise.race([outputEnded, new Promise((res) => setTimeout(res, 10_000).unref())]);
  return { status, signal, timedOut, leftRunning, output };
}

const only = process.argv.slice(2);
rmSync(reports, { recursive: true, force: true });
mkdirSync(reports, { recursive: true });
const lines: string[] = [];
let passed = 0;
let failed = 0;
const ran = new Set<string>();

const header = (step: Step) => `\n=== ${step.name}: ${step.cmd} ${step.args.join(' ')}\n`;

/** Runs one step and records its verdict (and its report's failed and flaky tests) for the summary. */
async function runAndRecord(step: Step): Promise<void> {
  ran.add(step.name);
  const t0 = Date.now();
  if (!step.held) process.stdout.write(header(step));
  const r = await runStep(step);
  const ok = r.status === 0 && !r.timedOut;
  let verdict = ok ? 'passed' : `FAILED (exit ${r.status ?? r.signal})`;
  if (r.timedOut) verdict = 'FAILED (over its time limit; what still ran is listed above, where it was ended)';
  const ended = `=== ${step.name} ${verdict} in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`;
  process.stdout.write(step.held ? header(step) + r.output + ended : ended);
  lines.push(`${step.name}: ${verdict}`);
  if (r.leftRunning.length) {
    const said = r.leftRunning.slice(0, 20).map((p) => `    ${p}`);
    lines.push(`  left running after it ended, now ended (${r.leftRunning.length}):\n${said.join('\n')}`);
  }
  if (step.report) {
    try {
      const found = step.name === 'vitest' ? vitestFindings(step.report) : playwrightFindings(step.report);
      for (const f of found.failed) lines.push(`  failed: ${f.test}\n    ${f.error}`);
      for (const f of found.flaky) lines.push(`  flaky: ${f.test}\n    ${f.error}`);
    } catch (err) {
      if (!ok) lines.push(`  (no report to name the failed tests: ${(err as Error).message})`);
    }
  }
  if (ok) passed++;
  else failed++;
}

const chosen = steps.filter((s) => only.length === 0 || only.includes(s.name));
// Each step as soon as the steps it comes after have ended (those not chosen are not waited for).
const byName = new Map(chosen.map((s) => [s.name, s]));
const ends = new Map<string, Promise<void>>();
const endOf = (step: Step): Promise<void> => {
  let end = ends.get(step.name);
  if (!end) {
    const before = (step.after ?? []).flatMap((name) => (byName.has(name) ? [endOf(byName.get(name)!)] : []));
    end = Promise.all(before).then(() => (interruptedBy ? undefined : runAndRecord(step)));
    ends.set(step.name, end);
  }
  return end;
};
await Promise.all(chosen.map(endOf));
const notRun = chosen.filter((s) => !ran.has(s.name)).map((s) => s.name);
if (interruptedBy) lines.push(`stopped by ${interruptedBy}: ${notRun.join(', ') || 'no step'} did not run`);
process.stdout.write(`\n${lines.join('\n')}\nsteps: ${passed} passed, ${failed} failed\n`);
process.exitCode = failed || interruptedBy ? 1 : 0;
