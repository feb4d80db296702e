import { CacheBusyError, type LockWait } from '../busy.ts';
import type { EventRow } from '../event.ts';
import { readParsed, type ReadTask, type TextSource } from '../read.ts';
import type { AuditStore } from '../store.ts';
import { lockWaiter, STOPPED, unlessStopped, type Tally } from './tally.ts';

/**
 * Parsed in this thread and inserted batch by batch through every index. A batch waits for the
 * cache's lock between chunks (whenWritable), so the thread stays free meanwhile.
 */
export async function loadRows(
  store: AuditStore,
  task: ReadTask,
  tally: Tally,
  batchSize: number,
  opts: { source?: TextSource; signal?: AbortSignal; lockWait?: LockWait },
): Promise<void> {
  const report = tally.report;
  let batch: EventRow[] = [];
  const full: EventRow[][] = [];
  const write = lockWaiter(store, tally, opts.lockWait);
  // A Stop that ended a wait for the lock: the rows in hand and after are not added (the report says how many).
  let stoppedWaiting = false;
  const insert = async (rows: EventRow[]) => {
    const counts = stoppedWaiting
      ? STOPPED
      : await unlessStopped(
          write(() => store.insertBatch(rows, 'import'), { signal: opts.signal }),
          opts.signal,
        );
    if (counts !== STOPPED) return tally.counted(counts);
    stoppedWaiting = report.interrupted = true;
    report.notAdded = (report.notAdded ?? 0) + rows.length;
  };
  // The wait given up: the reading stops there (readParsed's catch), and nothing more is written.
  let gaveUp: CacheBusyError | null = null;
  const drain = async () => {
    try {
      for (let rows = full.shift(); rows && !gaveUp; rows = full.shift()) await insert(rows);
    } catch (err) {
      if (err instanceof CacheBusyError) gaveUp = err;
      throw err;
    }
  };
  try {
    const { stopped } = await readParsed(
      task,
      {
        row: (r) => {
          report.items++;
          batch.push(r);
          if (batch.length >= batchSize) {
            full.push(batch);
            batch = [];
          }
        },
        reject: (r) => {
          report.items++;
          tally.reject(r.line, r.item, r.reason);
        },
        fatal: (reason) => (report.fatal ??= reason),
        warning: (m) => report.warnings.push(m),
      },
      { ...opts, onRead: (b) => (tally.bytesRead = b), drain },
    );
    if (stopped) report.interrupted = true;
  } finally {
    if (batch.length) full.push(batch);
    batch = [];
    if (!gaveUp) await drain();
  }
  if (gaveUp) report.fatal = (gaveUp as CacheBusyError).message;
}
