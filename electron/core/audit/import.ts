import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ImportReport } from '../../../shared/contract/audit.ts';
import { CacheBusyError } from './busy.ts';
import { diskFullStop, diskShortage, isDiskFull } from './disk-space.ts';
import {
  emptyReport,
  formatOfHead,
  isBlank,
  NOT_TEXT,
  nothingIn,
  openReport,
  peek,
  SNIFF_BYTES,
} from './import/format.ts';
import { BATCH_ROWS, planLoad } from './import/plan.ts';
import { loadRows } from './import/rows.ts';
import { loadStaged } from './import/staged.ts';
import { Tally } from './import/tally.ts';
import { READING_STOPPED, type ReadTask } from './read.ts';
import type { AuditStore } from './store.ts';
import type { ImportOptions } from './import/types.ts';

export { formatOfHead, type ImportFormat } from './import/format.ts';
export { restoreIndexes } from './import/staged.ts';
export type { ImportOptions, LoadPath } from './import/types.ts';

/**
 * Streams one file into the store. Memory is one read chunk plus one batch whatever the file
 * size. Events already cached are never touched (a duplicate is skipped, or in a bulk load removed
 * when it ends), and a broken file keeps every complete row before the break.
 */
export async function importFile(store: AuditStore, path: string, opts: ImportOptions = {}): Promise<ImportReport> {
  const { report, blank } = await openReport(path, opts.format);
  if (report.fatal || blank) return report;
  const bytes = (await stat(path)).size;
  const tally = new Tally(report, opts.maxRejectsListed ?? 200, opts.onProgress, bytes);
  const cached = store.counts().events;
  const { load, batchSize } = planLoad(bytes, cached, opts);
  // Refused before anything is written when the disk could not hold it, not minutes in with indexes to rebuild.
  const shortage = await diskShortage(dirname(store.db.name), bytes, load, batchSize);
  if (shortage) {
    report.fatal = shortage;
    return report;
  }
  const task: ReadTask = { path, format: report.format };
  return finishLoad(store, report, () =>
    load === 'rows'
      ? loadRows(store, task, tally, batchSize, { signal: opts.signal, lockWait: opts.lockWait })
      : loadStaged(store, task, tally, {
          bulk: load === 'bulk',
          cached,
          bytes,
          batchSize,
          worker: opts.worker ?? true,
          signal: opts.signal,
          onHold: opts.onHold,
          onSort: opts.onSort,
          lockWait: opts.lockWait,
        }),
  );
}

/** How a report names standard input (`audit import -`). */
export const STDIN_NAME = '-';

/**
 * An export piped in (`audit import -`), its format told by its first bytes. It goes in row by row
 * as it arrives: its size is unknown beforehand and a worker cannot read this thread's stream, so
 * a large export loads faster from a file.
 */
export async function importStream(
  store: AuditStore,
  input: AsyncIterable<string>,
  opts: ImportOptions = {},
): Promise<ImportReport> {
  const { head, whole, text, release } = await peek(input, SNIFF_BYTES);
  const blank = whole && isBlank(head);
  const detected = opts.format ?? formatOfHead(head, '');
  const report = emptyReport(STDIN_NAME, detected === 'binary' ? 'json' : detected);
  if (detected === 'binary') {
    report.fatal = NOT_TEXT;
    await release();
    return report;
  }
  if (blank) {
    report.warnings.push(nothingIn('standard input'));
    return report;
  }
  const tally = new Tally(report, opts.maxRejectsListed ?? 200, opts.onProgress, null);
  return finishLoad(store, report, () =>
    loadRows(store, { path: STDIN_NAME, format: report.format }, tally, opts.batchSize ?? BATCH_ROWS, {
      source: text,
      signal: opts.signal,
      lockWait: opts.lockWait,
    }),
  );
}

/** Runs a load that fills `report`, and words its ending: a full disk, the rejections not listed. */
async function finishLoad(store: AuditStore, report: ImportReport, load: () => Promise<void>): Promise<ImportReport> {
  let diskFull = false;
  try {
    await load();
  } catch (err) {
    if (err instanceof CacheBusyError) report.fatal = err.message;
    else if (!isDiskFull(err)) throw err;
    else diskFull = true;
  }
  // Another program can fill the disk mid-import: the committed batches stay, and a second import
  // skips them. The stage's writer or the reading loop can meet it first: then it is the reading's stop.
  if (diskFull || (report.fatal?.startsWith(READING_STOPPED) && isDiskFull(report.fatal)))
    report.fatal = diskFullStop(store, report.accepted);
  if (report.rejected > report.rejects.length)
    report.warnings.push(`${report.rejected - report.rejects.length} more rejected item(s) not listed`);
  return report;
}

export async function importFiles(
  store: AuditStore,
  paths: readonly string[],
  opts: ImportOptions = {},
): Promise<ImportReport[]> {
  const out: ImportReport[] = [];
  const { onProgress } = opts;
  for (const [i, p] of paths.entries()) {
    if (opts.signal?.aborted) break;
    out.push(
      await importFile(store, p, {
        ...opts,
        onProgress: onProgress && ((x) => onProgress({ ...x, file: i + 1, files: paths.length })),
      }),
    );
  }
  return out;
}
