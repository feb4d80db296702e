import { lstatSync } from 'node:fs';
import { resolve } from 'node:path';
import { findTool, withDefaults } from '../../../../shared/catalogue/index.ts';
import { DeskError } from '../../../../shared/contract/define.ts';
import { oneLine, terminalJson, UsageError, type CliCommand, type CliContext } from '../command.ts';
import {
  batchHoldNote,
  countStates,
  openEngineSession,
  Progress,
  waitForJobs,
  type EngineSession,
} from '../engine-session.ts';
import { interruptible, TIMED_OUT } from '../interrupt.ts';
import { timeLimitOf, type TimeLimit } from '../duration.ts';
import { toJobRecord } from '../../../core/queue/store.ts';
import { parseOptions, paramsOf } from './team-common.ts';
import { PresetStore } from '../../../core/presets/store.ts';
import type { MetadataSettings } from '../../../../shared/settings.ts';
import type { BatchBudget } from '../../../../shared/contract/jobs.ts';
import { projectNameSchema } from '../../../../shared/contract/team-server.ts';
import { costSentence } from '../../../../shared/cost-words.ts';
import { startEstimated } from '../../../core/limits/estimate.ts';
import { budgetOf } from '../budget-args.ts';

/** Whether anything is at the path, a dangling link included (the walk says why it cannot be read). */
function lexists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code !== 'ENOENT' && code !== 'ENOTDIR';
  }
}

/** Skipped inputs named one per line on stderr; the rest are counted. */
const SKIPS_NAMED = 20;

interface RunArgs {
  tool: string;
  inputs: string[];
  params: Record<string, unknown>;
  out?: string;
  concurrency?: number;
  /** One JSON report on stdout at the end; progress and notes go to stderr. */
  json: boolean;
  timeout?: TimeLimit;
  /** Only say what a run would queue, skip and reject (batches.check); nothing is queued. */
  check: boolean;
  /** This run's overrides of the metadata settings (--no-metadata, --no-provenance, --sidecar). */
  metadata: Partial<MetadataSettings>;
  budget?: BatchBudget;
  /** The project its creates count against (a team budget per project). */
  project?: string;
}

/** --project NAME, checked as the contract checks it. */
function projectOf(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const r = projectNameSchema.safeParse(raw);
  if (!r.success) throw new UsageError(`--project: ${r.error.issues[0].message}`);
  return r.data;
}

function parseArgs(argv: string[], home: string): RunArgs {
  // The other commands' parser: `--` ends the options, and an option given twice is refused rather
  // than the last one silently taken (`--out a --out b` wrote to b).
  const options = parseOptions(
    argv,
    [
      '--param',
      '-p',
      '--preset',
      '--out',
      '-o',
      '--concurrency',
      '-c',
      '--timeout',
      '--budget-credits',
      '--budget-jobs',
      '--project',
    ],
    ['--json', '--check', '--no-metadata', '--no-provenance', '--sidecar'],
  );
  const positional = options.positional;
  const pairs = [...(options.values.get('--param') ?? []), ...(options.values.get('-p') ?? [])];
  const out = options.one('--out', '-o');
  const json = options.flags.has('--json');
  const check = options.flags.has('--check');
  const metadata: Partial<MetadataSettings> = {
    ...(options.flags.has('--no-metadata') ? { keepMetadata: false } : {}),
    ...(options.flags.has('--no-provenance') ? { writeProvenance: false } : {}),
    ...(options.flags.has('--sidecar') ? { provenanceSidecar: true } : {}),
  };
  const timeout = timeLimitOf(options.one('--timeout'));
  const budget = budgetOf(options.one('--budget-credits'), options.one('--budget-jobs'));
  const rawConcurrency = options.one('--concurrency', '-c');
  const concurrency = rawConcurrency === undefined ? undefined : Number(rawConcurrency);
  if (concurrency !== undefined && (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000))
    throw new UsageError(`--concurrency must be a whole number from 1 to 1000, got "${rawConcurrency}"`);
  const [tool, ...inputs] = positional;
  if (!tool) throw new UsageError('name a tool (mediadesk tools lists them)');
  const entry = findTool(tool);
  if (!entry) throw new UsageError(`unknown tool "${tool}" (mediadesk tools lists them)`);
  const params = paramsOf(entry, pairs);
  if (entry.batchField && inputs.length === 0 && params[entry.batchField] === undefined)
    throw new UsageError(`${tool} needs input files or folders`);
  if (check && inputs.length === 0) throw new UsageError('--check needs input files or folders');
  // A path that is not there is a typo, refused as bad input before anything is queued or paid.
  const missing = inputs.filter((p) => !lexists(p));
  if (missing.length)
    throw new UsageError(`no such file or folder: ${missing.map((p) => oneLine(resolve(p))).join(', ')}`);
  const preset = presetOf(home, entry.id, options.one('--preset'));
  // The catalogue's defaults under the preset, under the --params, as the Studio's form sends them.
  return {
    tool,
    inputs,
    params: withDefaults(entry, { ...preset, ...params }),
    out,
    concurrency,
    json,
    timeout,
    check,
    metadata,
    budget,
    project: projectOf(options.one('--project')),
  };
}

