import { hostname } from 'node:os';
import type { HandlerMap } from '../../../shared/contract/define.ts';
import { DeskError } from '../../../shared/contract/define.ts';
import type { TeamToday } from '../../../shared/contract/jobs.ts';
import type { TeamServerStatus, TeamSpend, teamServerCommands } from '../../../shared/contract/team-server.ts';
import { utcDay } from '../../../shared/service-limits.ts';
import type { Pacer } from '../limits/pacer.ts';
import type { SecretStore } from '../secrets.ts';
import type { SettingsService } from '../settings.ts';
import { splitTeamUrl, teamTarget } from './config.ts';
import { describe, TeamServer } from './connection.ts';
import { TeamPacing } from './pacing.ts';
import { auditLeaseMs, TeamAuditArchive } from './audit-archive.ts';

/**
 * Refuses a URL whose user or password the server turns away, before anything is saved: kept, it
 * would only fail later on every machine's first create. A server that does not answer now is kept.
 */
async function refusedLogin(connect: string): Promise<void> {
  const probe = new TeamServer({ target: async () => ({ connect, shown: connect, from: 'settings' }) });
  try {
    await probe.with((c) => c.query('SELECT 1'));
  } catch (err) {
    const code = (err as { code?: string }).code;
    // 28P01: a wrong password; 28000: a user the server does not let in.
    if (code === '28P01' || code === '28000') {
      const reason = `${describe(err)}; PostgreSQL said: ${(err as Error).message}`;
      throw new DeskError('invalid', `not connected, nothing was saved: ${reason}`, [{ field: 'url', reason }]);
    }
  } finally {
    await probe.close();
  }
}
import { projectBudgets, setProjectBudget, teamDay, teamSpend, teamToday } from './spend.ts';

export interface TeamServerDeps {
  home: string;
  env: NodeJS.ProcessEnv;
  settings: SettingsService;
  /** The keychain entry of the team server's password, opened when first needed. */
  password: () => Promise<SecretStore>;
  pacer: Pacer;
  /** Credits one create of a tool costs (PriceBook), for the team budget. */
  priceOf: (tool: string) => number | null;
}

/** Who holds the audit sync lease and how many events the team's archive holds, as the status shows them. */
async function archiveStatus(
  archive: TeamAuditArchive,
): Promise<Pick<TeamServerStatus, 'auditLease' | 'auditArchived'>> {
  const h = await archive.holder().catch(() => null);
  return {
    auditLease: h && {
      holder: h.mine ? `${h.name} (this process)` : h.name,
      until: new Date(h.until).toISOString(),
      syncing: h.syncing,
      syncedAt: h.syncedAt === null ? null : new Date(h.syncedAt).toISOString(),
    },
    auditArchived: await archive.count().catch(() => null),
  };
}

/** The team server of a core: its connection, the shared pacing it lends the engine's pacer, and its commands. */
export function openTeamServer(deps: TeamServerDeps) {
  const server = new TeamServer({
    target: () => teamTarget(deps.env, deps.settings.get().teamServer, async () => (await deps.password()).get()),
    machineName: `${hostname()} ${deps.home}`,
  });
  const pacing = new TeamPacing({ server, local: deps.pacer.limiter, priceOf: deps.priceOf });
  const archive = new TeamAuditArchive(server, auditLeaseMs(deps.env));
  /** The team's audit archive while a team server is set. */
  const auditArchive = async () => ((await server.configured()) ? archive : null);
  /** Shared pacing while a team server is set, this data folder's alone otherwise. */
  const apply = async () => deps.pacer.share((await server.configured()) ? pacing : null);

  const status = async (): Promise<TeamServerStatus> => {
    const s = await server.status();
    let budget: TeamServerStatus['budget'] = null;
    let projects: TeamServerStatus['projects'] = null;
    if (s.reachable)
      [budget, projects] = await server
        .with(async (c) => {
          const day = utcDay(Date.now());
          return [await teamDay(c, day), await projectBudgets(c, day)] as const;
        })
        .catch(() => [null, null] as const);
    const lease = s.reachable ? await archiveStatus(archive) : { auditLease: null, auditArchived: null };
    return { ...s, fallback: deps.pacer.team ? pacing.fallbackMessage : null, budget, projects, ...lease };
  };

  /** The team's spend today and what is left of its budgets, for the estimate; null without a team server. */
  const today = async (project: string | null): Promise<TeamToday | null> => {
    if (!(await server.configured())) return null;
    try {
      return await server.with((c) => teamToday(c, utcDay(Date.now()), project));
    } catch (err) {
      return { reachable: false, why: describe(err), spentToday: 0, budget: null, left: null, project: null };
    }
  };

  /** The studio's spend on those days; null without a team server, reachable false (with why) when it cannot be read. */
  const spend = async (days: string[]): Promise<TeamSpend | null> => {
    if (!(await server.configured())) return null;
    try {
      return await server.with((c) => teamSpend(c, days));
    } catch (err) {
      return { days, reachable: false, why: describe(err), credits: 0, creates: 0, byMachine: [], byProject: [] };
    }
  };

  const handlers: HandlerMap<typeof teamServerCommands> = {
    'teamServer.status': status,
    'teamServer.test': async () => {
      // A fresh connection, so what answers is the server now, not a pool from before.
      await server.close();
      return status();
    },
    'teamServer.connect': async ({ url }) => {
      let parts: { url: string; password: string | null };
      try {
        parts = splitTeamUrl(url);
      } catch (err) {
        throw new DeskError('invalid', (err as Error).message, [{ field: 'url', reason: (err as Error).message }]);
      }
      await refusedLogin(url);
      if (parts.password !== null) {
        const store = await deps.password();
        if (store.kind !== 'os')
          throw new DeskError(
            'invalid',
            `the password was not stored: ${store.note}; set ${'MEDIADESK_TEAM_DB'} instead`,
          );
        await store.set(parts.password);
      }
      deps.settings.set({ teamServer: parts.url });
      await server.close();
      await apply();
      return status();
    },
    'teamServer.disconnect': async () => {
      deps.settings.set({ teamServer: '' });
      const store = await deps.password();
      await store.clear().catch(() => {});
      await server.close();
      await apply();
      return status();
    },
    'teamServer.spend': async ({ days }) => {
      const r = await spend(days.length ? days : [utcDay(Date.now())]);
      if (!r) throw new DeskError('unavailable', 'no team server is set (Settings > Team, mediadesk team connect URL)');
      return r;
    },
    'teamServer.setBudget': async ({ creditsPerDay, project }) => {
      try {
        await server.with(async (c) => {
          if (project !== undefined) await setProjectBudget(c, project, creditsPerDay, server.machineName);
          else if (creditsPerDay === null) await c.query("DELETE FROM mediadesk.budgets WHERE name = 'day'");
          else
            await c.query(
              `INSERT INTO mediadesk.budgets (name, credits, set_at, set_by) VALUES ('day', $1, $2, $3)
               ON CONFLICT (name) DO UPDATE SET credits = $1, set_at = $2, set_by = $3`,
              [creditsPerDay, Date.now(), server.machineName],
            );
        });
      } catch (err) {
        throw new DeskError(
          'unavailable',
          `the ${project === undefined ? 'team' : `project "${project}"'s`} budget was not set: ${describe(err)}`,
        );
      }
      return status();
    },
  };
  return { server, pacing, apply, handlers, auditArchive, today, spend, close: () => server.close() };
}
