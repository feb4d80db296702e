import { heldMessage, isJobState, JOB_STATES } from '../../../../shared/contract/job-states.ts';
import { canceledMessage } from '../../../core/queue/job-messages.ts';
import { DeskError } from '../../../../shared/contract/errors.ts';
import { oneLine, terminalJson, UsageError, write, type CliCommand, type CliContext } from '../command.ts';
import type { BatchBudget, JobRecord } from '../../../../shared/contract/jobs.ts';
import { interruptible, TIMED_OUT } from '../interrupt.ts';
import { timeLimitOf } from '../duration.ts';
import { parseOptions } from '../parse-options.ts';
import { openQueueForReading } from '../queue-read.ts';

// `jobs list` loads neither zod nor the engine: the queue's store answers it (openQueueForReading),
// whatever it holds. The engine, the contract's schemas and the budget's parser are imported by the
// commands that use them.

const USAGE = [
  'mediadesk jobs list [--batch ID] [--state STATE] [--limit N | --all] [--offset N] [--json]',
  '         (in queue order; 100 jobs unless --limit, up to 1000, or --all; --offset skips that many first)',
  '       mediadesk jobs retry ID [--no-wait | --timeout DURATION]',
  '         (follows the job to its end while the queue runs, or for at most DURATION: 90s, 10m, 2h; exit 124 then)',
  '       mediadesk jobs cancel ID',
  '       mediadesk jobs budget BATCH (--credits N | --jobs N | --none)',
  "         (changes or removes a batch's budget; a batch paused by it goes on by itself while the queue runs)",
].join('\n');

/** The queue's own page size (jobs.list); --all walks the pages. */
const PAGE = 1000;

/** Every option is checked before the database opens: a typo must not print an unfiltered list. */
async function parseArgs(sub: string, rest: string[]) {
  const valued: Record<string, string[]> = {
    list: ['--batch', '--state', '--limit', '--offset'],
    retry: ['--timeout'],
    budget: ['--credits', '--jobs'],
  };
  const flags: Record<string, string[]> = { list: ['--json', '--all'], retry: ['--no-wait'], budget: ['--none'] };
  const options = parseOptions(rest, valued[sub] ?? [], flags[sub] ?? []);
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
      budget: undefined,
    };
  }
  const what = sub === 'budget' ? 'batch id' : 'job id';
  if (options.positional.length !== 1)
    throw new UsageError(options.positional.length ? `jobs ${sub} takes one ${what}` : `jobs ${sub} needs a ${what}`);
  let budget: BatchBudget | null | undefined;
  if (sub === 'budget') {
    const { budgetOf } = await import('../budget-args.ts');
    budget = budgetOf(options.one('--credits'), options.one('--jobs'));
    if (options.flags.has('--none')) {
      if (budget) throw new UsageError('give --none alone, or --credits/--jobs');
      budget = null;
    } else if (!budget) throw new UsageError('give the new budget: --credits N, --jobs N, or --none to remove it');
  }
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
    budget,
  };
}

export const jobsCommand: CliCommand = {
  name: 'jobs',
  usage: USAGE,
  async run(ctx: CliContext): Promise<number> {
    const [sub, ...rest] = ctx.argv;
    if (!sub || !['list', 'retry', 'cancel', 'budget'].includes(sub))
      throw new UsageError(
        sub
          ? `unknown jobs command "${sub}" (list, retry, cancel, budget)`
          : 'say list, retry ID, cancel ID or budget BATCH',
      );
    const args = await parseArgs(sub, rest);
    if (sub === 'list') return listJobs(ctx, args);
    const { countStates, openEngineSession, Progress, waitForJobs } = await import('../engine-session.ts');
    const session = await openEngineSession(ctx);
    const { engine } = session;
    try {
      if (sub === 'budget') {
        const found = engine.store.resolveBatchId(args.id!);
        if ('none' in found) throw new UsageError(`no batch ${args.id}`);
        if ('ambiguous' in found) throw new UsageError(`${args.id} starts more than one batch id; give more of it`);
        try {
          const b = engine.setBudget(found.id, args.budget!);
          const { budgetWords } = await import('../budget-args.ts');
          const left = b.finished
            ? ''
            : '; it goes on by itself while the queue runs (the app, or `mediadesk run` over its inputs)';
          ctx.stdout.write(
            `batch ${b.id.slice(0, 8)}: ${b.budget ? `budget ${budgetWords(b.budget)}` : 'no budget'}${left}\n`,
          );
          return 0;
        } catch (err) {
          if (err instanceof DeskError && err.code === 'invalid') throw new UsageError(err.message);
          throw err;
        }
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

type ListArgs = Awaited<ReturnType<typeof parseArgs>>;

async function listJobs(ctx: CliContext, args: ListArgs): Promise<number> {
  const queue = openQueueForReading(ctx.home, ctx.env);
  try {
    const { state, limit, batch } = args;
    // Any batch, not only the newest 1000; a prefix two batches share is refused, never guessed.
    const found = batch ? queue.store.resolveBatchId(batch) : undefined;
    if (found && 'none' in found) throw new UsageError(`no batch ${batch}`);
    if (found && 'ambiguous' in found) throw new UsageError(`${batch} starts more than one batch id; give more of it`);
    const batchId = found && 'id' in found ? found.id : undefined;
    const q = { batchId, state: state && isJobState(state) ? state : undefined };
    // Page by page, so a queue of any size can be listed (and printed as it is read).
    const jobs: JobRecord[] = [];
    let shown = 0;
    let total = 0;
    for (let offset = args.offset; ;) {
      const page = queue.store.listRecords({ ...q, limit: Math.min(PAGE, limit - shown), offset });
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
    for (const held of await queue.capHolds()) ctx.stderr.write(`${heldMessage(held)}\n`);
    return 0;
  } finally {
    queue.close();
  }
}
