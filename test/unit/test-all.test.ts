// `npm test`'s runner (scripts/test-all.ts) over steps of the test's own: steps side by side once the
// steps they come after end, held output whole, live output by line, time limits, processes left behind,
// and an interrupt.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { until } from '../wait.ts';

const RUNNER = resolve(import.meta.dirname, '../../scripts/test-all.ts');

interface Step {
  name: string;
  cmd: string;
  args: string[];
  minutes: number;
  after?: string[];
  held?: boolean;
}

const node = (name: string, code: string, extra: Partial<Step> = {}): Step => ({
  name,
  cmd: process.execPath,
  args: ['-e', code],
  minutes: 1,
  ...extra,
});

/** Starts the runner over `steps` in a folder of its own; `done` is its exit code and output. */
function startRunner(steps: Step[]) {
  const dir = mkdtempSync(join(tmpdir(), 'md-test-all-'));
  const file = join(dir, 'steps.json');
  writeFileSync(file, JSON.stringify(steps));
  const env = { ...process.env, MEDIADESK_TEST_ALL_STEPS: file, MEDIADESK_STEP_MINUTES: '' };
  const child = spawn(process.execPath, [RUNNER], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const done = new Promise<{ code: number | null; out: string }>((res) =>
    child.on('close', (code) => res({ code, out })),
  );
  return { dir, child, done, output: () => out };
}

/** Waits until `file` exists (a step's rendezvous), up to the step's own limit. */
const waitFor = (file: string, then: string) =>
  `const f=require('fs');const t=setInterval(()=>{if(f.existsSync(${JSON.stringify(file)})){clearInterval(t);${then}}},20)`;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('npm test runner (scripts/test-all.ts)', () => {
  it('runs steps side by side once those they come after end, prints held output whole, names failures, and ends what a step leaves or overruns', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'md-test-all-meet-'));
    const [a, b] = [join(dir, 'a-started'), join(dir, 'b-started')];
    const leftPid = join(dir, 'left.pid');
    // Each of the first two waits for the other: they pass only if both run at once.
    const steps: Step[] = [
      node(
        'meet-a',
        `require('fs').writeFileSync('${a}','');console.log('a says one');${waitFor(b, "console.log('a says two')")}`,
        { held: true },
      ),
      node(
        'meet-b',
        `require('fs').writeFileSync('${b}','');console.log('b says one');${waitFor(a, "console.log('b says two')")}`,
        { held: true },
      ),
      node('fails', 'process.exit(3)', { held: true, after: ['meet-a'] }),
      node(
        'leaves-one',
        `const c=require('child_process').spawn('sleep',['600'],{stdio:'ignore'});require('fs').writeFileSync('${leftPid}',String(c.pid));c.unref()`,
        { held: true, after: ['meet-b'] },
      ),
      { name: 'overruns', cmd: 'sleep', args: ['600'], minutes: 0.02, after: ['fails', 'leaves-one'] },
      node('last', "console.log('last ran');console.error('and said so')", { after: ['overruns'] }),
    ];
    const { done } = startRunner(steps);
    const { code, out } = await done;

    expect(code).toBe(1);
    // Held and printed whole: a held step's lines are never split by another's.
    expect(out).toMatch(/=== meet-a: [^\n]+\na says one\na says two\n=== meet-a passed/);
    expect(out).toMatch(/=== meet-b: [^\n]+\nb says one\nb says two\n=== meet-b passed/);
    expect(out).toContain('=== fails FAILED (exit 3)');
    expect(out).toMatch(/=== overruns is over its 0\.02 min; ending it\. Still running:\n {2}\d+ sleep 600\n/);
    expect(out).toContain('overruns: FAILED (over its time limit');
    // Printed live, each line after its step's name, stderr too.
    expect(out).toMatch(/=== last: [^\n]+\n/);
    expect(out).toContain('[last] last ran\n');
    expect(out).toContain('[last] and said so\n');
    // Each step after those it comes after: overruns only once fails and leaves-one ended.
    expect(out.indexOf('=== overruns is over')).toBeGreaterThan(out.indexOf('=== fails FAILED'));
    expect(out.indexOf('=== overruns is over')).toBeGreaterThan(out.indexOf('=== leaves-one passed'));
    expect(out).toMatch(/leaves-one: passed\n {2}left running after it ended, now ended \(1\):\n {4}\d+ sleep 600/);
    const pid = Number(readFileSync(leftPid, 'utf8'));
    await until(() => !alive(pid), { what: `the sleep leaves-one left (${pid}) to be ended` });
    expect(out).toMatch(/steps: 4 passed, 2 failed\n$/);
  });

  it('SIGTERM ends the running step and the run: the steps after it are named as not run, exit 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'md-test-all-stop-'));
    const started = join(dir, 'started');
    const { child, done } = startRunner([
      node('first', "console.log('first ran')"),
      node('long', `require('fs').writeFileSync('${started}','');setInterval(()=>{},1000)`, { after: ['first'] }),
      node('after', "console.log('after ran')", { after: ['long'] }),
      node('later', "console.log('later ran')", { after: ['after'] }),
    ]);
    await until(() => existsSync(started), { what: 'the long step to start' });
    child.kill('SIGTERM');
    const { code, out } = await done;
    expect(code).toBe(1);
    expect(out).toContain('first ran');
    expect(out).toContain('=== long FAILED (exit SIGTERM)');
    expect(out).not.toContain('after ran');
    expect(out).toContain('stopped by SIGTERM: after, later did not run');
    expect(out).toMatch(/steps: 1 passed, 1 failed\n$/);
  });
});
