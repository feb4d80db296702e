import type { LockWait } from '../busy.ts';
import type { ImportOptions } from './types.ts';
import { keysFollowDates } from '../keys.ts';
import type { ReadTask } from '../read.ts';
import { stageRows } from '../stage-thread.ts';
import type { StagedBatch } from '../stage.ts';
import type { AuditStore, StagedRows } from '../store.ts';
import { BATCH_ROWS, BYTES_PER_EVENT } from './plan.ts';
import { IMPORT_LATER, lockWaiter, STOPPED, unlessStopped, type Tally } from './tally.ts';

/** The same as IMPORT_LATER when it gave up at the end of a staged or bulk load, with indexes still to build. */
const RESTORE_LATER = `${IMPORT_LATER}; the cache's indexes are built again by its next large import, or when it is next opened once this process has ended`;

/** Rows inside the dates already written: a few (a file nearly in order) are cheap, many are random writes. */
const OUT_OF_ORDER_SHARE = 0.01;

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
 * Read (in a worker thread) into a stage, then copied in by SQL: a staged or a bulk load. Each
 * write waits for the lock with this thread free; a Stop ends a wait, the rows it held back not
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
    // A file in date order is copied in as staged, each batch at one end of the dates written; from
    // the first batch that would land among them, the rest waits in the stage to go in by date.
    let span: { lo: number; hi: number } | null = null;
    let heldFrom: number | null = null;
    // The end of the staged ids: the rows held back are heldFrom <= id < stagedTo.
    let stagedTo = 0;
    // Staged batches in order not copied yet: their ids run on, so they go in as one range.
    let pending: { lo: number; hi: number } | null = null;
    // The last batch came, and the signal did not cut the reading short: the whole file was read.
    let readAll = false;
    // Stopped while waiting for the lock, the rows in hand stay pending: not added.
    const copyPending = async () => {
      if (!pending) return;
      const { lo, hi } = pending;
      const counts = await unlessStopped(
        write(() => stage.copy(lo, hi, 'import'), { signal }),
        signal,
      );
      if (counts === STOPPED) return;
      pending = null;
      tally.counted(counts);
    };
    const notCopied = () => (pending ? pending.hi - pending.lo : 0);
    const onStaged = async (b: StagedBatch) => {
      report.items += b.items;
      tally.bytesRead = Math.max(tally.bytesRead, b.bytesRead);
      for (const w of b.warnings) report.warnings.push(w);
      for (const r of b.rejects) tally.reject(r.line, r.item, r.reason);
      if (b.fatal) report.fatal ??= b.fatal;
      stagedTo = Math.max(stagedTo, b.hi);
      if (b.done && !b.stopped) readAll = true;
      if (b.hi > b.lo && heldFrom === null && inOrder(b.ts, span)) {
        span = widen(b.ts, span);
        pending = { lo: pending?.lo ?? b.lo, hi: b.hi };
        if (pending.hi - pending.lo >= batchSize || b.done) await copyPending();
        else tally.progress();
        return;
      }
      await copyPending();
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
    // The reading side reports every BATCH_ROWS rows, so copying or holding back follows the file closely.
    await stageRows({ ...task, stagePath: stage.path, batchSize: Math.min(batchSize, BATCH_ROWS) }, onStaged, opts);
    await copyPending();
    // Interrupted, rows held back or found waiting for the lock stay out (moving them could take as
    // long as the load so far); the report counts them so its items add up.
    if (signal?.aborted && (heldFrom !== null || notCopied()))
      report.notAdded = notCopied() + (heldFrom !== null ? stagedTo - heldFrom : 0);
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

function inOrder(ts: Float64Array, span: { lo: number; hi: number } | null): boolean {
  if (!span) return true;
  let inside = 0;
  for (const t of ts) if (t > span.lo && t < span.hi) inside++;
  return inside <= ts.length * OUT_OF_ORDER_SHARE;
}

/** The batch's dates, a few stray ones at either end left out so they do not block the rest of the file. */
function widen(ts: Float64Array, span: { lo: number; hi: number } | null): { lo: number; hi: number } {
  const skip = Math.floor(ts.length * OUT_OF_ORDER_SHARE);
  return {
    lo: Math.min(span?.lo ?? Infinity, ts[skip]),
    hi: Math.max(span?.hi ?? -Infinity, ts[ts.length - 1 - skip]),
  };
}
