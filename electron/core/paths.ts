import { readdir, realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join, parse, resolve, sep } from 'node:path';

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
 * (queued and paid for once): links resolved, and each name as stored, in its case (macOS,
 * Windows: `~/photos` typed for `~/Photos`) and its Unicode form (NFC typed for the NFD on disk,
 * which a case-sensitive Linux disk does not match by itself). fs/promises' realpath is the
 * native one, which alone returns the stored case. A part that does not exist yet (an output
 * folder to be made) is kept as given, below its nearest existing folder.
 */
export async function canonicalPath(path: string): Promise<string> {
  const abs = resolve(path);
  try {
    return await realpath(abs);
  } catch {
    const stored = await storedForm(abs);
    if (stored) return realpath(stored).catch(() => stored);
    const parent = dirname(abs);
    return parent === abs ? abs : join(await canonicalPath(parent), basename(abs));
  }
}

const nfc = (s: string) => s.normalize('NFC');

/**
 * The existing path that `abs` names up to Unicode normalization, or null. Names written on a Mac
 * reach a Linux disk decomposed ("Cafe" + U+0301) while a name typed or pasted is composed
 * ("Café"): they look the same, differ in bytes, and the folder the user sees "does not exist"
 * (or, as an output folder, is made a second time beside itself). A part missing as given is
 * matched against its folder's entries by composed form; one two entries match is not guessed.
 */
async function storedForm(abs: string): Promise<string | null> {
  const { root } = parse(abs);
  let at = root;
  for (const part of abs.slice(root.length).split(sep).filter(Boolean)) {
    const names = await readdir(at).catch(() => null);
    if (!names) return null;
    const matches = names.includes(part) ? [part] : names.filter((n) => nfc(n) === nfc(part));
    if (matches.length !== 1) return null;
    at = join(at, matches[0]);
  }
  return at;
}
