import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname } from 'node:path';
import {
  installedPaths,
  integrationPlan,
  type IntegrationPlace,
  type IntegrationStep,
  type IntegrationSwitches,
} from './os-integration.ts';

/** This machine's place for the integrations of the app at `exe` (HOME and APPDATA honoured, as the file managers read them). */
export function integrationPlace(exe: string, env: NodeJS.ProcessEnv, platform = process.platform): IntegrationPlace {
  const system = platform === 'win32' || platform === 'darwin' ? platform : 'linux';
  const home = (system === 'win32' ? env.USERPROFILE : env.HOME) || homedir();
  return { system, exe, home, ...(env.APPDATA ? { appData: env.APPDATA } : {}) };
}

/** One step's outcome, in words: `wrote PATH`, `removed PATH`, `ran reg add …`, or why it failed. */
export interface StepOutcome {
  step: IntegrationStep;
  ok: boolean;
  said: string;
}

type Run = (command: string, args: string[]) => Promise<void>;

const runProgram: Run = (command, args) =>
  new Promise((done, fail) =>
    execFile(command, args, { windowsHide: true, timeout: 30_000 }, (err, _out, stderr) =>
      err ? fail(new Error(stderr.trim() || err.message)) : done(),
    ),
  );

/**
 * Carries out an integration plan (os-integration.ts): files written or removed, programs run.
 * A failed optional step (a tool this desktop lacks, a key already gone) is not a failure.
 */
export async function applyIntegrationPlan(steps: IntegrationStep[], run: Run = runProgram): Promise<StepOutcome[]> {
  const out: StepOutcome[] = [];
  for (const step of steps) {
    try {
      if (step.kind === 'write') {
        mkdirSync(dirname(step.path), { recursive: true });
        writeFileSync(step.path, step.content);
        if (step.executable) chmodSync(step.path, 0o755);
        out.push({ step, ok: true, said: `${step.integration}: wrote ${step.path}` });
      } else if (step.kind === 'remove') {
        const was = existsSync(step.path);
        rmSync(step.path, { recursive: true, force: true });
        out.push({ step, ok: true, said: `${step.integration}: ${was ? 'removed' : 'not there'} ${step.path}` });
      } else {
        await run(step.command, step.args);
        out.push({
          step,
          ok: true,
          said: `${step.integration}: ran ${step.command} ${step.args.slice(0, 2).join(' ')}`,
        });
      }
    } catch (err) {
      const why = err instanceof Error ? err.message.split('\n')[0] : String(err);
      const what = step.kind === 'run' ? `${step.command} ${step.args.slice(0, 2).join(' ')}` : step.path;
      out.push({
        step,
        ok: step.kind === 'run' && step.optional === true,
        said: `${step.integration}: ${what}: ${why}`,
      });
    }
  }
  return out;
}

/**
 * Brings what is installed in line with the switches after a change (or at each start on Windows,
 * whose installer writes them all): only where integrations were installed before, on macOS and
 * Linux, since those are added from the menu or the CLI. Answers null when there is nothing to do.
 */
export async function followSwitches(
  place: IntegrationPlace,
  s: IntegrationSwitches,
  run?: Run,
): Promise<StepOutcome[] | null> {
  if (place.system !== 'win32' && !installedPaths(place).some((p) => existsSync(p))) return null;
  return applyIntegrationPlan(integrationPlan(place, s), run);
}
