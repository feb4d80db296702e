import { heldMessage, isJobState, JOB_STATES } from '../../../../shared/contract/jobs.ts';
import { canceledMessage } from '../../../core/queue/job-messages.ts';
import { DeskError } from '../../../../shared/contract/define.ts';
import { oneLine, terminalJson, UsageError, write, type CliCommand, type CliContext } from '../command.ts';
import type { JobRecord } from '../../../../shared/contract/jobs.ts';
import { countStates, openEngineSession, Progress, waitForJobs } from '../engine-session.ts';
import { interruptible, TIMED_OUT } from '../interrupt.ts';
import { timeLimitOf } from '../duration.ts';
import { parseOptions } from './team-common.ts';

const USAGE = [
  'mediadesk jobs list [--batch ID] [--state STATE] [--limit N | --all] [--offset N] [--json]',
  '         (in queue order; 100 jobs unless --limit, up to 1000, or --all; --offset skips that many first)',
  '       mediadesk jobs retry ID [--no-wait | --timeout DURATION]',
  '         (follows the job to its end while the queue runs, or for at most DURATION: 90s, 10m, 2h; exit 124 then)',
  '       mediadesk jobs cancel ID',
].join('\n');

/** The queue's own page size (jobs.list); --all walks the pages. */
const PAGE = 1000;

/** Every option is checked before the database opens: a typo must not print an unfiltered list. */
function parseArgs(sub: string, rest: string[]) {
  const options =
    sub === 'list'
      ? parseOptions(rest, ['--batch', '--state', '--limit', '--offset'], ['--json', '--all'])
      : parseOptions(rest, sub === 'retry' ? ['--timeout'] : [], sub === 'retry' ? ['--no-wait'] : []);
  if (sub === 'list') {
    if (options.positional.length) throw new UsageError(`jobs list takes no arguments, got "${options.positional[0]}"`);
    const state = options.one('--state');
    if (state !== undefined && !isJobState(state))
      throw new UsageError(`--state must be one of ${JOB_STATES.join(', ')}, got "${state}"`);
    const all = options.flags.has('--all');
    if (all && options.one('--limit') !== undefined) throw new UsageError('give --limit or --all, not both');
    const rawLimit = options.one('--limit') ?? '100';
    const limit = all ? Infinity : Number(rawLimit);
    if (!all && (!/^\d+$/.test(rawLimit) || limit < 1 || limit > PAGE))
      throw new UsageError(
        `--limit must be a whole number from 1 to ${PAGE}, got "${rawLimit}" (--all lists every job, --offset N pages)`,
      );
    const rawOffset = options.one('--offset') ?? '0';
    if (!/^\d+$/.test(rawOffset)) throw new UsageError(`--offset must be a whole number, got "${rawOffset}"`);
    return {
      state,
      limit,
      offset: Number(rawOffset),
      batch: options.one('--batch'),
      json: options.flags.has('--json'),
      noWait: false,
      id: undefined,
      timeout: undefined,
    };
  }
  if (options.positional.length !== 1)
    throw new UsageError(options.positional.length ? `jobs ${sub} takes one job id` : `jobs ${sub} needs a job id`);
  const timeout = timeLimitOf(options.one('--timeout'), options.flags.has('--no-wait'));
  return {
    state: undefined,
    limit: 0,
    offset: 0,
    batch: undefined,
    json: false,
    noWait: options.flags.has('--no-wait'),
    id: options.positional[0],
    timeout,
  };
}

