import { isJobState, JOB_STATES, SETTLED_STATES } from '../../../core/queue/states.ts';
import { DeskError } from '../../../../shared/contract/define.ts';
import { oneLine, UsageError, type CliCommand, type CliContext } from '../command.ts';
import { openEngineSession, Progress, waitForJobs } from '../engine-session.ts';
import { parseOptions } from './team-common.ts';

const USAGE = 'mediadesk jobs list [--batch ID] [--state STATE] [--limit N] [--json] | jobs retry ID [--no-wait] | jobs cancel ID';

/** Every option is checked before the database opens: a typo must not print an unfiltered list. */
function parseArgs(sub: string, rest: string[]) {
  const o = sub === 'list' ? parseOptions(rest, ['--batch', '--state', '--limit'], ['--json']) : parseOptions(rest, [], sub === 'retry' ? ['--no-wait'] : []);
  if (sub === 'list') {
    if (o.positional.length) throw new UsageError(`jobs list takes no arguments, got "${o.positional[0]}"`);
    const state = o.one('--state');
    if (state !== undefined && !isJobState(state)) throw new UsageError(`--state must be one of ${JOB_STATES.join(', ')}, got "${state}"`);
    const rawLimit = o.one('--limit') ?? '100';
    const limit = Number(rawLimit);
    if (!/^\d+$/.test(rawLimit) || limit < 1 || limit > 1000) throw new UsageError(`--limit must be a whole number from 1 to 1000, got "${rawLimit}"`);
    return { state, limit, batch: o.one('--batch'), json: o.flags.has('--json'), noWait: false, id: undefined };
  }
  if (o.positional.length !== 1) throw new UsageError(o.positional.length ? `jobs ${sub} takes one job id` : `jobs ${sub} needs a job id`);
  return { state: undefined, limit: 0, batch: undefined, json: false, noWait: o.flags.has('--no-wait'), id: o.positional[0] };
}

export const jobsCommand: CliCommand = {
  name: 'jobs',
  summary: 'List, retry or cancel queued jobs (shared with the desktop app).',
  usage: USAGE,
  async run(ctx: CliContext): Promise<number> {
    const [sub, ...rest] = ctx.argv;
    if (!sub || !['list', 'retry', 'cancel'].includes(sub)) throw new UsageError(`usage: ${USAGE}`);
    const args = parseArgs(sub, rest);
    const session = await openEngineSession(ctx);
    const { engine } = session;
    try {
      if (sub === 'list') {
        const { state, limit, batch } = args;
        const batchId = batch ? engine.listBatches(1000).find((b) => b.id.startsWith(batch))?.id : undefined;
        if (batch && !batchId) throw new UsageError(`no batch ${batch}`);
        const r = engine.listJobs({ batchId, state: state && isJobState(state) ? state : undefined, limit, offset: 0 });
        if (args.json) ctx.stdout.write(JSON.stringify(r, null, 2) + '\n');
        else {
          for (const j of r.jobs) ctx.stdout.write(`${j.id.slice(0, 8)}  ${j.state.padEnd(15)} ${j.tool.padEnd(18)} ${oneLine(`${j.input ?? '(prompt)'}${j.error ? `  - ${j.error}` : ''}`)}\n`);
          // A count, not a job: on stdout it would reach `| cut -c1-8 | xargs mediadesk jobs retry` as an id.
          ctx.stderr.write(`${r.jobs.length} of ${r.total} jobs\n`);
        }
        return 0;
      }
      const raw = args.id!;
      const id = engine.store.resolveId(raw);
      if (!id) throw new UsageError(`no job ${raw} (or the prefix matches several)`);
      try {
        if (sub === 'cancel') {
          const j = engine.cancelJob(id);
          ctx.stdout.write(`${j.id.slice(0, 8)} canceled${j.taskId ? ' (already submitted: the server may still charge it)' : ''}\n`);
          return 0;
        }
        const j = engine.retryJob(id);
        ctx.stdout.write(`${j.id.slice(0, 8)} ${j.state}\n`);
        if (args.noWait) return 0;
        // Drive the queue (or follow whoever does) until this job settles.
        engine.start();
        const stop = new AbortController();
        const counts = await waitForJobs(engine, [id], new Progress(ctx.stderr), stop.signal);
        const after = engine.job(id);
        if (after.state !== 'done') ctx.stderr.write(`${after.state}: ${after.error ?? ''}\n`);
        return counts.done === 1 ? 0 : SETTLED_STATES.includes(after.state) ? 1 : 1;
      } catch (err) {
        if (err instanceof DeskError && (err.code === 'conflict' || err.code === 'not_found')) throw new UsageError(err.message);
        throw err;
      }
    } finally {
      await session.close();
    }
  },
};
