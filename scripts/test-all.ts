/**
 * `npm test`: every check (format, lint, types, build; two at a time), then vitest and Playwright, then a summary
 * naming each failed test, as CI keeps only a long log's tail. A failed test runs once more: one that
 * then passes is named flaky, so a timing race neither sinks the run nor passes unseen.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';

interface Step {
  name: string;
  cmd: string;
  args: string[];
  env?: Record<string, string>;
  report?: string;
}

// Not under test-results/, which Playwright empties as it starts.
const reports = join(process.cwd(), '.tmp', 'test-summary');
const vitestJson = join(reports, 'vitest.json');
const playwrightJson = join(reports, 'playwright.json');

const steps: Step[] = [
  { name: 'format', cmd: 'npx', args: ['prettier', '--check', '.'] },
  { name: 'lint', cmd: 'npx', args: ['eslint', '.'] },
  { name: 'typecheck', cmd: 'npx', args: ['tsc', '-p', 'tsconfig.json', '--noEmit'] },
  {
    name: 'svelte-check',
    cmd: 'npx',
    args: ['svelte-check', '--tsconfig', './tsconfig.json', '--threshold', 'error', '--output', 'human'],
  },
  { name: 'build', cmd: 'npx', args: ['electron-vite', 'build'] },
  {
    name: 'vitest',
    cmd: 'npx',
    report: vitestJson,
    args: ['vitest', 'run', '--retry=1', '--reporter=default', '--reporter=json', `--outputFile.json=${vitestJson}`],
  },
  {
    name: 'playwright',
    cmd: 'npx',
    report: playwrightJson,
    args: ['playwright', 'test', '--retries=1', '--reporter=list,json'],
    env: { PLAYWRIGHT_JSON_OUTPUT_NAME: playwrightJson },
  },
];

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

const only = process.argv.slice(2);
rmSync(reports, { recursive: true, force: true });
mkdirSync(reports, { recursive: true });

/** Runs a step; with `quiet` its output is held and printed whole when it ends, so two at once do not interleave. */
function run(step: Step, quiet: boolean): Promise<{ ok: boolean; verdict: string }> {
  const t0 = Date.now();
  const header = `\n=== ${step.name}: ${step.cmd} ${step.args.join(' ')}\n`;
  if (!quiet) process.stdout.write(header);
  const child = spawn(step.cmd, step.args, {
    stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    env: { ...process.env, ...step.env },
  });
  const held: Buffer[] = [];
  child.stdout?.on('data', (d: Buffer) => held.push(d));
  child.stderr?.on('data', (d: Buffer) => held.push(d));
  return new Promise((done) =>
    child.once('close', (code, signal) => {
      const ok = code === 0;
      const verdict = ok ? 'passed' : `FAILED (exit ${code ?? signal})`;
      if (quiet) process.stdout.write(header + Buffer.concat(held).toString());
      process.stdout.write(`=== ${step.name} ${verdict} in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
      done({ ok, verdict });
    }),
  );
}

/** Runs steps `width` at a time (one alone streams its output), in their order of completion. */
async function runAll(list: Step[], width: number) {
  const results = new Map<Step, { ok: boolean; verdict: string }>();
  const queue = [...list];
  const lane = async () => {
    for (let step = queue.shift(); step; step = queue.shift()) results.set(step, await run(step, list.length > 1));
  };
  await Promise.all(Array.from({ length: Math.min(width, list.length) }, lane));
  return results;
}

const chosen = steps.filter((s) => only.length === 0 || only.includes(s.name));
// The checks and the build are one thread each (the build mostly): two at a time keep both cores busy.
const results = await runAll(
  chosen.filter((s) => !s.report),
  Math.max(1, Math.min(2, availableParallelism())),
);
for (const step of chosen.filter((s) => s.report)) for (const [k, v] of await runAll([step], 1)) results.set(k, v);

const lines: string[] = [];
let passed = 0;
let failed = 0;
for (const step of chosen) {
  const { ok, verdict } = results.get(step)!;
  lines.push(`${step.name}: ${verdict}`);
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
process.stdout.write(`\n${lines.join('\n')}\nsteps: ${passed} passed, ${failed} failed\n`);
process.exitCode = failed ? 1 : 0;
