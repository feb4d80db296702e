import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { arch, cpus, release, totalmem, version as osVersion } from 'node:os';
import { basename, join } from 'node:path';
import { zipSync, type Zippable } from 'fflate';
import { redactSecrets } from '../../shared/redact.ts';
import { ensureFolder } from './output-folder.ts';
import { logsDir } from './log/index.ts';
import { freePath } from './saved-files.ts';
import { APP_VERSION } from './app-version.ts';
import type { HandlerMap } from '../../shared/contract/define.ts';
import type { supportCommands } from '../../shared/contract/support.ts';

/** Where Electron's crash reporter writes its minidumps (app.setPath('crashDumps')): in the data folder, sent nowhere. */
export const crashesDir = (home: string) => join(home, 'crashes');

/** A setting whose name says it holds a secret is left out whole, whatever its value. */
const SECRET_NAME = /key|token|secret|passw|credential|auth/i;
/** A line this long is a payload (a request body, an image echoed back), not a message: it is cut. */
const MAX_LINE = 2000;
/** Base64 or a data URL: a file's bytes in text, never a message a person wrote. */
const DATA_RUN = /(?:data:[\w.+-]+\/[\w.+-]+;base64,)?[A-Za-z0-9+/]{64,}={0,2}/g;

export interface ProblemReportDeps {
  home: string;
  host: 'electron' | 'web' | 'cli';
  /** The settings as the app reads them. */
  settings: () => object;
  /** Every key this process knows (the stored one, MEDIADESK_API_KEY): none may be in the zip. */
  secrets: () => Promise<(string | null | undefined)[]>;
  /** Where the zip goes (SAVED_FILES_RULE). */
  saveDir: () => string;
  now?: () => Date;
}

export interface ProblemReport {
  path: string;
  /** The zip's entries, in order. */
  entries: string[];
  /** The crash dump's name in the data folder, or null when there is none. */
  crashDump: string | null;
}

/** A log line fit to send: no key, nothing key-shaped, no file's bytes. */
export function cleanLine(line: string, secrets: readonly string[]): string {
  const clean = redactSecrets(line.replace(DATA_RUN, '[data removed]'), secrets);
  return clean.length > MAX_LINE ? `${clean.slice(0, MAX_LINE)} [cut: ${clean.length} characters]` : clean;
}

/** The settings without anything whose name says secret, their text redacted as a log line. */
export function cleanSettings(settings: object, secrets: readonly string[]): string {
  const kept = Object.fromEntries(Object.entries(settings).filter(([name]) => !SECRET_NAME.test(name)));
  return redactSecrets(JSON.stringify(kept, null, 2), secrets);
}

/**
 * `bytes` with each secret overwritten in place (as one-byte and two-byte text, as a process holds
 * strings), so a minidump keeps its layout for the debugger and loses the key.
 */
export function scrubBytes(bytes: Buffer, secrets: readonly string[]): Buffer {
  const out = Buffer.from(bytes);
  for (const s of secrets)
    for (const enc of ['latin1', 'utf16le'] as const) {
      const needle = Buffer.from(s, enc);
      for (let at = out.indexOf(needle); at !== -1; at = out.indexOf(needle, at + needle.length))
        out.fill(0x58, at, at + needle.length);
    }
  return out;
}

async function filesIn(dir: string, deep: boolean): Promise<{ path: string; mtimeMs: number }[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: deep }).catch(() => []);
  const files = entries.filter((e) => e.isFile());
  return Promise.all(
    files.map(async (e) => {
      const path = join(e.parentPath, e.name);
      return { path, mtimeMs: (await stat(path)).mtimeMs };
    }),
  );
}

/** The newest minidump Crashpad wrote (completed/, pending/, new/ alike), or null. */
async function newestCrashDump(home: string): Promise<string | null> {
  const dumps = (await filesIn(crashesDir(home), true)).filter((f) => f.path.endsWith('.dmp'));
  return dumps.sort((a, b) => b.mtimeMs - a.mtimeMs)[0]?.path ?? null;
}

function versions(host: ProblemReportDeps['host']) {
  const v = process.versions as NodeJS.ProcessVersions & { electron?: string; chrome?: string };
  return {
    app: APP_VERSION,
    host,
    electron: v.electron ?? null,
    chrome: v.chrome ?? null,
    node: v.node,
    os: { platform: process.platform, release: release(), version: osVersion(), arch: arch() },
    cpus: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
  };
}

const README = (crash: string | null) =>
  [
    'MediaDesk problem report',
    '',
    'Made on your computer by Help > Report a problem (or `mediadesk report-problem`). Nothing was sent',
    'anywhere: attach this zip to an issue yourself if you want to. Look inside first; it holds:',
    '',
    '- versions.json: MediaDesk, Electron, Node and the system it runs on',
    '- settings.json: your settings, without anything named like a key, token or password',
    '- logs/: the logs of the app, the web host and the command line. Each line had the API key and',
    '  anything shaped like a key replaced by [redacted], and data runs (a file in text) removed.',
    '  They name files and folders you worked with, never what is in them.',
    crash
      ? `- crash/${basename(crash)}: the last crash dump (a minidump: the program's threads and some of its\n  memory when it crashed, with the key overwritten), for the developers' debugger. Memory may hold bits\n  of what it was working on: remove crash/ from the zip if that worries you.`
      : '- no crash dump: MediaDesk has not crashed (or its dumps were removed)',
    '',
    'Not in it: the API key, your images, videos or other files, the queue and audit databases.',
    '',
  ].join('\n');

/** Builds the zip of a problem report in `saveDir`: nothing leaves the computer. */
export async function buildProblemReport(deps: ProblemReportDeps): Promise<ProblemReport> {
  const secrets = (await deps.secrets()).filter((s): s is string => !!s && s.length >= 4);
  const files: Zippable = {};
  const text = (s: string) => new TextEncoder().encode(s);
  const crash = await newestCrashDump(deps.home);
  files['README.txt'] = text(README(crash));
  files['versions.json'] = text(JSON.stringify(versions(deps.host), null, 2));
  files['settings.json'] = text(cleanSettings(deps.settings(), secrets));
  const logs = (await filesIn(logsDir(deps.home), false)).filter((f) => f.path.endsWith('.log'));
  for (const { path } of logs.sort((a, b) => a.path.localeCompare(b.path))) {
    const lines = (await readFile(path, 'utf8')).split('\n');
    files[`logs/${basename(path)}`] = text(lines.map((l) => cleanLine(l, secrets)).join('\n'));
  }
  if (crash) files[`crash/${basename(crash)}`] = scrubBytes(await readFile(crash), secrets);

  const dir = deps.saveDir();
  await ensureFolder(dir);
  const stamp = (deps.now?.() ?? new Date()).toISOString().slice(0, 19).replace('T', ' ').replace(/:/g, '-');
  const path = freePath(dir, `MediaDesk problem report ${stamp}.zip`);
  await writeFile(path, zipSync(files, { level: 6 }));
  return { path, entries: Object.keys(files), crashDump: crash };
}

/** The support area's one command: the zip a person attaches to an issue, built on request. */
export function supportHandlers(deps: ProblemReportDeps): HandlerMap<typeof supportCommands> {
  return {
    'support.report': async () => {
      const r = await buildProblemReport(deps);
      return { path: r.path, entries: r.entries, crashDump: r.crashDump !== null };
    },
  };
}
