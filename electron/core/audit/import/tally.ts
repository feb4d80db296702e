import type { ImportProgress, ImportReport } from '../../../../shared/contract/audit.ts';
import { APP_LOCK_WAIT, whenWritable, type LockWait } from '../busy.ts';
import type { ImportOptions } from './types.ts';
import type { AuditStore, InsertCounts } from '../store.ts';

/** What an import that gave up waiting for the cache says becomes of it. */
export const IMPORT_LATER = 'the batches imported before stay cached, and importing the file again adds the rest';

/** The report as the load fills it: every rejection counted, the first `maxListed` listed. */
export class Tally {
  readonly report: ImportReport;
  private readonly maxListed: number;
  private readonly onProgress: ImportOptions['onProgress'];
  /** The file's size; null for standard input. */
  private readonly bytes: number | null;
  /** Of `bytes`, read so far. */
  bytesRead = 0;
  /** A staged load's rows held back to go in by date at the end (ImportProgress.held). */
  held: NonNullable<ImportProgress['held']> | null = null;

  constructor(report: ImportReport, maxListed: number, onProgress: ImportOptions['onProgress'], bytes: number | null) {
    this.report = report;
    this.maxListed = maxListed;
    this.onProgress = onProgress;
    this.bytes = bytes;
  }

  progress(waiting?: string): void {
    const r = this.report;
    const bytes = this.bytes === null ? null : { bytesRead: this.bytesRead, bytes: this.bytes };
    this.onProgress?.({
      path: r.path,
      file: 1,
      files: 1,
      items: r.items,
      accepted: r.accepted,
      rejected: r.rejected,
      bytes,
      ...(this.held && { held: { ...this.held } }),
      ...(waiting && { waiting }),
    });
  }

  counted(c: InsertCounts): void {
    this.report.accepted += c.inserted;
    this.report.duplicates += c.duplicates;
    this.progress();
  }

  reject(line: number, item: number, reason: string): void {
    this.report.rejected++;
    if (this.report.rejects.length < this.maxListed) this.report.rejects.push({ line, item, reason });
  }
}

/** Runs one write of a load once the cache's lock is free (lockWaiter); `signal` ends the wait with its AbortError. */
export type LoadWrite = <T>(write: () => T, opts?: { signal?: AbortSignal; afterwards?: string }) => Promise<T>;

/** A load's writes wait for the lock with this thread free (whenWritable); progress says what is waited for, once per wait. */
export function lockWaiter(store: AuditStore, tally: Tally, wait: LockWait = APP_LOCK_WAIT): LoadWrite {
  return async (write, opts = {}) => {
    let lastMessage: string | null = null;
    const done = await whenWritable(store, write, {
      wait,
      afterwards: opts.afterwards ?? IMPORT_LATER,
      signal: opts.signal,
      onWait: (m) => {
        if (m !== lastMessage) tally.progress((lastMessage = m));
      },
    });
    if (lastMessage !== null) tally.progress();
    return done;
  };
}

/** A write the signal stopped while it waited for the lock: it was not made. */
export const STOPPED = Symbol('stopped');

export async function unlessStopped<T>(
  write: Promise<T>,
  signal: AbortSignal | undefined,
): Promise<T | typeof STOPPED> {
  try {
    return await write;
  } catch (err) {
    if (signal?.aborted && (err as { name?: unknown } | null)?.name === 'AbortError') return STOPPED;
    throw err;
  }
}
