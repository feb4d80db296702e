import { renameSync, rmSync } from 'node:fs';
import { join, parse } from 'node:path';
import electronLog from 'electron-log/node';
import { redactSecrets } from '../../../shared/redact.ts';

/**
 * The log a user can send: logs/<host>.log in the data folder, written synchronously so the lines
 * before a crash are kept. Every line passes redactSecrets last, with the keys this process has
 * met, so a key a server echoes in an error never reaches the file.
 */

/** Past this size the file is renamed to NAME.1.log (older ones move up) and a new one begins. */
export const LOG_MAX_BYTES = 2 * 1024 * 1024;
/** How many rotated files are kept besides the current one. */
export const LOG_KEPT_FILES = 3;

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

export interface AppLog {
  /** The file being written now. */
  readonly file: string;
  /** The folder of every host's logs (Help > Show Logs opens it). */
  readonly dir: string;
  error(...data: unknown[]): void;
  warn(...data: unknown[]): void;
  info(...data: unknown[]): void;
  debug(...data: unknown[]): void;
  /** A secret no line may contain from now on (an API key, a launch token). */
  addSecret(secret: string | null | undefined): void;
}

export const logsDir = (home: string) => join(home, 'logs');

/**
 * The name electron-log would otherwise read from the package.json above the working directory:
 * without one (the CLI run from a photo folder) it could not name the app and wrote nothing.
 */
export const LOG_APP_NAME = 'MediaDesk';

export interface OpenLogOptions {
  home: string;
  /** The file's name without .log: the host. */
  name: string;
  maxBytes?: number;
  keep?: number;
  /** Echo to the console as well (the desktop app in development); the CLI's streams stay its own. */
  console?: boolean;
}

let opened = 0;

/** Moves NAME.log to NAME.1.log, NAME.1.log to NAME.2.log, …, dropping the oldest past `keep`. */
function rotate(path: string, keep: number): void {
  const { dir, name, ext } = parse(path);
  const numbered = (n: number) => join(dir, `${name}.${n}${ext}`);
  rmSync(numbered(keep), { force: true });
  for (let n = keep - 1; n >= 1; n--) {
    try {
      renameSync(numbered(n), numbered(n + 1));
    } catch {
      // Not there yet: fewer rotations than `keep` so far.
    }
  }
  renameSync(path, numbered(1));
}

export function openLog(o: OpenLogOptions): AppLog {
  const dir = logsDir(o.home);
  const file = join(dir, `${o.name}.log`);
  const keep = o.keep ?? LOG_KEPT_FILES;
  const secrets = new Set<string>();
  const logger = electronLog.create({ logId: `mediadesk-${o.name}-${++opened}` });

  const fileTransport = logger.transports.file;
  fileTransport.setAppName(LOG_APP_NAME);
  fileTransport.resolvePathFn = () => file;
  fileTransport.maxSize = o.maxBytes ?? LOG_MAX_BYTES;
  fileTransport.level = 'debug';
  fileTransport.archiveLogFn = (old) => {
    try {
      rotate(old.toString(), keep);
    } catch {
      // Cannot rename (another process has it open on Windows): keep the newest quarter instead.
      (old as typeof old & { crop(bytes: number): void }).crop(Math.round((o.maxBytes ?? LOG_MAX_BYTES) / 4));
    }
  };
  const redact = ({ data }: { data: unknown }) => redactSecrets(String(data), [...secrets]);
  fileTransport.transforms = [...fileTransport.transforms, redact];

  const consoleTransport = logger.transports.console;
  if (o.console) {
    consoleTransport.level = 'info';
    consoleTransport.transforms = [...consoleTransport.transforms, redact];
  } else {
    consoleTransport.level = false;
    // electron-log reports its own trouble (a file it cannot write) there too: not on a CLI's stderr.
    consoleTransport.writeFn = () => {};
  }

  // The library's own trouble (a log it cannot write) is said once on stderr, never swallowed.
  let toldTrouble = false;
  (logger as typeof logger & { processInternalErrorFn(err: unknown): void }).processInternalErrorFn = (err) => {
    if (toldTrouble) return;
    toldTrouble = true;
    process.stderr.write(`mediadesk: cannot write the log ${file}: ${(err as Error)?.message ?? String(err)}\n`);
  };

  const at =
    (level: LogLevel) =>
    (...data: unknown[]) => {
      logger[level](...data);
    };
  return {
    file,
    dir,
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
    addSecret(secret) {
      // Shorter strings are too common in ordinary text to blank out (redactSecrets ignores them too).
      if (secret && secret.length >= 4) secrets.add(secret);
    },
  };
}

/** A log that writes nothing: for code handed no log. */
export const silentLog: AppLog = {
  file: '',
  dir: '',
  error() {},
  warn() {},
  info() {},
  debug() {},
  addSecret() {},
};
