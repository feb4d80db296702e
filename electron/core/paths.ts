import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The data folder: the same one Electron's app.getPath('userData') gives for productName
 * "MediaDesk", so the desktop app, the web host and the CLI share one database and settings file.
 * MEDIADESK_HOME overrides it (tests, portable installs).
 */
export function dataHome(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (env.MEDIADESK_HOME) return env.MEDIADESK_HOME;
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'MediaDesk');
  if (platform === 'win32') return join(env.APPDATA ?? join(homedir(), 'AppData', 'Roaming'), 'MediaDesk');
  return join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'MediaDesk');
}

export const dbPaths = (home: string) => ({
  jobs: join(home, 'mediadesk.db'),
  audit: join(home, 'audit.db'),
  cache: join(home, 'cache'),
  thumbnails: join(home, 'cache', 'thumbnails'),
});

/** Where results go when Settings names no output folder: a folder of the user's own, not the app's data folder. */
export function defaultOutputDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.MEDIADESK_OUTPUT_DIR || join(homedir(), 'MediaDesk');
}
