import { runWaitingFor, type AppDefinition, type AppInput, type AppRun } from '../../../../shared/contract/team.ts';
import { oneLine, terminalJson, UsageError, type CliCommand } from '../command.ts';
import { openCliServices, type CliServices } from '../services.ts';
import { cancelRun, retryRun, runApp } from './apps-run.ts';
import { timeLimitOf } from '../duration.ts';
import { invoke, parseOptions, refusal, table } from './team-common.ts';

const USAGE = [
  'mediadesk apps list [--json]',
  '       mediadesk apps mine [--json]   (your own flows, drafts included and marked)',
  '       mediadesk apps show ID [--json]',
  '       mediadesk apps run ID --input|-i id=value [--input id=value ...] [--out DIR] [--yes] [--new] [--timeout DURATION]',
  '         (a creation input takes an image file, an image URL or a creation id; --yes accepts the cost;',
  '          the same command again resumes its unfinished run instead of paying for another; --new starts another)',
  '       mediadesk apps runs [--limit N] [--json]   (earlier runs, newest first)',
  '       mediadesk apps cancel RUN   (RUN: the id `apps runs` shows, or more of it; a run already submitted may still be charged)',
  '       mediadesk apps retry RUN [--yes] [--no-wait | --timeout DURATION]',
  '         (a failed, canceled or needs-attention run, followed to its results unless --no-wait; a paid run is fetched',
  '          or polled again, never re-sent; a run sent anew is a new paid run, so --yes accepts its cost)',
  '         (--timeout 10m stops following after that long, exit 124; the run goes on, the same command resumes it)',
].join('\n');

/** Options per subcommand: one that does not apply is refused, not ignored. */
const OPTIONS: Record<string, { valued: string[]; flags: string[] }> = {
  list: { valued: [], flags: ['--json'] },
  mine: { valued: [], flags: ['--json'] },
  show: { valued: [], flags: ['--json'] },
  run: { valued: ['--input', '-i', '--out', '--timeout'], flags: ['--yes', '--new'] },
  runs: { valued: ['--limit'], flags: ['--json'] },
  cancel: { valued: [], flags: [] },
  retry: { valued: ['--timeout'], flags: ['--yes', '--no-wait'] },
};

function inputsOf(pairs: string[]): Record<string, string> {
  const inputs: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new UsageError(`--input takes id=value, got "${pair}"`);
    // The last one won: a script assembling inputs from two sources ran with one it did not mean.
    if (Object.hasOwn(inputs, pair.slice(0, eq)))
      throw new UsageError(`--input ${pair.slice(0, eq)} is given more than once`);
    inputs[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return inputs;
}

function limitOf(raw = '20'): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > 500)
    throw new UsageError(`--limit must be a whole number from 1 to 500, got "${raw}"`);
  return n;
}

/** The app named on the command line: an id the server does not know is bad input (exit 2), as an unknown job or run id is. */
async function appOf(s: CliServices, id: string): Promise<AppDefinition> {
  const reply = await s.core.dispatch('apps.get', { id });
  if (reply.ok) return reply.result as AppDefinition;
  if (reply.error.code === 'not_found') throw new UsageError(`no app ${id} (\`mediadesk apps list\` lists them)`);
  throw refusal(reply.error);
}

const when = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
const runRow = (r: AppRun, backendInUse: string) => [
  r.id.slice(0, 8),
  r.state,
  when(r.createdAt),
  r.appName,
  r.outputs.length,
  r.outDir,
  r.error ?? runWaitingFor(r, backendInUse) ?? '',
];

/** What an input accepts, for the ACCEPTS column of `apps show`. */
function acceptsOf(i: AppInput): string {
  if (i.type === 'select') return (i.options ?? []).join('|');
  if (i.type === 'number') return `${i.min ?? ''}..${i.max ?? ''}`;
  if (i.type === 'creation') return 'file, URL or creation id';
  return i.maxLength ? `up to ${i.maxLength} chars` : 'text';
}

