import { resolve } from 'node:path';
import { findTool, parseParam, TOOLS, withDefaults } from '../../../../shared/catalogue/index.ts';
import { isSettleSeconds, SETTLE_SECONDS_RULE, type HotFolderRecord } from '../../../../shared/contract/hot-folders.ts';
import { canonicalPath } from '../../../core/paths.ts';
import { settingsKey } from '../../../core/queue/store.ts';
import { guardJobsFrom, HotFolderWatcher, type FileEvent } from '../../../core/hot-folders/watcher.ts';
import { oneLine, UsageError, type CliCommand, type CliContext } from '../command.ts';
import { openEngineSession } from '../engine-session.ts';
import { interruptible } from '../interrupt.ts';
import { openCliServices, type CliServices } from '../services.ts';
import { invoke, parseOptions, table } from './team-common.ts';

const toolTitle = (id: string) => findTool(id)?.title ?? id;

const countsOf = (f: HotFolderRecord) =>
  [
    `${f.counts.done} done`,
    f.counts.queued && `${f.counts.queued} queued`,
    f.counts.waiting && `${f.counts.waiting} waiting`,
    f.counts.failed && `${f.counts.failed} failed`,
    f.counts.skipped && `${f.counts.skipped} skipped`,
  ]
    .filter(Boolean)
    .join(', ');

/** `--settle 5` or `--settle 5s`: the folder's wait, in whole seconds. */
function parseSettle(raw: string): number {
  const m = /^(\d+)s?$/.exec(raw.trim());
  const seconds = m ? Number(m[1]) : NaN;
  if (!isSettleSeconds(seconds))
    throw new UsageError(`--settle must be ${SETTLE_SECONDS_RULE}, such as 5, got "${raw}"`);
  return seconds;
}

const settleWords = (f: HotFolderRecord) =>
  `a file is taken once it has stopped changing for ${f.settleSeconds} second${f.settleSeconds === 1 ? '' : 's'}`;

const sharedWords = (f: HotFolderRecord) =>
  f.shared ? 'shared with the team: each file is taken by one machine' : 'not shared: this machine takes every file';

/** The hot folder of `folder` as typed in a shell (relative to its folder, links resolved). */
async function hotFolderAt(services: CliServices, folder: string): Promise<HotFolderRecord | null> {
  const path = await canonicalPath(resolve(folder));
  const { folders } = await invoke(services.core, 'hotFolders.list', {});
  return folders.find((f) => f.folder === path) ?? null;
}

async function mustFind(services: CliServices, folder: string): Promise<HotFolderRecord> {
  const found = await hotFolderAt(services, folder);
  if (!found) throw new UsageError(`${folder} is not a hot folder (mediadesk watch --list names them)`);
  return found;
}

/** --list, --pause, --resume, --remove: quick changes that need no watching. */
async function manage(ctx: CliContext, action: string, folder: string | undefined): Promise<number> {
  const services = await openCliServices(ctx);
  try {
    if (action === '--list') {
      const { folders } = await invoke(services.core, 'hotFolders.list', {});
      if (!folders.length) {
        ctx.stdout.write('no hot folders; add one with: mediadesk watch <folder> --tool <tool>\n');
        return 0;
      }
      ctx.stdout.write(
        table(
          ['STATE', 'TOOL', 'WAIT', 'FILES', 'FOLDER', 'RESULTS', 'SHARED'],
          folders.map((f) => [
            f.state,
            f.tool,
            `${f.settleSeconds}s`,
            countsOf(f),
            f.folder,
            f.outDir,
            f.shared ? 'with the team' : 'no',
          ]),
        ),
      );
      for (const f of folders) if (f.problem) ctx.stderr.write(`${oneLine(`${f.folder}: ${f.problem}`)}\n`);
      return 0;
    }
    const found = await mustFind(services, folder!);
    if (action === '--remove') {
      await invoke(services.core, 'hotFolders.remove', { id: found.id });
      ctx.stdout.write(`removed ${oneLine(found.folder)}; its files and results stay where they are\n`);
    } else if (action === '--pause') {
      await invoke(services.core, 'hotFolders.pause', { id: found.id });
      ctx.stdout.write(`paused ${oneLine(found.folder)}; files that arrive now wait until it is resumed\n`);
    } else {
      await invoke(services.core, 'hotFolders.resume', { id: found.id });
      ctx.stdout.write(`resumed ${oneLine(found.folder)}\n`);
    }
    return 0;
  } finally {
    await services.close();
  }
}

