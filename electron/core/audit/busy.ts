import { setTimeout as sleep } from 'node:timers/promises';
import type { AuditStore } from './store.ts';

/**
 * How a process waits for the cache's write lock, shared with the CLI. better-sqlite3 waits inside the
 * statement, freezing every window of the app meanwhile, so a write tries for `attemptMs` and the
 * wait goes on asynchronously (whenWritable).
 */
export interface LockWait {
  /** How long one try may hold this thread waiting for the lock (SQLite's busy_timeout). */
  attemptMs: number;
  /** Given up after the lock stayed taken this long with no import running in another process. */
  giveUpMs: number;
  /** The same while an import runs in another process (its last copies and index builds take seconds). */
  giveUpImportMs: number;
}

/** The app: a window never freezes longer than a try; a bulk load elsewhere is waited for, Stop ends the wait. */
export const APP_LOCK_WAIT: LockWait = { attemptMs: 100, giveUpMs: 30_000, giveUpImportMs: 30 * 60_000 };
/** The CLI is no UI: each try waits as long as a connection always did. */
export const CLI_LOCK_WAIT: LockWait = { attemptMs: 5000, giveUpMs: 120_000, giveUpImportMs: 60 * 60_000 };

export const WAITING_FOR_IMPORT =
  'waiting for an import in another process (the mediadesk CLI or the app) to finish writing to the audit cache…';
export const WAITING_FOR_WRITER =
  'waiting for another process (the mediadesk CLI or the app) writing to the audit cache…';

/** SQLite's answer to a write while another connection holds the lock (SQLITE_BUSY and its extended codes). */
export function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** The wait for the lock given up: `message` says who held it, for how long, and that nothing was lost. */
export class CacheBusyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CacheBusyError';
  }
}

/** How long the lock was waited for, as a report says it. */
const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;

/**
 * Runs `write` (a writeTx, or one statement, which never ran if it failed busy) once the lock is free:
 * each try holds the thread `attemptMs`, then it is free (backing off to 1 s) until `signal` or the
 * CacheBusyError that gives up, its message ending with `afterwards` (what becomes of the task).
 */
export async function whenWritable<T>(
  store: AuditStore,
  write: () => T,
  opts: { wait: LockWait; afterwards: string; signal?: AbortSignal; onWait?: (message: string) => void },
): Promise<T> {
  const started = Date.now();
  let lastImport: number | null = null;
  for (let attempt = 0; ; attempt++) {
    try {
      return store.tryWrite(write, opts.wait.attemptMs);
    } catch (err) {
      if (!isBusy(err)) throw err;
    }
    const now = Date.now();
    const importing = store.elsewhere().importing;
    if (importing) lastImport = now;
    // Held by anything else, the lock counts from the last sight of an import (a load's end can hand it to a sync there).
    const waited = now - started;
    if (importing ? waited >= opts.wait.giveUpImportMs : now - (lastImport ?? started) >= opts.wait.giveUpMs) {
      const who =
        lastImport !== null
          ? 'an import in another process (the mediadesk CLI or the app)'
          : 'another process (the mediadesk CLI or the app)';
      throw new CacheBusyError(
        `the audit cache stayed locked by ${who} for ${seconds(waited)}; nothing already stored was lost: ${opts.afterwards}`,
      );
    }
    opts.onWait?.(importing ? WAITING_FOR_IMPORT : WAITING_FOR_WRITER);
    await sleep(Math.min(1000, 25 * 2 ** attempt), undefined, { signal: opts.signal });
  }
}
