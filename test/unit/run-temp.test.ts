import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = mkdtempSync(join(tmpdir(), 'run-temp-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const runTemp = join(import.meta.dirname, '..', 'run-temp.ts');

/** Runs `body` in a Node process that has imported run-temp.ts as `rt`; returns what it printed, parsed. */
function inNode(body: string, env: NodeJS.ProcessEnv): Record<string, unknown> {
  const script = `import * as rt from ${JSON.stringify(runTemp)};\nconst out = {};\n${body}\nconsole.log(JSON.stringify(out));`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { env, encoding: 'utf8' }));
}

describe("a test run's temp folder", () => {
  it('is made in the temp root, becomes TMPDIR for what the run starts, and goes at the end; a run inside keeps it', () => {
    const env = { PATH: process.env.PATH, TMPDIR: root };
    const seen = inNode(
      `out.dir = rt.useRunTemp('x');
       out.tmpdir = (await import('node:os')).tmpdir();
       const { execFileSync } = await import('node:child_process');
       // A run inside this one: the same folder, and its teardown leaves it alone.
       out.inner = execFileSync(process.execPath, ['--input-type=module', '-e',
         'import * as rt from ' + JSON.stringify(${JSON.stringify(runTemp)}) + '; const d = rt.useRunTemp("y"); rt.removeRunTemp(); console.log(d)'],
         { encoding: 'utf8' }).trim();
       out.afterInner = (await import('node:fs')).existsSync(out.dir);
       rt.removeRunTemp();
       out.afterOwn = (await import('node:fs')).existsSync(out.dir);`,
      env,
    );
    expect(String(seen.dir)).toMatch(new RegExp(`^${root}/mediadesk-x-`));
    expect(seen.tmpdir).toBe(seen.dir);
    expect(seen.inner).toBe(seen.dir);
    expect(seen.afterInner).toBe(true);
    expect(seen.afterOwn).toBe(false);
  });

  it('goes when the process that made it exits without its teardown, with what was put in it', () => {
    const seen = inNode(`out.dir = rt.useRunTemp('e'); (await import('node:fs')).mkdirSync(out.dir + '/md-left');`, {
      PATH: process.env.PATH,
      TMPDIR: root,
    });
    expect(String(seen.dir)).toMatch(new RegExp(`^${root}/mediadesk-e-`));
    expect(existsSync(String(seen.dir))).toBe(false);
  });

  it('is kept with MEDIADESK_KEEP_TMP=1', () => {
    const seen = inNode(`out.dir = rt.useRunTemp('k'); rt.removeRunTemp();`, {
      PATH: process.env.PATH,
      TMPDIR: root,
      MEDIADESK_KEEP_TMP: '1',
    });
    expect(existsSync(String(seen.dir))).toBe(true);
  });
});
