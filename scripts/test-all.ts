/**
 * `npm test`: every check in order (format, lint, types, build, vitest, Playwright), then a summary
 * naming each failed test, as CI keeps only a long log's tail. A failed test runs once more: one that
 * then passes is named flaky, so a timing race neither sinks the run nor passes unseen.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
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
const lines: string[] = [];
let passed = 0;
let failed = 0;
for (const step of steps.filter((s) => only.length === 0 || only.includes(s.name))) {
  const t0 = Date.now();
  process.stdout.write(`\n=== ${step.name}: ${step.cmd} ${step.args.join(' ')}\n`);
  const r = spawnSync(step.cmd, step.args, { stdio: 'inherit', env: { ...process.env, ...step.env } });
  const ok = r.status === 0;
  const verdict = ok ? 'passed' : `FAILED (exit ${r.status ?? r.signal})`;
  process.stdout.write(`=== ${step.name} ${verdict} in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
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
