import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../audit/helpers.ts';

const root = join(import.meta.dirname, '..', '..');
const workflow = (name: string) => readFileSync(join(root, '.github', 'workflows', name), 'utf8');
const validator = join(root, 'node_modules', '@action-validator', 'cli', 'cli.mjs');

describe('the GitHub workflows', () => {
  it.each(['ci.yml', 'release.yml'])('%s is valid against the workflow schema', (name) => {
    const run = spawnSync(process.execPath, [validator, join(root, '.github', 'workflows', name)], {
      encoding: 'utf8',
    });
    expect(run.stdout + run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('the validator does refuse a broken workflow', () => {
    const tmp = tempDir('md-workflow-');
    try {
      const broken = tmp.file('broken.yml', 'on: push\njobs:\n  a:\n    runs-on: x\n    stepz: []\n');
      const run = spawnSync(process.execPath, [validator, broken], { encoding: 'utf8' });
      expect(run.status).not.toBe(0);
      expect(run.stdout + run.stderr).toContain("Additional property 'stepz' is not allowed");
    } finally {
      tmp.cleanup();
    }
  });

  it('CI runs on the three systems: install, unit tests, the launch test on the packed app, installers uploaded', () => {
    const ci = workflow('ci.yml');
    for (const os of ['ubuntu-latest', 'macos-latest', 'windows-latest']) expect(ci).toContain(`os: ${os}`);
    const order = [
      'npm ci',
      'npx vitest run',
      '--dir',
      'MEDIADESK_PACKAGED_APP',
      'xvfb-run -a npx playwright test test/e2e/electron.spec.ts',
      'npm run package -- --skip-build ${{ matrix.platform }}',
      'node scripts/package-check.ts dist',
      'actions/upload-artifact',
    ].map((step) => ci.indexOf(step));
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('CI on Linux runs what .ci/run runs, format check and the web-host Playwright suite included, before the pack', () => {
    const ci = workflow('ci.yml');
    const step = ci.indexOf('run: xvfb-run -a bash .ci/run');
    expect(step).toBeGreaterThan(ci.indexOf('npm ci'));
    expect(step).toBeLessThan(ci.indexOf('--dir'));
    expect(ci).toContain("if: matrix.tests == 'all'");
    expect(ci).toMatch(/name: Linux\n\s+os: ubuntu-latest\n(\s+#.*\n)*\s+tests: all\n/);
    expect(readFileSync(join(root, '.ci', 'run'), 'utf8')).toContain('exec bash scripts/test.sh');
    const all = readFileSync(join(root, 'scripts', 'test-all.ts'), 'utf8');
    for (const cmd of ["'prettier', '--check'", "'eslint'", "'vitest', 'run'", "'playwright', 'test'"])
      expect(all).toContain(cmd);
  });

  it('a v* tag drafts a release, publishes the installers into it and then makes it public', () => {
    const release = workflow('release.yml');
    expect(release).toMatch(/tags: \['v\*'\]/);
    expect(release).toContain('--publish always');
    expect(release.indexOf('gh release create')).toBeLessThan(release.indexOf('--publish always'));
    expect(release).toContain('gh release edit "$GITHUB_REF_NAME" --draft=false');
  });
});
