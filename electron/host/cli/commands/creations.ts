import { terminalJson, UsageError, type CliCommand } from '../command.ts';
import { openCliServices } from '../services.ts';
import { invoke, parseOptions, table } from './team-common.ts';

export const creationsCommand: CliCommand = {
  name: 'creations',
  usage: 'mediadesk creations [--tool NAME] [--page N] [--per-page N] [--json]',
  async run(ctx) {
    const options = parseOptions(ctx.argv, ['--tool', '--page', '--per-page'], ['--json']);
    if (options.positional.length) throw new UsageError(`unexpected argument "${options.positional[0]}"`);
    const int = (flag: string, def: number, max: number) => {
      const v = options.one(flag);
      if (v === undefined) return def;
      if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > max)
        throw new UsageError(`${flag} must be a whole number from 1 to ${max}, got "${v}"`);
      return Number(v);
    };
    const page = int('--page', 1, 1_000_000);
    const perPage = int('--per-page', 20, 100);
    const s = await openCliServices(ctx);
    try {
      const r = await invoke(s.core, 'creations.list', { page, perPage, tool: options.one('--tool') });
      if (options.flags.has('--json')) ctx.stdout.write(`${terminalJson(r, 2)}\n`);
      else {
        ctx.stdout.write(
          table(
            ['ID', 'CREATED', 'TOOL', 'TYPE', 'NAME'],
            r.items.map((c) => [
              c.id,
              c.createdAt?.slice(0, 16).replace('T', ' ') ?? '',
              c.toolName ?? '',
              c.type,
              c.name,
            ]),
          ),
        );
        ctx.stderr.write(`page ${r.page} of ${r.lastPage}${r.total !== null ? ` (${r.total} creations)` : ''}\n`);
      }
      return 0;
    } finally {
      await s.close();
    }
  },
};
