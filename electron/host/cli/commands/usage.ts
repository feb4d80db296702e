import { GRANULARITIES, type UsageQuery } from '../../../../shared/contract/team.ts';
import { DEFAULT_RANGES, usageCsv } from '../../../core/analytics/service.ts';
import { realDay } from '../../../../shared/validation/dates.ts';
import { terminalJson, UsageError, type CliCommand } from '../command.ts';
import { openCliServices } from '../services.ts';
import { invoke, parseOptions, table } from './team-common.ts';

const ids = (raw: string[], flag: string) =>
  raw.map((v) => {
    if (!/^\d+$/.test(v) || Number(v) < 1) throw new UsageError(`${flag} takes integer ids of at least 1, got "${v}"`);
    return Number(v);
  });

export const usageCommand: CliCommand = {
  name: 'usage',
  usage: [
    'mediadesk usage --granularity day|week|month|year [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--group ID] [--project REF] [--api-key ID] [--refresh] [--json|--csv]',
    '         (UTC days, at most 365; --to defaults to today; without --from the range up to --to is, by granularity:',
    ...GRANULARITIES.map((g) => `          ${g}: ${DEFAULT_RANGES[g].says}${g === 'year' ? ')' : ''}`),
  ].join('\n'),
  async run(ctx) {
    const options = parseOptions(
      ctx.argv,
      ['--granularity', '--from', '--to', '--group', '--project', '--api-key'],
      ['--json', '--csv', '--refresh'],
    );
    if (options.positional.length) throw new UsageError(`unexpected argument "${options.positional[0]}"`);
    const g = options.one('--granularity');
    if (!g) throw new UsageError(`--granularity is required (${GRANULARITIES.join(', ')})`);
    if (!(GRANULARITIES as readonly string[]).includes(g))
      throw new UsageError(`--granularity must be one of ${GRANULARITIES.join(', ')}, got "${g}"`);
    if (options.flags.has('--json') && options.flags.has('--csv')) throw new UsageError('choose --json or --csv');
    for (const f of ['--from', '--to']) {
      const v = options.one(f);
      if (v !== undefined && !realDay(v)) throw new UsageError(`${f} must be a real date YYYY-MM-DD, got "${v}"`);
    }
    const q: UsageQuery = { granularity: g as UsageQuery['granularity'] };
    if (options.one('--from')) q.from = options.one('--from');
    if (options.one('--to')) q.to = options.one('--to');
    if (options.list('--group').length) q.groupIds = ids(options.list('--group'), '--group');
    if (options.list('--project').length) q.projectRefs = options.list('--project');
    if (options.list('--api-key').length) q.apiKeyIds = ids(options.list('--api-key'), '--api-key');
    const s = await openCliServices(ctx);
    try {
      const r = await invoke(s.core, 'usage.query', { ...q, refresh: options.flags.has('--refresh') });
      if (options.flags.has('--json')) ctx.stdout.write(`${terminalJson(r, 2)}\n`);
      else if (options.flags.has('--csv')) ctx.stdout.write(usageCsv(r).csv);
      else
        ctx.stdout.write(
          table(
            ['DATE', 'USES', 'CREDITS', 'TOP TOOL'],
            r.points.map((p) => [
              p.date,
              p.uses,
              p.credits,
              Object.entries(p.byTool).sort((a, b) => b[1].credits - a[1].credits)[0]?.[0] ?? '',
            ]),
          ),
        );
      // On stderr so --json and --csv stay machine-readable.
      // The range said, and why when the user did not choose it: a month of 7 days looked like a month's use.
      const chosen = q.from
        ? ''
        : ` (no --from: ${DEFAULT_RANGES[q.granularity].says}; --from and --to choose another range)`;
      ctx.stderr.write(
        `${r.request.start_date} to ${r.request.end_date}${chosen}; ${r.cached ? 'from the local cache (no request spent)' : 'fetched'}; ${r.budget.remaining} of ${r.budget.limit} credit-usage requests left today (UTC)\n`,
      );
      return 0;
    } finally {
      await s.close();
    }
  },
};
