import type { ApiTarget } from '../../../core/api/client.ts';
import type { TeamAuditArchive } from '../../../core/team-server/audit-archive.ts';
import type { CliContext } from '../command.ts';
import type { CliServices } from '../services.ts';

/**
 * The API target: the lead's CLI services (env MEDIADESK_API_URL + MEDIADESK_API_KEY, the
 * keychain, else an in-process Sandbox) and the team's audit archive, opened only when a command
 * really talks to the API or the team server.
 */
export function lazyTarget(ctx: CliContext): {
  target: () => Promise<ApiTarget>;
  team: () => Promise<TeamAuditArchive | null>;
  close: () => Promise<void>;
} {
  let services: Promise<CliServices> | undefined;
  const open = () => (services ??= import('../services.ts').then((m) => m.openCliServices(ctx)));
  return {
    target: async () => (await open()).target(),
    team: async () => (await open()).core.teamAuditArchive(),
    close: async () => {
      if (services) await (await services).close();
    },
  };
}
