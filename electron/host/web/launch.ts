import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { writeWhole } from '../../core/write-whole.ts';

/** The port the web host tries first on a data folder it has not run on; `--port` overrides it. */
export const DEFAULT_WEB_PORT = 47810;

const TOKEN_FILE = 'web-token';
const RECORD_FILE = 'web-host.json';
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{32,128}$/;

/** What the data folder keeps of its web host: the last port, and while one runs, its process and launch. */
export interface WebHostRecord {
  port: number;
  pid?: number;
  /** A random id per launch, which /healthz answers, so a reused pid or port is not taken for our host. */
  launch?: string;
}

/**
 * The access token of the data folder's web host, kept in a file only its owner can read, so a
 * tab's cookie stays valid across restarts. Made on first launch, and again when `renew` (`--new-token`)
 * or when the file does not hold one. `made`: a new one was made (old tabs must open the new URL).
 */
export function accessToken(home: string, renew = false): { token: string; made: boolean } {
  const path = join(home, TOKEN_FILE);
  if (!renew) {
    try {
      const kept = readFileSync(path, 'utf8').trim();
      if (TOKEN_SHAPE.test(kept)) {
        if (process.platform !== 'win32' && (statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
        return { token: kept, made: false };
      }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
  const token = randomBytes(24).toString('base64url');
  mkdirSync(home, { recursive: true });
  writeWhole(path, `${token}\n`, { mode: 0o600 });
  return { token, made: true };
}

export function readRecord(home: string): WebHostRecord | null {
  try {
    const r = JSON.parse(readFileSync(join(home, RECORD_FILE), 'utf8')) as Partial<WebHostRecord>;
    if (!Number.isInteger(r.port) || r.port! < 1 || r.port! > 65535) return null;
    return {
      port: r.port!,
      ...(Number.isInteger(r.pid) ? { pid: r.pid } : {}),
      ...(typeof r.launch === 'string' ? { launch: r.launch } : {}),
    };
  } catch {
    return null;
  }
}

export function writeRecord(home: string, record: WebHostRecord): void {
  writeWhole(join(home, RECORD_FILE), `${JSON.stringify(record)}\n`);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The data folder's web host when one runs (its process is alive and its port answers with its launch id), else null. */
export async function runningWebHost(home: string): Promise<WebHostRecord | null> {
  const record = readRecord(home);
  if (!record?.pid || !record.launch || record.pid === process.pid || !processAlive(record.pid)) return null;
  try {
    const res = await fetch(`http://127.0.0.1:${record.port}/healthz`, { signal: AbortSignal.timeout(2000) });
    const body = (await res.json()) as { launch?: unknown };
    return body.launch === record.launch ? record : null;
  } catch {
    return null;
  }
}

/**
 * The ports to try, in order: `--port` alone when given; else the default (the README's address)
 * whenever it is free, then the last one used (where tabs of a launch that was moved off it look), then any.
 */
export function portsToTry(explicit: number | undefined, remembered: number | undefined): number[] {
  if (explicit !== undefined) return [explicit];
  return [...new Set([DEFAULT_WEB_PORT, remembered ?? DEFAULT_WEB_PORT]), 0];
}

/** The environment variable naming folders the web host may read, separated as PATH is (`:`, `;` on Windows). */
export const WEB_FOLDERS_ENV = 'MEDIADESK_WEB_FOLDERS';

/**
 * The folders the person gave the web host when starting it: each `--folder`, then MEDIADESK_WEB_FOLDERS,
 * resolved from the working directory. Throws, naming it, when one is not an existing folder.
 */
export function givenFolders(flags: readonly string[], env: NodeJS.ProcessEnv): string[] {
  const named = [
    ...flags.map((f) => ({ f, from: '--folder' })),
    ...(env[WEB_FOLDERS_ENV] ?? '')
      .split(delimiter)
      .filter(Boolean)
      .map((f) => ({ f, from: WEB_FOLDERS_ENV })),
  ];
  return [
    ...new Set(
      named.map(({ f, from }) => {
        const abs = resolve(f);
        const st = statSync(abs, { throwIfNoEntry: false });
        if (!st?.isDirectory())
          throw new Error(
            `${from} ${f}: ${st ? 'is a file, not a folder' : 'no such folder'} (${abs}); name a folder that exists`,
          );
        return abs;
      }),
    ),
  ];
}
