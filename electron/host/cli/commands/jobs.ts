import { isJobState, SETTLED_STATES } from '../../../core/queue/states.ts';
import { DeskError } from '../../../../shared/contract/define.ts';
import { UsageError, type CliCommand, type CliContext } from '../command.ts';
import { openEngineSession, Progress, waitForJobs } from '../engine-session.ts';

const USAGE = 'mediadesk jobs list [--batch ID] [--state STATE] [--limit N] [--json] | jobs retry ID [--no-wait] | jobs cancel ID';

function option(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  if (i < 0) return undefined;
  const v = argv[i + 1];
  if (v === undefined || v.startsWith('--')) throw new UsageError(`${name} needs a value`);
  return v;
}

export const jobsCommand: CliCommand = {
  name: 'jobs',
  summary: 'List, retry or cancel queued jobs (shared with the desktop app).',
  usage: USAGE,
  async run(ctx: CliContext): Promise<number> {
    const [sub, ...rest] = ctx.argv;
    if (!sub || !['list', 'retry', 'cancel'].includes(sub)) throw new UsageError(`usage: ${USAGE}`);
    const session = await openEngineSession(ctx);
    const { engine } = session;
    try {
      if (sub === 'list') {
        const state = option(rest, '--state');
        if (state && !isJobState(state)) throw new UsageError(`--state must be one of queued, submitting, running, downloading, done, failed, canceled, needs_attention`);
        const limit = Number(option(rest, '--limit') ?? 100);
        if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be a whole number from 1 to 1000');
        const batch = option(rest, '--batch');
        const batchId = batch ? engine.listBatches(1000).find((b) => b.id.startsWith(batch))?.id : undefined;
        if (batch && !batchId) throw new UsageError(`no batch ${batch}`);
        const r = engine.listJobs({ batchId, state: state && isJobState(state) ? state : undefined, limit, offset: 0 });
        if (rest.includes('--json')) ctx.stdout.write(JSON.stringify(r, null, 2) + '\n');
        else {
          for (const j of r.jobs) ctx.stdout.write(`${j.id.slice(0, 8)}  ${j.state.padEnd(15)} ${j.tool.padEnd(18)} ${j.input ?? '(prompt)'}${j.error ? `  - ${j.error}` : ''}\n`);
          ctx.stdout.write(`${r.jobs.length} of ${r.total} jobs\n`);
        }
        return 0;
      }
      const raw = rest.find((a) => !a.startsWith('--'));
      if (!raw) throw new UsageError(`jobs ${sub} needs a job id`);
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
        if (rest.includes('--no-wait')) return 0;
        // Drive the queue (or follow whoever does) until this job settles.
        engine.start();
        const stop = new AbortController();
        const counts = await waitForJobs(engine, [id], new Progress(ctx.stdout), stop.signal);
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
