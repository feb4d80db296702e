import type { Req, Res } from '../../../../shared/contract/index.ts';
import type { AppDefinition, AppRun } from '../../../../shared/contract/team.ts';
import { RUN_SANDBOX_GONE } from '../../../core/queue/job-messages.ts';
import { SETTLED_STATES } from '../../../../shared/contract/jobs.ts';
import { otherBackendNote } from '../engine-session.ts';
import { interruptible, TIMED_OUT } from '../interrupt.ts';
import { oneLine, UsageError, type CliContext } from '../command.ts';
import type { TimeLimit } from '../duration.ts';
import type { CliServices } from '../services.ts';
import { invoke, refusal } from './team-common.ts';

export interface AppRunArgs {
  inputs: Record<string, string>;
  out?: string;
  yes: boolean;
  /** Start another paid run even when the same one is pending. */
  fresh: boolean;
  timeout?: TimeLimit;
}

/** The cost is shown and must be accepted: interactively, or with --yes in scripts. */
async function acceptCost(ctx: CliContext, def: AppDefinition, yes: boolean, question = 'Run it?'): Promise<boolean> {
  ctx.stderr.write(`${oneLine(def.name)} costs ${def.cost ?? 'an unknown number of'} credits per run.\n`);
  if (yes) return true;
  if (!ctx.stdin.isTTY) throw new UsageError('add --yes to accept the cost (no terminal to ask)');
  ctx.stderr.write(`${question} [y/N] `);
  const answer = await new Promise<string>((res) => ctx.stdin.once('data', (d) => res(String(d))));
  (ctx.stdin as NodeJS.ReadStream).pause?.();
  return /^y(es)?$/i.test(answer.trim());
}

const short = (r: AppRun) => r.id.slice(0, 8);

const RETRY_EFFECT: Record<NonNullable<AppRun['retry']>, string> = {
  download: 'fetching its results again; nothing is paid again',
  poll: 'following the submitted run again; nothing is paid again',
  submit: 'sent again as a new run',
};

/**
 * `ownSandbox`: the run is on the built-in Sandbox of this command (it holds the queue), which ends
 * with it, and the run with it: the next holder of the queue on the Sandbox sends it again by itself
 * (AppRunStore.requeueGoneSandbox), so nothing "continues on the server".
 */
function whereStoppedRunIs(r: AppRun, ownSandbox: boolean): string {
  if (!r.runId) return 'it was not submitted yet and stays queued';
  if (ownSandbox)
    return 'the built-in Sandbox running it stops with this command, so it is queued again, to be sent again to the Sandbox by itself (free) when the queue next runs there';
  if (r.state === 'downloading')
    return 'its download stops, and the part downloaded so far is kept for the next download of it to resume';
  return 'it continues on the server';
}

function stoppedNote(r: AppRun, ownSandbox: boolean, gaveUpAfter?: string): string {
  const where = whereStoppedRunIs(r, ownSandbox);
  const again =
    ownSandbox && r.runId
      ? 'Run the same command again to finish it: it follows this run and sends it again, free.'
      : 'Run the same command again to resume it: it is not submitted or paid again.';
  // The runner's reason for a run it will send again (server busy or unreachable), when it has one.
  const waiting = r.state === 'queued' && r.error ? `: ${oneLine(r.error)}` : '';
  const what = gaveUpAfter ? `gave up after ${gaveUpAfter} (--timeout) following run` : 'stopped following run';
  return `${what} ${short(r)} (${r.state}${waiting}); ${where}. ${again} \`mediadesk apps runs\` lists runs.\n`;
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
  ctx.stdout.write(
    resumed
      ? `run ${short(run)} resumed (${run.state}${run.runId ? ', already submitted' : ''}): following the earlier run; ${run.error === RUN_SANDBOX_GONE ? 'its built-in Sandbox had ended, so it is sent to the Sandbox again, free' : 'it is not submitted or paid again'} (--new starts another)\n`
      : `run ${short(run)} queued\n`,
  );
  return follow(ctx, s, run, { resumed, timeout: a.timeout });
}

/**
 * Follows a run (this process drives the queue unless another one holds it) until it settles:
 * 0 when its results are downloaded, 1 when it failed, was canceled or needs the user, 130 after
 * Ctrl-C and 124 after `--timeout`, which stop following, never the run.
 */
