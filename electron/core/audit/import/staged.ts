import type { LockWait } from '../busy.ts';
import type { ImportOptions } from './types.ts';
import { keysFollowDates } from '../keys.ts';
import type { ReadTask } from '../read.ts';
import { stageRows } from '../stage-thread.ts';
import type { PackedRows, StagedBatch } from '../stage.ts';
import type { AuditStore, StagedRows } from '../store.ts';
import { BATCH_ROWS, BYTES_PER_EVENT } from './plan.ts';
import { IMPORT_LATER, lockWaiter, STOPPED, unlessStopped, type Tally } from './tally.ts';

/** The same as IMPORT_LATER when it gave up at the end of a staged or bulk load, with indexes still to build. */
const RESTORE_LATER = `${IMPORT_LATER}; the cache's indexes are built again by its next large import, or when it is next opened once this process has ended`;

export interface StagedLoad {
  /** Indexes set aside and built at the end; otherwise every index stays live. */
  bulk: boolean;
  /** Events cached before the load. */
  cached: number;
  /** The file's size. */
  bytes: number;
  batchSize: number;
  worker: boolean;
  signal?: AbortSignal;
  onHold?: ImportOptions['onHold'];
  onSort?: ImportOptions['onSort'];
  lockWait?: LockWait;
}

/**
 * Read in a worker thread and inserted here, batch by batch; what comes out of date order is staged
 * and moved in by date at the end: a staged or a bulk load. Each write waits for the lock with this
 * thread free; a Stop ends a wait, the rows it held back not
 * added, but never the indexes' building at the end.
 */
export async function loadStaged(store: AuditStore, task: ReadTask, tally: Tally, opts: StagedLoad): Promise<void> {
  const { bulk, cached, bytes, batchSize, signal } = opts;
  const report = tally.report;
  const write = lockWaiter(store, tally, opts.lockWait);
  // A staged load is recorded too, so a bulk load elsewhere leaves the unique index alone under it.
  // A bulk load sets the unique index aside as well when few cached events could clash: by the
  // file's dates batch by batch where keys follow dates (store.openStage), else by counts.
  const byDates = bulk && cached > 0 && keysFollowDates(store.db);
  const begun = await unlessStopped(
    write(
      () =>
        bulk
          ? store.writeTx(() => {
              store.deferIndexes({ keepUnique: byDates || cached > bytes / BYTES_PER_EVENT / 10 });
              store.beginBulk();
            })
          : store.registerLoad(),
      { signal },
    ),
    signal,
  );
  // Stopped before the load wrote anything: nothing to undo.
  if (begun === STOPPED) {
    report.interrupted = true;
    return;
  }
  let staged: StagedRows | null = null;
  try {
    staged = store.openStage({ uniqueByOverlap: byDates });
    const stage = staged;
    // A file in date order is handed over as read and inserted, each batch at one end of the dates
    // written; from the first batch that would land among them, the reading thread stages the rest
    // to go in by date at the end.
    let heldFrom: number | null = null;
    // The end of the staged ids: the rows held back are heldFrom <= id < stagedTo.
    let stagedTo = 0;
    // Rows handed over and not inserted yet: they go in as one transaction of about batchSize.
    let pending: PackedRows[] = [];
    let pendingRows = 0;
    // The last batch came, and the signal did not cut the reading short: the whole file was read.
    let readAll = false;
    // Stopped while waiting for the lock, the rows in hand stay pending: not added.
    const insertPending = async () => {
      if (!pendingRows) return;
      const rows = joinPacked(pending);
      const counts = await unlessStopped(
        write(() => stage.insert(rows, 'import'), { signal }),
        signal,
      );
      if (counts === STOPPED) return;
      pending = [];
      pendingRows = 0;
      tally.counted(counts);
    };
    const onStaged = async (b: StagedBatch) => {
      report.items += b.items;
      tally.bytesRead = Math.max(tally.bytesRead, b.bytesRead);
      for (const w of b.warnings) report.warnings.push(w);
      for (const r of b.rejects) tally.reject(r.line, r.item, r.reason);
      if (b.fatal) report.fatal ??= b.fatal;
      stagedTo = Math.max(stagedTo, b.hi);
      if (b.done && !b.stopped) readAll = true;
      if (b.rows) {
        pending.push(b.rows);
        pendingRows += b.rows.ts.length;
      }
      if (b.rows && pendingRows < batchSize && !b.done) return tally.progress();
      await insertPending();
      if (b.hi > b.lo && heldFrom === null) {
        heldFrom = b.lo;
        // The batch's first item: its rows are the first held back.
        const from = report.items - b.items + 1;
        tally.held = { from, rows: 0, adding: false };
        opts.onHold?.({ path: report.path, items: from });
      }
      if (tally.held && heldFrom !== null) tally.held.rows = stagedTo - heldFrom;
      tally.progress();
    };
    // The reading side reports every BATCH_ROWS rows, so inserting or holding back follows the file closely.
    const reading = { ...task, stagePath: stage.path, batchSize: Math.min(batchSize, BATCH_ROWS), direct: true };
    await stageRows(reading, onStaged, opts);
    await insertPending();
    // Interrupted, rows held back or found waiting for the lock stay out (moving them could take as
    // long as the load so far); the report counts them so its items add up.
    if (signal?.aborted && (heldFrom !== null || pendingRows))
      report.notAdded = pendingRows + (heldFrom !== null ? stagedTo - heldFrom : 0);
    else if (heldFrom !== null) {
      // The last step: a Ctrl-C from here on is seen only once the file is all in.
      opts.onSort?.({ path: report.path, rows: stagedTo - heldFrom });
      if (tally.held) tally.held.adding = true;
      tally.progress();
      const next = stage.merge(heldFrom, 'import', batchSize);
      for (let c = await write(next); c; c = await write(next)) tally.counted(c);
    }
    if (!readAll || report.notAdded) report.interrupted = true;
  } finally {
    // Each step runs even if the one before it threw: the stage closed, the indexes back, the load's record gone.
    try {
      staged?.close();
    } finally {
      try {
        // Rows let in whose event_id was cached or came earlier in the file. A Stop does not end
        // these waits: the cache would be left without its indexes.
        const removed = await restoreIndexes(store, (step) => write(step, { afterwards: RESTORE_LATER }));
        report.accepted -= removed;
        report.duplicates += removed;
      } finally {
        if (bulk) store.endBulk();
      }
    }
  }
}

/** Consecutive batches of packed rows as one. */
function joinPacked(list: readonly PackedRows[]): PackedRows {
  if (list.length === 1) return list[0];
  const ts = new Float64Array(list.reduce((n, p) => n + p.ts.length, 0));
  let at = 0;
  for (const p of list) {
    ts.set(p.ts, at);
    at += p.ts.length;
  }
  return { ts, values: list.flatMap((p) => p.values), names: list.flatMap((p) => p.names) };
}

/**
 * store.restoreIndexes, each of its writes made through `write` (waiting for the cache's lock with
 * this thread free). Returns how many of this process's bulk-loaded rows were removed as duplicates.
 */
export async function restoreIndexes(
  store: AuditStore,
  write: (step: () => number) => Promise<number>,
): Promise<number> {
  let removed = 0;
  for (let step = store.nextRestore(); step; step = store.nextRestore()) removed += await write(step);
  return removed;
}
