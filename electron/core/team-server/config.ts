import { teamServerUrlProblem } from '../../../shared/settings.ts';

/** A full URL (password included) for scripts and tests; over Settings > Team. */
export const TEAM_DB_ENV = 'MEDIADESK_TEAM_DB';
/** The keychain account of the team server's password, beside the API key's. */
export const TEAM_PASSWORD_ACCOUNT = 'team-db-password';

/** Where the team server is: the URL to connect with (password included) and the one to show (without it). */
export interface TeamTarget {
  connect: string;
  shown: string;
  from: 'env' | 'settings';
}

/** A URL as typed (maybe with its password) split into the URL Settings keep and the password the keychain keeps. */
export function splitTeamUrl(raw: string): { url: string; password: string | null } {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw new Error(`the team server must be a URL such as postgres://user@db.studio.lan/mediadesk; got "${raw}"`);
  }
  const password = u.password ? decodeURIComponent(u.password) : null;
  u.password = '';
  const url = u.toString();
  const problem = teamServerUrlProblem(url);
  if (problem) throw new Error(`the team server URL ${problem}`);
  return { url, password };
}

/** The URL without its password, for status lines and logs. */
export function shownUrl(raw: string): string {
  try {
    const u = new URL(raw);
    u.password = '';
    return u.toString();
  } catch {
    return '(not a URL)';
  }
}

/** The team server in use: MEDIADESK_TEAM_DB, else Settings' URL with the keychain's password; null when none is set. */
export async function teamTarget(
  env: NodeJS.ProcessEnv,
  settingsUrl: string,
  password: () => Promise<string | null>,
): Promise<TeamTarget | null> {
  const fromEnv = env[TEAM_DB_ENV]?.trim();
  if (fromEnv) {
    const problem = teamServerUrlProblem(shownUrl(fromEnv));
    if (problem) throw new Error(`${TEAM_DB_ENV} ${problem}`);
    return { connect: fromEnv, shown: shownUrl(fromEnv), from: 'env' };
  }
  if (!settingsUrl) return null;
  const u = new URL(settingsUrl);
  const pw = await password();
  if (pw) u.password = encodeURIComponent(pw);
  return { connect: u.toString(), shown: settingsUrl, from: 'settings' };
}