/** A saved preset's settings for this tool; a name not saved, or saved for another tool, is a usage error. */
function presetOf(home: string, tool: string, name: string | undefined): Record<string, unknown> {
  if (name === undefined) return {};
  let found;
  try {
    found = new PresetStore(home).find(name);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (!found) throw new UsageError(`no preset named "${name}" (mediadesk presets list shows them)`);
  if (found.tool !== tool) throw new UsageError(`preset "${found.name}" is for ${found.tool}, not ${tool}`);
  return found.params;
}

type PathReason = { path: string; reason: string };
type Issues = { rejected: PathReason[]; skipped: PathReason[]; renamed: PathReason[] };

/** Every rejected input on stderr; skips, the normal case of a re-run, a few by name, not a line per file of a big folder. */
function nameIssues(ctx: CliContext, r: Issues) {
  for (const x of r.rejected) ctx.stderr.write(`rejected ${oneLine(`${x.path}: ${x.reason}`)}\n`);
  for (const x of r.skipped.slice(0, SKIPS_NAMED)) ctx.stderr.write(`skipped ${oneLine(`${x.path}: ${x.reason}`)}\n`);
  if (r.skipped.length > SKIPS_NAMED)
    ctx.stderr.write(`… and ${r.skipped.length - SKIPS_NAMED} more skipped (--json lists every one)\n`);
  for (const x of r.renamed) ctx.stderr.write(`new name ${oneLine(`${x.path}: ${x.reason}`)}\n`);
}

/** "2 saved under new names": results made again with changed settings, the earlier ones kept. */
const renamedNote = (n: number) =>
  n && `${n} saved under new name${n === 1 ? '' : 's'} (made before with other settings)`;

/**
 * `run --check`: the Studio's pre-Start check (batches.check) from a terminal, with the parameters
 * the run would send: exit 0 once checked, 2 for parameters the run would refuse (as the run does).
 */
async function check(ctx: CliContext, args: RunArgs, session: EngineSession): Promise<number> {
  const { engine } = session;
  let c;
  try {
    c = await engine.checkBatch({
      tool: args.tool,
      inputs: args.inputs,
      params: args.params,
      outDir: args.out && resolve(args.out),
    });
  } catch (err) {
    if (err instanceof DeskError && err.code === 'invalid') throw new UsageError(err.message);
    throw err;
  }
  const estimate = await session.services.core.estimator.estimate(
    args.tool,
    args.params,
    c.ready,
    args.project ?? null,
  );
  if (args.json) {
    ctx.stdout.write(`${terminalJson({ ...c, estimate }, 2)}\n`);
    return 0;
  }
  nameIssues(ctx, c);
  const skipped = c.rejected.length + c.skipped.length;
  const parts = [
    `${c.ready} ready`,
    skipped && `${skipped} will be skipped`,
    c.resumed && `${c.resumed} queued already`,
    renamedNote(c.renamed.length),
  ];
  ctx.stdout.write(`${parts.filter(Boolean).join(', ')}\n`);
  if (c.ready) ctx.stdout.write(`${costSentence(estimate)}\n`);
  if (c.outDir) ctx.stdout.write(`results go to ${oneLine(c.outDir)}\n`);
  return 0;
}

export const runCommand: CliCommand = {
  name: 'run',
  usage:
    'mediadesk run <tool> <files or folders...> [--preset NAME] [--param|-p key=value ...] [--out|-o DIR] [--concurrency|-c N] [--timeout DURATION] [--budget-credits N] [--budget-jobs N] [--project NAME] [--json] [--check] [--no-metadata] [--no-provenance] [--sidecar] [-- FILE...]\n         (--preset NAME: the settings saved under that name (mediadesk presets); a --param given as well wins)\n         (--check: check the parameters as a run would, then say how many inputs are ready and why the others would be skipped, and what they would cost; nothing is queued)\n         (--budget-credits N, --budget-jobs N: pause the batch before a job would go past that many credits (by the estimate) or jobs; change it with `mediadesk jobs budget`)\n         (--project NAME: its creates count against the team budget of that project (mediadesk team budget --project NAME CREDITS) and in the team spend per project)\n         (this run only, over Settings: --no-metadata copies no EXIF, colour profile, IPTC or XMP from each input into its results; --no-provenance records not in them how they were made; --sidecar also writes that record beside each result as <result>.json)\n         (without --out: in the output folder of Settings (else ~/MediaDesk or $MEDIADESK_OUTPUT_DIR), a folder named after the tool, then the folder given: ~/MediaDesk/Precision upscaler/shoot;\n          --timeout 10m stops following after that long, exit 124, the jobs left stay queued for the next run)',
  async run(ctx: CliContext): Promise<number> {
    const args = parseArgs(ctx.argv, ctx.home);
    const session = await openEngineSession(ctx, { concurrency: args.concurrency, settings: args.metadata });
    const { engine } = session;
    if (args.check) {
      try {
        return await check(ctx, args, session);
      } finally {
        await session.close();
      }
    }
    const stop = interruptible({ timeoutMs: args.timeout?.ms });
    try {
      let started;
      try {
        const req = {
          tool: args.tool,
          inputs: args.inputs,
          params: args.params,
          outDir: args.out && resolve(args.out),
          budget: args.budget,
          project: args.project,
        };
        started = await startEstimated(
          session.services.core.estimator,
          req,
          (r) => engine.startBatch(r),
          (id, p) => engine.store.setEstimate(id, p.creditsEach, p.basis),
        );
      } catch (err) {
        if (err instanceof DeskError && err.code === 'invalid') throw new UsageError(err.message);
        throw err;
      }
      nameIssues(ctx, started);
      const summary = [
        started.batch ? `batch ${started.batch.id.slice(0, 8)}: ${started.queued} queued` : 'nothing queued',
        started.resumed.length && `${started.resumed.length} resumed from an earlier run`,
        started.skipped.length && `${started.skipped.length} skipped`,
        started.rejected.length && `${started.rejected.length} rejected`,
        renamedNote(started.renamed.length),
      ]
        .filter(Boolean)
        .join(', ');
      // With --json, stdout carries the report alone: a script parses it without skipping lines.
      const notes = args.json ? ctx.stderr : ctx.stdout;
      // A finished batch run again: nothing is wrong, so it is said as done, with where its results are.
      // Inputs the tool does not take were rejected the first time too, which then ended 0 as well.
      const allDone = started.jobIds.length === 0 && started.skipped.length > 0;
      const rejectedToo = started.rejected.length ? `, ${started.rejected.length} rejected` : '';
      notes.write(
        allDone
          ? `already done: nothing new to make (${started.skipped.length} skipped${rejectedToo}); results are in ${oneLine(started.outDir)}\n`
          : `${summary}\n`,
      );
      const report = () => {
        // In the folder walk's order, as the Queue shows them.
        const jobs = engine
          .jobRows(started.jobIds)
          .sort((a, b) => a.seq - b.seq)
          .map(toJobRecord);
        return {
          batch: started.batch?.id ?? null,
          tool: args.tool,
          outDir: started.outDir,
          total: started.jobIds.length,
          done: jobs.filter((j) => j.state === 'done').length,
          queued: started.queued,
          resumed: started.resumed.length,
          jobs: jobs.map((j) => ({
            id: j.id,
            input: j.input,
            state: j.state,
            outputs: j.outputs,
            text: j.text,
            error: j.error,
          })),
          skipped: started.skipped,
          rejected: started.rejected,
        };
      };
      if (started.jobIds.length === 0) {
        if (args.json) ctx.stdout.write(`${terminalJson(report(), 2)}\n`);
        return allDone || !started.rejected.length ? 0 : 1;
      }
      engine.start();
      const counts = await waitForJobs(engine, started.jobIds, new Progress(ctx), stop.signal, started.batch?.id);
      if (stop.signal.aborted) {
        if (args.json) ctx.stdout.write(`${terminalJson(report(), 2)}\n`);
        if (stop.timedOut()) {
          // Creates in flight finish first (as after Ctrl-C); then why it got nowhere, when the server
          // refused or could not be reached: the likely reason a limit was set.
          // A hold (budget, daily cap) is named with what lifts it: running the same command again does not.
          const hold = batchHoldNote(engine, started.batch?.id);
          await engine.stop();
          const { waiting } = countStates(engine, started.jobIds);
          const gaveUp = `gave up after ${args.timeout!.label} (--timeout): ${counts.done} of ${started.jobIds.length} done`;
          ctx.stderr.write(
            hold
              ? `${gaveUp}; ${oneLine(hold)}\n`
              : `${gaveUp}${waiting ? `; still waiting: ${oneLine(waiting)}` : ''}; ` +
                  'the rest stay queued: run the same command again to resume (nothing is submitted twice)\n',
          );
          return TIMED_OUT;
        }
        ctx.stderr.write('stopped; run the same command again to resume (nothing is submitted twice)\n');
        return 130;
      }
      for (const j of engine.store.byIds(started.jobIds)) {
        // A done job's error is what was saved but not as asked (its metadata not copied).
        if (j.state !== 'done' || j.error)
          ctx.stderr.write(`${j.state} ${j.id.slice(0, 8)} ${oneLine(`${j.inputPath ?? ''}: ${j.error ?? ''}`)}\n`);
      }
      if (args.json) ctx.stdout.write(`${terminalJson(report(), 2)}\n`);
      // The folder as the batch has it (full path, the default when no --out): a script can `cd` there.
      else ctx.stdout.write(`${counts.done} of ${started.jobIds.length} done; results in ${oneLine(started.outDir)}\n`);
      return counts.done === started.jobIds.length ? 0 : 1;
    } finally {
      stop.release();
      await session.close();
    }
  },
};