export const jobsCommand: CliCommand = {
  name: 'jobs',
  summary: 'List, retry or cancel queued jobs (shared with the desktop app).',
  usage: USAGE,
  async run(ctx: CliContext): Promise<number> {
    const [sub, ...rest] = ctx.argv;
    if (!sub || !['list', 'retry', 'cancel'].includes(sub))
      throw new UsageError(
        sub ? `unknown jobs command "${sub}" (list, retry, cancel)` : 'say list, retry ID or cancel ID',
      );
    const args = parseArgs(sub, rest);
    const session = await openEngineSession(ctx);
    const { engine } = session;
    try {
      if (sub === 'list') {
        const { state, limit, batch } = args;
        // Any batch, not only the newest 1000; a prefix two batches share is refused, never guessed.
        const found = batch ? engine.store.resolveBatchId(batch) : undefined;
        if (found && 'none' in found) throw new UsageError(`no batch ${batch}`);
        if (found && 'ambiguous' in found)
          throw new UsageError(`${batch} starts more than one batch id; give more of it`);
        const batchId = found && 'id' in found ? found.id : undefined;
        const q = { batchId, state: state && isJobState(state) ? state : undefined };
        // Page by page, so a queue of any size can be listed (and printed as it is read).
        const jobs: JobRecord[] = [];
        let shown = 0;
        let total = 0;
        for (let offset = args.offset; ;) {
          const page = engine.listJobs({ ...q, limit: Math.min(PAGE, limit - shown), offset });
          total = page.total;
          shown += page.jobs.length;
          offset += page.jobs.length;
          if (args.json) jobs.push(...page.jobs);
          else
            for (const j of page.jobs)
              await write(
                ctx.stdout,
                `${j.id.slice(0, 8)}  ${j.state.padEnd(15)} ${j.tool.padEnd(18)} ${oneLine(`${j.input ?? '(prompt)'}${j.error ? `  - ${j.error}` : ''}`)}\n`,
              );
          if (page.jobs.length < PAGE || shown >= limit) break;
        }
        if (args.json) await write(ctx.stdout, terminalJson({ jobs, total }, 2) + '\n');
        // A count, not a job: on stdout it would reach `| cut -c1-8 | xargs mediadesk jobs retry` as an id.
        else ctx.stderr.write(`${shown} of ${total} jobs\n`);
        for (const held of (await engine.statusNow()).heldBy) ctx.stderr.write(`${heldMessage(held)}\n`);
        return 0;
      }
      const raw = args.id!;
      const id = engine.store.resolveId(raw);
      if (!id) throw new UsageError(`no job ${raw} (or the prefix matches several)`);
      try {
        if (sub === 'cancel') {
          const j = engine.cancelJob(id);
          let charge = '';
          if (j.taskId) charge = ' (already submitted: the server may still charge it)';
          else if (j.error === canceledMessage('maybe'))
            charge = ' (its submission may have reached the server: the task may have been created and charged)';
          ctx.stdout.write(`${j.id.slice(0, 8)} canceled${charge}\n`);
          return 0;
        }
        const j = engine.retryJob(id);
        ctx.stdout.write(`${j.id.slice(0, 8)} ${j.state}\n`);
        if (args.noWait) return 0;
        // Drive the queue (or follow whoever does) until this job settles.
        engine.start();
        const stop = interruptible({ timeoutMs: args.timeout?.ms });
        try {
          const counts = await waitForJobs(engine, [id], new Progress(ctx), stop.signal);
          if (stop.signal.aborted) {
            // A create in flight finishes first, so the state said is the one the job keeps.
            await engine.stop();
            const { waiting } = countStates(engine, [id]);
            const why = stop.timedOut()
              ? `gave up after ${args.timeout!.label} (--timeout) following job`
              : 'stopped following job';
            ctx.stderr.write(
              `${why} ${id.slice(0, 8)} (${engine.job(id).state}${waiting ? `: ${oneLine(waiting)}` : ''}); it stays in the queue and nothing submitted is sent again: it goes on when the queue next runs (the app, or \`mediadesk run\` over its input)\n`,
            );
            return stop.timedOut() ? TIMED_OUT : 130;
          }
          const after = engine.job(id);
          if (after.state !== 'done') ctx.stderr.write(`${after.state}: ${oneLine(after.error ?? '')}\n`);
          return counts.done === 1 ? 0 : 1;
        } finally {
          stop.release();
        }
      } catch (err) {
        if (err instanceof DeskError && (err.code === 'conflict' || err.code === 'not_found'))
          throw new UsageError(err.message);
        throw err;
      }
    } finally {
      await session.close();
    }
  },
};
