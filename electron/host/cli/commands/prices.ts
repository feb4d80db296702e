import type { PriceRow, PricesList } from '../../../../shared/contract/prices.ts';
import { creditFigure } from '../../../../shared/cost-words.ts';
import { terminalJson, UsageError, type CliCommand } from '../command.ts';
import { openCliServices } from '../services.ts';
import { invoke, parseOptions, table } from './team-common.ts';

const figure = (n: number | null) => (n === null ? 'unknown' : creditFigure(n));

function fromWords(p: PriceRow): string {
  if (p.own !== null) return `yours (published: ${figure(p.published)})`;
  return p.published === null ? 'no published price' : `published ${p.checked}`;
}

function show(r: PricesList): string {
  const rows = table(
    ['TOOL', 'ID', 'CREDITS', 'FOR', 'FROM'],
    r.prices.map((p) => [p.title, p.tool, figure(p.effective), p.unit, fromWords(p)]),
  );
  const notes = r.prices
    .filter((p) => p.own === null)
    .map((p) => `  ${p.tool}: ${[p.note, ...p.scales].filter(Boolean).join('; ') || 'a flat price'} (${p.source})`)
    .join('\n');
  return `Credits per job by the service's published pricing, or your own:\n${rows}\nSources:\n${notes}\n`;
}

export const pricesCommand: CliCommand = {
  name: 'prices',
  usage: [
    'mediadesk prices [--json]',
    '       mediadesk prices set TOOL CREDITS     (your own credits per job, at the unit the table names)',
    '       mediadesk prices reset [TOOL]         (back to the published price; every tool without one)',
  ].join('\n'),
  async run(ctx) {
    const [sub, ...rest] = ctx.argv;
    const sets = sub === 'set';
    const resets = sub === 'reset';
    const options = parseOptions(sets || resets ? rest : ctx.argv, [], ['--json']);
    const [tool, raw, extra] = options.positional;
    let call: (s: Awaited<ReturnType<typeof openCliServices>>) => Promise<PricesList>;
    if (sets) {
      if (!tool || raw === undefined) throw new UsageError('prices set needs a tool id and a number of credits');
      if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
      if (!/^\d+(\.\d+)?$/.test(raw)) throw new UsageError(`the price is a number of credits, 0 or more; got "${raw}"`);
      call = (s) => invoke(s.core, 'prices.set', { tool, credits: Number(raw) });
    } else if (resets) {
      if (raw !== undefined) throw new UsageError(`unexpected argument "${raw}"`);
      call = (s) => invoke(s.core, 'prices.reset', tool === undefined ? {} : { tool });
    } else if (options.positional.length) throw new UsageError(`unknown prices command "${options.positional[0]}"`);
    else call = (s) => invoke(s.core, 'prices.list', {});
    const s = await openCliServices(ctx);
    try {
      const r = await call(s);
      if (options.flags.has('--json')) ctx.stdout.write(`${terminalJson(r, 2)}\n`);
      else ctx.stdout.write(show(r));
      return 0;
    } finally {
      await s.close();
    }
  },
};
