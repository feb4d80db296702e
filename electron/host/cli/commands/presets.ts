import { readFile } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { findTool, TOOLS } from '../../../../shared/catalogue/index.ts';
import { DeskError } from '../../../../shared/contract/define.ts';
import { moveSavedFile } from '../../../core/saved-files.ts';
import { oneLine, terminalJson, UsageError, type CliCommand, type CliContext } from '../command.ts';
import { openCliServices } from '../services.ts';
import { invoke, paramsOf, parseOptions, refusal, table } from './team-common.ts';
import type { CommandName, Req, Res } from '../../../../shared/contract/index.ts';
import type { Core } from '../../../core/index.ts';

/** As `invoke`, with a name not saved also the user's mistake (exit 2). */
async function ask<K extends CommandName>(core: Core, name: K, req: Req<K>): Promise<Res<K>> {
  const reply = await core.dispatch(name, req);
  if (reply.ok) return reply.result as Res<K>;
  throw refusal(reply.error, ['invalid', 'conflict', 'not_found']);
}

const USAGE = [
  'mediadesk presets list [--tool TOOL] [--json]',
  '       mediadesk presets save NAME TOOL [--param|-p key=value ...] [--replace]',
  '       mediadesk presets remove NAME',
  '       mediadesk presets export [FILE] [--name NAME ...]',
  '       mediadesk presets import FILE',
  "         (a preset is a tool's settings under a name, the same in the app; use one with mediadesk run TOOL --preset NAME;",
  '          export writes every preset (or those named) to FILE, else to the Exports folder; import adds the good ones of a file and names each one it refuses)',
].join('\n');

/** `save`'s settings from --param key=value, typed by the tool's fields as `run` types them. */
function settingsOf(tool: string, pairs: string[]): Record<string, unknown> {
  const entry = findTool(tool);
  if (!entry) throw new UsageError(`unknown tool "${tool}"; known tools: ${TOOLS.map((t) => t.id).join(', ')}`);
  return paramsOf(entry, pairs);
}

async function presets(ctx: CliContext): Promise<number> {
  const [verb, ...rest] = ctx.argv;
  const options = parseOptions(rest, ['--tool', '--param', '-p', '--name'], ['--json', '--replace']);
  const args = options.positional;
  const want = (n: number, what: string) => {
    if (args.length !== n) throw new UsageError(`presets ${verb} takes ${what}`);
  };
  if (verb === 'list') want(0, 'no names (--tool TOOL for one tool)');
  else if (verb === 'save') want(2, 'a name and a tool');
  else if (verb === 'remove') want(1, 'one name');
  else if (verb === 'export') {
    if (args.length > 1) throw new UsageError('presets export takes at most one file');
  } else if (verb === 'import') want(1, 'one file');
  else
    throw new UsageError(verb ? `unknown presets command "${verb}"; use list, save, remove, export or import` : USAGE);
  const s = await openCliServices(ctx);
  try {
    if (verb === 'list') {
      const { presets } = await invoke(s.core, 'presets.list', { tool: options.one('--tool') });
      if (options.flags.has('--json')) ctx.stdout.write(`${terminalJson(presets, 2)}\n`);
      else if (!presets.length)
        ctx.stderr.write('no presets saved yet (mediadesk presets save NAME TOOL --param ...)\n');
      else
        ctx.stdout.write(
          table(
            ['NAME', 'TOOL', 'SETTINGS'],
            presets.map((p) => [p.name, p.tool, JSON.stringify(p.params)]),
          ),
        );
      return 0;
    }
    if (verb === 'save') {
      const [name, tool] = args;
      const pairs = [...(options.values.get('--param') ?? []), ...(options.values.get('-p') ?? [])];
      const p = await invoke(s.core, 'presets.save', {
        name,
        tool,
        params: settingsOf(tool, pairs),
        replace: options.flags.has('--replace'),
      });
      ctx.stdout.write(`saved preset ${oneLine(p.name)} for ${p.tool}\n`);
      return 0;
    }
    if (verb === 'remove') {
      await ask(s.core, 'presets.remove', { name: args[0] });
      ctx.stdout.write(`removed preset ${oneLine(args[0])}\n`);
      return 0;
    }
    if (verb === 'export') {
      const names = options.values.get('--name');
      const r = await ask(s.core, 'presets.export', { names });
      // The file the person named is theirs to choose (the contract takes no path): moved there from the Exports folder.
      if (args[0]) r.path = await moveSavedFile(r.path, resolve(args[0]));
      ctx.stdout.write(`wrote ${oneLine(r.path)}: ${r.count} preset${r.count === 1 ? '' : 's'}\n`);
      return 0;
    }
    const file = resolve(args[0]);
    const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw new DeskError('invalid', `${file} cannot be read (${err.code ?? err.message})`);
    });
    const r = await invoke(s.core, 'presets.import', { text, name: basename(file) });
    for (const p of r.added) ctx.stdout.write(`added ${oneLine(p.name)} (${p.tool})\n`);
    for (const x of r.refused) ctx.stderr.write(`refused ${oneLine(`${x.name}: ${x.reason}`)}\n`);
    ctx.stdout.write(`${r.added.length} added, ${r.refused.length} refused\n`);
    return r.refused.length ? 2 : 0;
  } finally {
    await s.close();
  }
}

export const presetsCommand: CliCommand = {
  name: 'presets',
  usage: USAGE,
  run: presets,
};
