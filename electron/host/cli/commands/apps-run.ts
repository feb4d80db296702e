import type { Req, Res } from '../../../../shared/contract/index.ts';
import type { AppDefinition, AppRun } from '../../../../shared/contract/team.ts';
import { SETTLED_STATES } from '../../../core/queue/states.ts';
import { UsageError, type CliContext } from '../command.ts';
import type { CliServices } from '../services.ts';
import { invoke, refusal } from './team-common.ts';

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
 * The pending run of the same app, inputs and folder on this backend, if any: asked before a cost
 * is shown, since following it pays nothing. Never queues one (`resume: 'only'`).
 */
async function earlierRun(s: CliServices, req: Req<'apps.run'>): Promise<AppRun | null> {
  const reply = await s.core.dispatch('apps.run', { ...req, resume: 'only' });
  if (!reply.ok) {
    if (reply.error.code === 'not_found') return null;
    throw refusal(reply.error);
  }
  const { resumed: _, ...run } = reply.result as Res<'apps.run'>;
  return run;
}

/**
 * Queues the run, or resumes the pending one of the same app, inputs and folder, then follows it
 * to its downloaded results. Ctrl-C stops following, never the run: the next identical command
 * picks it up where it is. A resumed run shows no cost and needs no --yes: nothing new is paid.
 */
export async function runApp(ctx: CliContext, s: CliServices, def: AppDefinition, a: AppRunArgs): Promise<number> {
  const req: Req<'apps.run'> = { appId: def.id, inputs: a.inputs, confirmedCost: def.cost, outDir: a.out };
  const earlier = a.fresh ? null : await earlierRun(s, req);
  let run: AppRun;
  let resumed = true;
  if (earlier) run = earlier;
  else {
    if (!(await acceptCost(ctx, def, a.yes))) {
      ctx.stderr.write('not run\n');
      return 1;
    }
    // Still `resume`: a run queued by another process since the question is followed, not doubled.
    ({ resumed, ...run } = await invoke(s.core, 'apps.run', { ...req, resume: !a.fresh }));
  }
  ctx.stdout.write(resumed
    ? `run ${short(run)} resumed (${run.state}${run.runId ? ', already submitted' : ''}): following the earlier run; it is not submitted or paid again (--new starts another)\n`
    : `run ${short(run)} queued\n`);
  return follow(ctx, s, run, { resumed });
}

/**
 * Follows a run (this process drives the queue unless another one holds it) until it settles:
 * 0 when its results are downloaded, 1 when it failed, was canceled or needs the user, 130 after
 * Ctrl-C, which stops following, never the run.
 */
export async function follow(ctx: CliContext, s: CliServices, start: AppRun, o: { resumed: boolean }): Promise<number> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    let run = start;
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
        if (o.resumed && run.state === 'needs_attention') ctx.stderr.write(`run ${short(run)} is not sent again without you: check it in the app's Queue, or add --new to start another paid run\n`);
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