export async function follow(
  ctx: CliContext,
  s: CliServices,
  start: AppRun,
  options: { resumed: boolean; timeout?: TimeLimit },
): Promise<number> {
  const stop = interruptible({ timeoutMs: options.timeout?.ms });
  try {
    let run = start;
    // This process takes the queue (unless the desktop app holds it and runs it for us).
    s.core.engine.start();
    let last = '';
    const mine = run.backend ?? (await s.core.backend.identity());
    while (!stop.signal.aborted) {
      run = s.core.apps.one(run.id);
      const waiting = ['queued', 'running'].includes(run.state)
        ? otherBackendNote(s.core.engine, mine, 'this run is')
        : null;
      // The run's status and error are the server's text: escaped, they cannot drive the terminal.
      const line = oneLine(`${run.state}${run.runStatus ? ` (${run.runStatus})` : ''}${waiting ? `: ${waiting}` : ''}`);
      if (line !== last) ctx.stderr.write(`${line}\n`);
      last = line;
      if (SETTLED_STATES.includes(run.state)) {
        for (const f of run.outputs) ctx.stdout.write(`${oneLine(f)}\n`);
        if (run.error) ctx.stderr.write(`${oneLine(run.error)}\n`);
        if (options.resumed && run.state === 'needs_attention')
          ctx.stderr.write(
            `run ${short(run)} is not sent again without you: check it in the app's Queue, or add --new to start another paid run\n`,
          );
        return run.state === 'done' ? 0 : 1;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    // A POST in flight finishes first, so the note says truly whether the run reached the server.
    await s.core.apps.runner.stop();
    const ended = s.core.apps.one(run.id);
    ctx.stderr.write(
      stoppedNote(
        ended,
        ended.backend === 'sandbox' && s.core.engine.holdsQueue,
        stop.timedOut() ? options.timeout?.label : undefined,
      ),
    );
    return stop.timedOut() ? TIMED_OUT : 130;
  } finally {
    stop.release();
  }
}

/** A run named by its id or a prefix of it (the 8 characters the CLI prints); a miss is bad input. */
function runIdOf(s: CliServices, raw: string): string {
  const ids = s.core.apps.store.idsStartingWith(raw);
  if (ids.length === 1) return ids[0];
  throw new UsageError(
    ids.length
      ? `${raw} starts more than one app run id; give more of it`
      : `no app run ${raw} (\`mediadesk apps runs\` lists them)`,
  );
}

/** The UI's own command (apps.cancel / apps.retry); every refusal of the run named is bad input (exit 2). */
async function act(
  s: CliServices,
  name: 'apps.cancel' | 'apps.retry',
  id: string,
  confirmedCost?: number | null,
): Promise<AppRun> {
  const reply = await s.core.dispatch(name, confirmedCost === undefined ? { id } : { id, confirmedCost });
  if (!reply.ok) throw refusal(reply.error, ['invalid', 'conflict', 'not_found']);
  return reply.result as AppRun;
}

/** `apps cancel RUN`: stops a run the queue has not finished; one already submitted may still be charged. */
export async function cancelRun(ctx: CliContext, s: CliServices, raw: string): Promise<number> {
  const run = await act(s, 'apps.cancel', runIdOf(s, raw));
  ctx.stdout.write(
    `run ${short(run)} canceled${run.runId ? ' (already submitted: the server may still charge it)' : ' before it was submitted: nothing is charged'}\n`,
  );
  return 0;
}

/**
 * `apps retry RUN`: a failed, canceled or needs-attention run, as the app's Retry does it. A paid
 * run is never sent again (its results are fetched, or it is polled again): no cost, no --yes.
 * One sent anew is a new paid run, so its cost is shown and must be accepted like `apps run`'s.
 */
export async function retryRun(
  ctx: CliContext,
  s: CliServices,
  raw: string,
  options: { yes: boolean; wait: boolean; timeout?: TimeLimit },
): Promise<number> {
  const id = runIdOf(s, raw);
  // A run that cannot be retried (plan null) is refused by the command itself, with its reason.
  const { retry: plan, state, appId } = s.core.apps.one(id);
  let cost: number | null | undefined;
  if (plan === 'submit') {
    if (state === 'needs_attention')
      ctx.stderr.write(
        `run ${id.slice(0, 8)} may already have been created and charged; retrying sends it again as a new run.\n`,
      );
    const def = await invoke(s.core, 'apps.get', { id: appId });
    if (!(await acceptCost(ctx, def, options.yes, 'Send it again?'))) {
      ctx.stderr.write('not retried\n');
      return 1;
    }
    cost = def.cost;
  }
  const run = await act(s, 'apps.retry', id, cost);
  const what = RETRY_EFFECT[plan ?? 'submit'];
  ctx.stdout.write(`run ${short(run)} retried (${run.state}): ${what}\n`);
  return options.wait ? follow(ctx, s, run, { resumed: false, timeout: options.timeout }) : 0;
}
