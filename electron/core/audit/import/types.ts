import type { ImportReport, ImportProgress } from '../../../../shared/contract/audit.ts';
import type { LockWait } from '../busy.ts';

// The import's types, apart from import.ts so its parts (plan, staged, tally) import no module that imports them.

/**
 * `rows`: parsed here and inserted row by row (a small file). `staged`: read in a worker thread,
 * staged and copied in by SQL through every index (up to a sixth of the cache). `bulk`: staged the
 * same way, the indexes set aside and built once at the end (a file large next to the cache).
 */
export type LoadPath = 'rows' | 'staged' | 'bulk';

export interface ImportOptions {
  /**
   * Ctrl-C: the load stops after the batch in hand, which is committed, and later files are not
   * read. A load waiting for another process to let go of the cache stops at once (report.notAdded).
   */
  signal?: AbortSignal;
  /** The format, when the file's name and first bytes cannot tell it (`audit import --format`). */
  format?: ImportReport['format'];
  /** Rows per transaction: each batch lands whole or not at all (5,000; 50,000 in a staged or bulk load). */
  batchSize?: number;
  /** Rejections listed in the report; all are counted. */
  maxRejectsListed?: number;
  /** After each batch; in a bulk load `accepted` counts the duplicates too until the load ends (store.restoreIndexes). */
  onProgress?: (p: ImportProgress) => void;
  /**
   * Once, when a staged load meets the first batch out of date order: the rows read from there are
   * held back and moved in by date at the end (onSort). `items`: the first held-back row's item.
   */
  onHold?: (p: { path: string; items: number }) => void;
  /** Before a staged load moves the rows it held back in by date: its last step, which `signal` does not stop. */
  onSort?: (p: { path: string; rows: number }) => void;
  /** How the file goes in (see LoadPath), whatever its size; tests use it. */
  load?: LoadPath;
  /** A staged or bulk load reads the file in a worker thread (stage-thread.ts); off, in this thread. On by default. */
  worker?: boolean;
  /** How each write of the load waits while another process holds the cache (busy.ts); the app's way by default. */
  lockWait?: LockWait;
}
