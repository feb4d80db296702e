import type { LimitsStatus } from '../../../../shared/contract/limits.ts';
import { PLAN_TIERS, type PlanTier } from '../../../../shared/service-limits.ts';
import { terminalJson, UsageError, type CliCommand } from '../command.ts';
import { openCliServices } from '../services.ts';
import { invoke, parseOptions, table } from './team-common.ts';

const localTime = (ms: number) => new Date(ms).toTimeString().slice(0, 5);
/** A row's name: the tool's or app's title as the app shows it; `*` starts its line in capitals. */
const named = (l: { tool: string; title: string }) =>
  l.tool === '*' ? l.title[0].toUpperCase() + l.title.slice(1) : l.title;

const FROM_WORDS = { published: 'published', own: 'yours', learned: 'learned' } as const;

function show(r: LimitsStatus): string {
  const from = r.planFrom === 'sandbox' ? "the Sandbox's demo key" : 'Settings (planTier)';
  const caps = r.caps.length
    ? table(
        ['TOOL', 'ID', 'CAP A DAY', 'FROM'],
        r.caps.map((c) => [
          named(c),
          c.tool,
          c.cap,
          c.from === 'learned' && c.until !== null
            ? `learned from the service, until ${localTime(c.until)} your time`
            : FROM_WORDS[c.from],
        ]),
      )
    : 'None.\n';
  const today = r.today.length
    ? table(
        ['TOOL', 'USED TODAY', 'LEFT', 'WAITING', 'RESETS'],
        r.today.map((t) => [named(t), t.used, t.left ?? 'no cap', t.waiting, `${localTime(t.resetsAt)} your time`]),
      )
    : 'Nothing sent today.\n';
  return (
    `Plan: ${r.plan} (from ${from})\n\n` +
    `Daily caps (jobs per tool per day; published: ${r.published.source}, read ${r.published.checked}; a tool not listed has none):\n${caps}\n` +
    `Today:\n${today}`
  );
}

export const limitsCommand: CliCommand = {
  name: 'limits',
  usage: [
    'mediadesk limits [--json]',
    '       mediadesk limits set TOOL N|default [--plan business|enterprise]',
    '         (TOOL: a tool id, * for every other tool, or app:ID for a workflow app; default: the plan in use)',
  ].join('\n'),
  async run(ctx) {
    const [sub, ...rest] = ctx.argv;
    const setting = sub === 'set';
    const options = parseOptions(setting ? rest : ctx.argv, setting ? ['--plan'] : [], setting ? [] : ['--json']);
    let change: { tool: string; cap: number | null; plan?: PlanTier } | null = null;
    if (setting) {
      const [tool, raw, extra] = options.positional;
      if (!tool || raw === undefined) throw new UsageError('limits set needs a tool and a number (or default)');
      if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
      if (raw !== 'default' && !/^\d+$/.test(raw))
        throw new UsageError(`the cap is a whole number of jobs a day, 0 or more, or default; got "${raw}"`);
      const plan = options.one('--plan');
      if (plan !== undefined && !(PLAN_TIERS as readonly string[]).includes(plan))
        throw new UsageError(`--plan must be one of ${PLAN_TIERS.join(', ')}, got "${plan}"`);
      change = { tool, cap: raw === 'default' ? null : Number(raw), ...(plan ? { plan: plan as PlanTier } : {}) };
    } else if (options.positional.length) throw new UsageError(`unknown limits command "${options.positional[0]}"`);
    const s = await openCliServices(ctx);
    try {
      const r = change ? await invoke(s.core, 'limits.setCap', change) : await invoke(s.core, 'limits.status', {});
      if (options.flags.has('--json')) ctx.stdout.write(`${terminalJson(r, 2)}\n`);
      else ctx.stdout.write(show(r));
      return 0;
    } finally {
      await s.close();
    }
  },
};
