import type { AppDefinition, AppRun } from '../../../../shared/contract/team.ts';
import { SETTLED_STATES } from '../../../core/queue/states.ts';
import { UsageError, type CliContext } from '../command.ts';
import type { CliServices } from '../services.ts';
import { invoke } from './team-common.ts';

export interface AppRunArgs {
  inputs: Record<string, string>;
  out?: string;
  yes: boolean;
  /** Start another paid run even when the same one is pending. */
  fresh: boolean;
}

/** The cost is shown and must be accepted: interactively, or with --yes in scripts. */
async function acceptCost(ctx: CliContext, def: AppDefinition, yes: boolean): Promise<boolean> {
  ctx.stderr.write(`${def.name} costs ${def.cost ?? 'an unknown number of'} credits per run.\n`);
  if (yes) return true;
  if (!ctx.stdin.isTTY) throw new UsageError('add --yes to accept the cost (no terminal to ask)');
  ctx.stderr.write('Run it? [y/N] ');
  const answer = await new Promise<string>((res) => ctx.stdin.once('data', (d) => res(String(d))));
  (ctx.stdin as NodeJS.ReadStream).pause?.();
  return /^y(es)?$/i.test(answer.trim());
}

const short = (r: AppRun) => r.id.slice(0, 8);

function stoppedNote(r: AppRun): string {
  const where = r.runId ? 'it continues on the server' : 'it was not submitted yet and stays queued';
  return `stopped following run ${short(r)} (${r.state}); ${where}. Run the same command again to resume it: it is not submitted or paid again. \`mediadesk apps runs\` lists runs.\n`;
}

/**
 * Queues the run, or resumes the pending one of the same app, inputs and folder, then follows it
 * to its downloaded results. Ctrl-C stops following, never the run: the next identical command
 * picks it up where it is.
 */
export async function runApp(ctx: CliContext, s: CliServices, def: AppDefinition, a: AppRunArgs): Promise<number> {
  if (!(await acceptCost(ctx, def, a.yes))) {
    ctx.stderr.write('not run\n');
    return 1;
  }
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const { resumed, ...queued } = await invoke(s.core, 'apps.run', { appId: def.id, inputs: a.inputs, confirmedCost: def.cost, outDir: a.out, resume: !a.fresh });
    let run: AppRun = queued;
    ctx.stdout.write(resumed ? `run ${short(run)} resumed (${run.state}${run.runId ? ', already submitted' : ''}): not submitted or paid again\n` : `run ${short(run)} queued\n`);
    // This process takes the queue (unless the desktop app holds it and runs it for us).
    s.core.engine.start();
    let last = '';
    while (!stop.signal.aborted) {
      run = s.core.apps.one(run.id);
      const line = `${run.state}${run.runStatus ? ` (${run.runStatus})` : ''}`;
      if (line !== last) ctx.stderr.write(`${line}\n`);
      last = line;
      if (SETTLED_STATES.includes(run.state)) {
        for (const f of run.outputs) ctx.stdout.write(`${f}\n`);
        if (run.error) ctx.stderr.write(`${run.error}\n`);
        if (resumed && run.state === 'needs_attention') ctx.stderr.write(`run ${short(run)} is not sent again without you: check it in the app's Queue, or add --new to start another paid run\n`);
        return run.state === 'done' ? 0 : 1;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    // A POST in flight finishes first, so the note says truly whether the run reached the server.
    await s.core.apps.runner.stop();
    ctx.stderr.write(stoppedNote(s.core.apps.one(run.id)));
    return 130;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
