/**
 * `npm test`: every check a change must pass, in order, each one's own output shown, then one
 * summary line. Lint (which enforces that electron/core never imports electron), type checks,
 * the renderer and Electron bundles, vitest (unit, Sandbox, engine, audit, media, keychain),
 * and Playwright end-to-end tests in Chromium against the web host.
 */
import { spawnSync } from 'node:child_process';

interface Step { name: string; cmd: string; args: string[] }

const steps: Step[] = [
  { name: 'lint', cmd: 'npx', args: ['eslint', '.'] },
  { name: 'typecheck', cmd: 'npx', args: ['tsc', '-p', 'tsconfig.json', '--noEmit'] },
  { name: 'svelte-check', cmd: 'npx', args: ['svelte-check', '--tsconfig', './tsconfig.json', '--threshold', 'error', '--output', 'human'] },
  { name: 'build', cmd: 'npx', args: ['electron-vite', 'build'] },
  { name: 'vitest', cmd: 'npx', args: ['vitest', 'run'] },
  { name: 'playwright', cmd: 'npx', args: ['playwright', 'test'] },
];

const only = process.argv.slice(2);
let passed = 0;
let failed = 0;
for (const step of steps.filter((s) => only.length === 0 || only.includes(s.name))) {
  const t0 = Date.now();
  process.stdout.write(`\n=== ${step.name}: ${step.cmd} ${step.args.join(' ')}\n`);
  const r = spawnSync(step.cmd, step.args, { stdio: 'inherit', env: process.env });
  const ok = r.status === 0;
  process.stdout.write(`=== ${step.name} ${ok ? 'passed' : `FAILED (exit ${r.status ?? r.signal})`} in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  if (ok) passed++;
  else failed++;
}
process.stdout.write(`\nsteps: ${passed} passed, ${failed} failed\n`);
process.exitCode = failed ? 1 : 0;
