import { realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';

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

/** Settings as every engine must read them: an empty output folder is the documented default, so a first batch needs no setup. */
export const withDefaultOutputDir = <S extends { outputDir: string }>(s: S, env: NodeJS.ProcessEnv = process.env): S =>
  s.outputDir ? s : { ...s, outputDir: defaultOutputDir(env) };

/**
 * A path as the file system names it, so one folder reached two ways is one folder to the queue
 * (queued and paid for once): links resolved, and on macOS and Windows each name as stored, in
 * its case and Unicode form (`~/photos` typed for `~/Photos`; NFC typed for the NFD on disk).
 * fs/promises' realpath is the native one, which alone returns the stored case. A part that does
 * not exist yet (an output folder to be made) is kept as given, below its nearest existing folder.
 */
export async function canonicalPath(path: string): Promise<string> {
  const abs = resolve(path);
  try {
    return await realpath(abs);
  } catch {
    const parent = dirname(abs);
    return parent === abs ? abs : join(await canonicalPath(parent), basename(abs));
  }
}
