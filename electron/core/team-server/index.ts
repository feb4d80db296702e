import { hostname } from 'node:os';
import type { HandlerMap } from '../../../shared/contract/define.ts';
import { DeskError } from '../../../shared/contract/define.ts';
import type { TeamServerStatus, teamServerCommands } from '../../../shared/contract/team-server.ts';
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
    if (s.reachable)
      budget = await server
        .with(async (c) => {
          const r = await c.query<{ credits: string | null; spent: string }>(
            `SELECT (SELECT credits FROM mediadesk.budgets WHERE name = 'day') AS credits,
                    (SELECT coalesce(sum(credits), 0) FROM mediadesk.spend WHERE day = $1) AS spent`,
            [utcDay(Date.now())],
          );
          const row = r.rows[0];
          return { creditsPerDay: row.credits === null ? null : Number(row.credits), spentToday: Number(row.spent) };
        })
        .catch(() => null);
    let auditLease: TeamServerStatus['auditLease'] = null;
    let auditArchived: number | null = null;
    if (s.reachable) {
      const h = await archive.holder().catch(() => null);
      auditLease = h && {
        holder: h.mine ? `${h.name} (this process)` : h.name,
        until: new Date(h.until).toISOString(),
        syncing: h.syncing,
        syncedAt: h.syncedAt === null ? null : new Date(h.syncedAt).toISOString(),
      };
      auditArchived = await archive.count().catch(() => null);
    }
    return { ...s, fallback: deps.pacer.team ? pacing.fallbackMessage : null, budget, auditLease, auditArchived };
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
    'teamServer.setBudget': async ({ creditsPerDay }) => {
      try {
        await server.with(async (c) => {
          if (creditsPerDay === null) await c.query("DELETE FROM mediadesk.budgets WHERE name = 'day'");
          else
            await c.query(
              `INSERT INTO mediadesk.budgets (name, credits, set_at, set_by) VALUES ('day', $1, $2, $3)
               ON CONFLICT (name) DO UPDATE SET credits = $1, set_at = $2, set_by = $3`,
              [creditsPerDay, Date.now(), server.machineName],
            );
        });
      } catch (err) {
        throw new DeskError('unavailable', `the team budget was not set: ${describe(err)}`);
      }
      return status();
    },
  };
  return { server, pacing, apply, handlers, auditArchive, close: () => server.close() };
}
