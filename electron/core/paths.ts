import { readdir, realpath, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join, parse, resolve, sep } from 'node:path';
import { resultsFolder } from '../../shared/results-folder.ts';

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
  hotFolders: join(home, 'hot-folders.db'),
  cache: join(home, 'cache'),
  thumbnails: join(home, 'cache', 'thumbnails'),
  /** The built-in Sandbox's tasks, so its recent creations outlive one CLI command or launch. */
  sandboxTasks: join(home, 'sandbox-tasks.ndjson'),
});

/** Whether absolute `abs` is `root` or lies inside it (a sibling sharing its prefix does not). */
export const isWithin = (abs: string, root: string): boolean =>
  abs === root || abs.startsWith(root.endsWith(sep) ? root : root + sep);

/** Where results go when Settings names no output folder: a folder of the user's own, not the app's data folder. */
export function defaultOutputDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.MEDIADESK_OUTPUT_DIR || join(homedir(), 'MediaDesk');
}

/** Settings as every engine must read them: an empty output folder is the documented default, so a first batch needs no setup. */
export const withDefaultOutputDir = <S extends { outputDir: string }>(s: S, env: NodeJS.ProcessEnv = process.env): S =>
  s.outputDir ? s : { ...s, outputDir: defaultOutputDir(env) };

/**
 * RESULTS_RULE's folder of a batch over `inputs` (canonical paths): one folder chosen gives its name,
 * files alone or several inputs the tool's folder. A drop's own folder in `inbox` (the web host's
 * copies of loose files) is no name the user gave.
 */
export async function batchResultsFolder(
  outputRoot: string,
  toolTitle: string,
  inputs: readonly string[],
  inbox?: string,
): Promise<string> {
  const [only] = inputs;
  const isFolder = inputs.length === 1 && (await stat(only).catch(() => null))?.isDirectory();
  const inboxDir = inbox && (await canonicalPath(inbox));
  const dropped = isFolder && dirname(only) !== inboxDir ? basename(only) : null;
  return resultsFolder(outputRoot, toolTitle, dropped);
}

/**
 * A path as the file system names it (links resolved, each name in its stored case and Unicode
 * form), so one folder reached two ways is queued and paid for once. A part that does not exist
 * yet is kept as given. fs/promises' realpath is the native one, the only one returning stored case.
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
 * The existing path that `abs` names up to Unicode normalization, or null: a Mac writes names
 * decomposed, a typed name is composed, and the two differ in bytes. A missing part is matched by
 * composed form against its folder's entries; an ambiguous match is not guessed.
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