function describeEvent(e: FileEvent): string {
  const name = oneLine(e.path);
  if (e.state === 'done') return `done ${name}${e.output ? ` -> ${oneLine(e.output)}` : ''}`;
  if (e.state === 'queued') return `queued ${name}`;
  return `${e.state} ${name}: ${oneLine(e.reason ?? '')}`;
}

export const watchCommand: CliCommand = {
  name: 'watch',
  usage:
    'mediadesk watch <folder> [--tool|-t TOOL] [--param|-p key=value ...] [--out|-o DIR] [--settle SECONDS] [--shared|--alone] [--concurrency|-c N]\n' +
    '         mediadesk watch --list | --pause <folder> | --resume <folder> | --remove <folder>\n' +
    '         (the folder is kept as a hot folder: the app watches it too, and files that arrive while nothing watches are processed next time;\n' +
    '          --tool is needed the first time; without --out, results go where `run` would put them;\n' +
    '          --settle 5: take a file once it has stopped changing for 5 seconds, 1 to 60, kept with the folder; 2 unless given;\n' +
    '          --shared: machines of the team watching it take each file once, through the team server (new folders are shared when one is set);\n' +
    '          --alone: this machine processes every file itself)',
  // eslint-disable-next-line max-lines-per-function -- one command: --list, --pause, --resume, --remove and watching share the parsed flags
  async run(ctx: CliContext): Promise<number> {
    const options = parseOptions(
      ctx.argv,
      [
        '--tool',
        '-t',
        '--param',
        '-p',
        '--out',
        '-o',
        '--settle',
        '--concurrency',
        '-c',
        '--pause',
        '--resume',
        '--remove',
      ],
      ['--list', '--shared', '--alone'],
    );
    if (options.flags.has('--shared') && options.flags.has('--alone'))
      throw new UsageError('give --shared or --alone, not both');
    const sharedFlag = options.flags.has('--shared') || (options.flags.has('--alone') ? false : undefined);
    const actions = ['--pause', '--resume', '--remove'].filter((a) => options.values.has(a));
    if (options.flags.has('--list')) actions.push('--list');
    if (actions.length > 1) throw new UsageError(`give one of ${actions.join(', ')}`);
    const [folder, ...extra] = options.positional;
    if (actions.length) {
      if (folder) throw new UsageError(`${actions[0]} takes no other folder`);
      return manage(ctx, actions[0], actions[0] === '--list' ? undefined : options.one(actions[0]));
    }
    if (!folder) throw new UsageError('name the folder to watch: mediadesk watch <folder> --tool <tool>');
    if (extra.length) throw new UsageError(`watch one folder at a time; got also ${extra.join(' ')}`);
    const toolId = options.one('--tool', '-t');
    const pairs = [...(options.values.get('--param') ?? []), ...(options.values.get('-p') ?? [])];
    const out = options.one('--out', '-o');
    const rawSettle = options.one('--settle');
    const settleSeconds = rawSettle === undefined ? undefined : parseSettle(rawSettle);
    const rawConcurrency = options.one('--concurrency', '-c');
    const concurrency = rawConcurrency === undefined ? undefined : Number(rawConcurrency);
    if (concurrency !== undefined && (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000))
      throw new UsageError(`--concurrency must be a whole number from 1 to 1000, got "${rawConcurrency}"`);
    const tool = toolId === undefined ? undefined : findTool(toolId);
    if (toolId !== undefined && !tool)
      throw new UsageError(`unknown tool "${toolId}"; known tools: ${TOOLS.map((t) => t.id).join(', ')}`);
    if (!tool && (pairs.length || out)) throw new UsageError('--param and --out need --tool');
    const params: Record<string, unknown> = {};
    for (const p of pairs) {
      try {
        const [k, v] = parseParam(tool!, p);
        if (Object.hasOwn(params, k)) throw new UsageError(`--param ${k} is given more than once`);
        params[k] = v;
      } catch (err) {
        throw err instanceof UsageError ? err : new UsageError((err as Error).message);
      }
    }

    const session = await openEngineSession(ctx, { concurrency });
    const { services } = session;
    const stop = interruptible();
    const watcher = new HotFolderWatcher({
      store: services.core.hotFolderStore,
      engine: session.engine,
      onProblem: (m) => ctx.stderr.write(`${oneLine(m)}\n`),
      guardJobs: guardJobsFrom(ctx.env),
      shared: services.core.hotFolderShared,
    });
    try {
      let hot = await hotFolderAt(services, folder);
      if (hot && tool) {
        const wanted = {
          tool: tool.id,
          params: withDefaults(tool, params),
          outDir: out && (await canonicalPath(resolve(out))),
        };
        const same =
          hot.tool === wanted.tool &&
          settingsKey(hot.params) === settingsKey(wanted.params) &&
          (wanted.outDir === undefined || wanted.outDir === hot.outDir);
        if (!same)
          throw new UsageError(
            `${hot.folder} is already a hot folder with ${toolTitle(hot.tool)} into ${hot.outDir}; remove it first (mediadesk watch --remove ${folder}) to watch it with other settings`,
          );
      }
      if (!hot) {
        if (!tool) throw new UsageError(`${folder} is not a hot folder yet: name a tool with --tool`);
        hot = await invoke(services.core, 'hotFolders.add', {
          folder: resolve(folder),
          tool: tool.id,
          params: withDefaults(tool, params),
          outDir: out && resolve(out),
          settleSeconds,
          shared: sharedFlag,
        });
        ctx.stdout.write(`added hot folder ${oneLine(hot.folder)}\n`);
      } else {
        if (settleSeconds !== undefined && settleSeconds !== hot.settleSeconds) {
          hot = await invoke(services.core, 'hotFolders.setSettle', { id: hot.id, settleSeconds });
          ctx.stdout.write(`changed hot folder ${oneLine(hot.folder)}: ${settleWords(hot)}\n`);
        }
        if (sharedFlag !== undefined && sharedFlag !== hot.shared) {
          hot = await invoke(services.core, 'hotFolders.setShared', { id: hot.id, shared: sharedFlag });
          ctx.stdout.write(`changed hot folder ${oneLine(hot.folder)}: ${sharedWords(hot)}\n`);
        }
        if (hot.state === 'paused') {
          hot = await invoke(services.core, 'hotFolders.resume', { id: hot.id });
          ctx.stdout.write(`resumed hot folder ${oneLine(hot.folder)}\n`);
        }
      }
      ctx.stdout.write(
        `watching ${oneLine(hot.folder)} with ${toolTitle(hot.tool)}; results go to ${oneLine(hot.outDir)}; ${settleWords(hot)}; ${sharedWords(hot)}; press Ctrl-C to stop\n`,
      );
      watcher.onFile((e) => ctx.stdout.write(`${describeEvent(e)}\n`));
      session.engine.start();
      watcher.start();
      let said = false;
      let saidProblem: string | null = null;
      while (!stop.signal.aborted) {
        if (!said && session.engine.otherHolds()) {
          ctx.stderr.write(
            'another MediaDesk process runs the queue and watches the hot folders; this one takes over when it quits\n',
          );
          said = true;
        }
        if (session.engine.holdsQueue) said = false;
        // Why its files wait (a shared folder without its team server, an output folder it cannot write).
        const problem = services.core.hotFolderStore.folder(hot.id)?.problem ?? null;
        if (problem && problem !== saidProblem) ctx.stderr.write(`${oneLine(`${hot.folder}: ${problem}`)}\n`);
        saidProblem = problem;
        await new Promise((r) => setTimeout(r, 200));
      }
      ctx.stderr.write('stopped; files that arrive from now on are processed the next time MediaDesk watches\n');
      return 0;
    } finally {
      stop.release();
      await watcher.stop();
      await session.close();
    }
  },
};
