import { teamSpendSentence } from '../../../../shared/contract/report.ts';
import type { TeamServerStatus } from '../../../../shared/contract/team-server.ts';
import { terminalJson, UsageError, type CliCommand } from '../command.ts';
import { openCliServices } from '../services.ts';
import { invoke, parseOptions } from './team-common.ts';

function show(s: TeamServerStatus): string {
  if (!s.configured) return 'No team server is set: this machine paces alone (mediadesk team connect URL sets one).\n';
  const lines = [`Team server: ${s.url ?? '(not readable)'}${s.from === 'env' ? ' (from MEDIADESK_TEAM_DB)' : ''}`];
  if (s.reachable)
    lines.push(
      `Answers: yes${s.tls ? ', over TLS' : ', without TLS'}; schema version ${s.schemaVersion}; ${s.machines} machine${s.machines === 1 ? '' : 's'} seen in the last 10 minutes`,
    );
  else lines.push(`Answers: no (${s.error ?? 'unknown'})`);
  if (s.fallback) lines.push(s.fallback);
  if (s.budget)
    lines.push(
      s.budget.creditsPerDay === null
        ? `Team budget: none (${s.budget.spentToday} credits spent today by the team)`
        : `Team budget: ${s.budget.creditsPerDay} credits a day; ${s.budget.spentToday} spent today by the team`,
    );
  for (const p of s.projects ?? [])
    lines.push(
      `Project "${p.project}": ${p.creditsPerDay === null ? 'no budget' : `${p.creditsPerDay} credits a day`}; ${p.spentToday} spent today by the team`,
    );
  if (s.auditLease)
    lines.push(
      `Audit sync lease: ${s.auditLease.holder}, until ${s.auditLease.until}${s.auditLease.syncing ? ', syncing now' : ''}${s.auditLease.syncedAt ? `; last synced ${s.auditLease.syncedAt}` : ''}`,
    );
  else if (s.reachable) lines.push('Audit sync lease: free (the next audit sync takes it)');
  if (s.auditArchived !== null && s.auditArchived !== undefined)
    lines.push(`Audit archive: ${s.auditArchived} event(s)`);
  return lines.join('\n') + '\n';
}

export const teamCommand: CliCommand = {
  name: 'team',
  usage: [
    'mediadesk team status|test [--json]',
    '       mediadesk team connect postgres://USER:PASSWORD@HOST[:PORT]/DATABASE[?sslmode=...]',
    '       mediadesk team disconnect',
    '       mediadesk team budget [--project NAME] CREDITS|none',
    '       mediadesk team spend [--day YYYY-MM-DD ...] [--json]',
  ].join('\n'),
  async run(ctx) {
    const options = parseOptions(ctx.argv, ['--project', '--day'], ['--json']);
    const [sub, arg, extra] = options.positional;
    if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`);
    const project = options.one('--project');
    if (project !== undefined && sub !== 'budget') throw new UsageError('--project is for team budget');
    if (options.list('--day').length && sub !== 'spend') throw new UsageError('--day is for team spend');
    if (sub === 'spend') {
      const s = await openCliServices(ctx);
      try {
        const r = await invoke(s.core, 'teamServer.spend', { days: options.list('--day') });
        ctx.stdout.write(options.flags.has('--json') ? `${terminalJson(r, 2)}\n` : `${teamSpendSentence(r)}\n`);
        return r.reachable ? 0 : 1;
      } finally {
        await s.close();
      }
    }
    let call: (core: Parameters<typeof invoke>[0]) => Promise<TeamServerStatus>;
    if (sub === 'status' || sub === undefined) call = (core) => invoke(core, 'teamServer.status', {});
    else if (sub === 'test') call = (core) => invoke(core, 'teamServer.test', {});
    else if (sub === 'disconnect') call = (core) => invoke(core, 'teamServer.disconnect', {});
    else if (sub === 'connect') {
      if (!arg) throw new UsageError('team connect needs the server URL, postgres://USER:PASSWORD@HOST/DATABASE');
      call = (core) => invoke(core, 'teamServer.connect', { url: arg });
    } else if (sub === 'budget') {
      if (!arg || !(arg === 'none' || /^\d+(\.\d+)?$/.test(arg)))
        throw new UsageError(`team budget needs credits a day (a number) or none; got "${arg ?? ''}"`);
      const creditsPerDay = arg === 'none' ? null : Number(arg);
      call = (core) =>
        invoke(core, 'teamServer.setBudget', project === undefined ? { creditsPerDay } : { creditsPerDay, project });
    } else throw new UsageError(`unknown team command "${sub}"`);
    const s = await openCliServices(ctx);
    try {
      const r = await call(s.core);
      ctx.stdout.write(options.flags.has('--json') ? `${terminalJson(r, 2)}\n` : show(r));
      return r.configured && !r.reachable && (sub === 'test' || sub === 'connect') ? 1 : 0;
    } finally {
      await s.close();
    }
  },
};