export const appsCommand: CliCommand = {
  name: 'apps',
  usage: USAGE,
  async run(ctx) {
    const [sub, ...rest] = ctx.argv;
    if (!sub || !Object.hasOwn(OPTIONS, sub))
      throw new UsageError(
        sub
          ? `unknown apps command "${sub}" (list, mine, show, run, runs, cancel, retry)`
          : 'say list, mine, show ID, run ID, runs, cancel RUN or retry RUN',
      );
    const options = parseOptions(rest, OPTIONS[sub].valued, OPTIONS[sub].flags);
    const takesId = sub === 'show' || sub === 'run';
    const takesRun = sub === 'cancel' || sub === 'retry';
    if (!takesId && !takesRun && options.positional.length) throw new UsageError(`apps ${sub} takes no arguments`);
    if (takesId && options.positional.length !== 1) throw new UsageError(`apps ${sub} takes one app id`);
    if (takesRun && options.positional.length !== 1)
      throw new UsageError(`apps ${sub} takes one run id (\`mediadesk apps runs\` lists them)`);
    const inputs = inputsOf([...(options.values.get('--input') ?? []), ...(options.values.get('-i') ?? [])]);
    const limit = sub === 'runs' ? limitOf(options.one('--limit')) : 0;
    const timeout = timeLimitOf(options.one('--timeout'), options.flags.has('--no-wait'));
    const s = await openCliServices(ctx);
    try {
      if (sub === 'cancel') return await cancelRun(ctx, s, options.positional[0]);
      if (sub === 'retry')
        return await retryRun(ctx, s, options.positional[0], {
          yes: options.flags.has('--yes'),
          wait: !options.flags.has('--no-wait'),
          timeout,
        });
      if (sub === 'list') {
        const { apps } = await invoke(s.core, 'apps.list', {});
        if (options.flags.has('--json')) ctx.stdout.write(`${terminalJson(apps, 2)}\n`);
        // The service's list says no output kind (its results do): the column only where some app has one.
        else if (apps.some((a) => a.output))
          ctx.stdout.write(
            table(
              ['ID', 'OUTPUT', 'COST', 'NAME'],
              apps.map((a) => [a.id, a.output ?? '', a.cost ?? '?', a.name]),
            ),
          );
        else
          ctx.stdout.write(
            table(
              ['ID', 'COST', 'NAME'],
              apps.map((a) => [a.id, a.cost ?? '?', a.name]),
            ),
          );
        return 0;
      }
      if (sub === 'mine') {
        const { flows } = await invoke(s.core, 'apps.mine', {});
        if (options.flags.has('--json')) ctx.stdout.write(`${terminalJson(flows, 2)}\n`);
        else
          ctx.stdout.write(
            table(
              ['ID', 'DRAFT', 'NAME'],
              flows.map((f) => [f.id, f.draft ? 'draft' : '', f.name]),
            ),
          );
        return 0;
      }
      if (sub === 'runs') {
        // Local records (shared with the desktop app's Queue): no request, nothing paid.
        const { runs } = await invoke(s.core, 'apps.runs', { limit });
        if (options.flags.has('--json')) ctx.stdout.write(`${terminalJson(runs, 2)}\n`);
        else if (!runs.length) ctx.stderr.write('no app runs yet\n');
        else {
          const backendInUse = (await invoke(s.core, 'app.info', {})).backend.identity;
          ctx.stdout.write(
            table(
              ['RUN', 'STATE', 'CREATED (UTC)', 'APP', 'FILES', 'FOLDER', 'NOTE'],
              runs.map((r) => runRow(r, backendInUse)),
            ),
          );
        }
        return 0;
      }
      const def = await appOf(s, options.positional[0]);
      if (sub === 'show') {
        if (options.flags.has('--json')) ctx.stdout.write(`${terminalJson(def, 2)}\n`);
        else {
          ctx.stdout.write(
            `${oneLine(`${def.name} (${def.id})${def.description ? `: ${def.description}` : ''}`)}\ncost: ${def.cost ?? 'unknown'} credits per run${def.output ? `; output: ${oneLine(def.output)}` : ''}\n`,
          );
          ctx.stdout.write(
            table(
              ['INPUT', 'TYPE', 'REQUIRED', 'ACCEPTS', 'LABEL'],
              def.inputs.map((i) => [i.id, i.type, i.required ? 'yes' : 'no', acceptsOf(i), i.label]),
            ),
          );
        }
        return 0;
      }
      return await runApp(ctx, s, def, {
        inputs,
        out: options.one('--out'),
        yes: options.flags.has('--yes'),
        fresh: options.flags.has('--new'),
        timeout,
      });
    } finally {
      await s.close();
    }
  },
};
