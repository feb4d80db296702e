import { existsSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { dirname, extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ImportProgress, ImportReport } from '../../../shared/contract/audit.ts';
import { APP_LOCK_WAIT, CacheBusyError, whenWritable, type LockWait } from './busy.ts';
import { diskFullStop, diskShortage, isDiskFull } from './disk-space.ts';
import type { EventRow } from './event.ts';
import { keysFollowDates } from './keys.ts';
import { READING_STOPPED, readingStopped, readParsed, type ReadTask, type TextSource } from './read.ts';
import { stageFile, type StagedBatch, type StageTask } from './stage.ts';
import type { AuditStore, InsertCounts, StagedRows } from './store.ts';

export type ImportFormat = ImportReport['format'];

/**
 * `rows`: parsed here and inserted row by row through every index (a small file). `staged`: read in
 * a worker thread, staged, and copied in by SQL, through every index (a file of up to a sixth of
 * the cache). `bulk`: staged the same way, with the indexes set aside and built once at the end (a
 * file large next to the cache).
 */
export type LoadPath = 'rows' | 'staged' | 'bulk';

export interface ImportOptions {
  /**
   * Ctrl-C: the load stops after the batch in hand, which is committed; events committed before stay,
   * and the files after this one are not read. A load waiting for another process to let go of the
   * cache stops at once: the rows it was to write are not added (report.notAdded).
   */
  signal?: AbortSignal;
  /** The format, when the file's name and first bytes cannot tell it (`audit import --format`). */
  format?: ImportFormat;
  /** Rows per transaction: each batch lands whole or not at all (5,000; 50,000 in a staged or bulk load). */
  batchSize?: number;
  /** Rejections listed in the report; all are counted. */
  maxRejectsListed?: number;
  /**
   * After each batch. In a bulk load `accepted` counts the rows copied in so far: the duplicates
   * among them are found, and taken off, when the load ends (store.restoreIndexes).
   */
  onProgress?: (p: ImportProgress) => void;
  /**
   * Once, when a staged load meets the first batch out of date order: from there on the rows read
   * are held back (the count added stops growing) and moved in by date at the end (onSort).
   * `items`: the item (1-based, rejected ones counted) of the first row held back.
   */
  onHold?: (p: { path: string; items: number }) => void;
  /** Before a staged load moves the rows it held back in by date: its last step, which `signal` does not stop. */
  onSort?: (p: { path: string; rows: number }) => void;
  /** How the file goes in (see LoadPath), whatever its size; tests use it. */
  load?: LoadPath;
  /**
   * A staged or bulk load reads, parses and checks the file in a worker thread, which stages the
   * rows for this thread to copy in (stage.ts). On by default; off, the same steps run in this thread.
   */
  worker?: boolean;
  /**
   * How each write of the load (a batch; a staged or bulk load's setting aside and building of
   * indexes too) waits while another process holds the cache (busy.ts); the app's way by
   * default. Progress says what it waits for.
   */
  lockWait?: LockWait;
}

/** What an import that gave up waiting for the cache says becomes of it. */
const IMPORT_LATER = 'the batches imported before stay cached, and importing the file again adds the rest';
/** The same when it gave up at the end of a staged or bulk load, with indexes still to build (store.restoreIndexes). */
const RESTORE_LATER = `${IMPORT_LATER}; the cache's indexes are built again by its next large import, or when it is next opened once this process has ended`;

const SNIFF_BYTES = 64 * 1024;
/**
 * Rows per transaction. Smaller batches die young in V8 instead of being promoted and collected
 * late: 5,000 rows peaked ~60 MB lower than 10,000 over a 1M-event import at about the same time;
 * 2,500 saved ~30 MB more but committed twice as often (bench/RESULTS.md).
 */
const BATCH_ROWS = 5000;
/**
 * Rows per transaction of a staged or bulk load, whose copies are SQL only, so a larger
 * transaction holds no more JS memory. Event ids are random (the API's look like UUIDs), so a transaction touches most
 * pages of the event_id index whatever its size, and each transaction writes them again: 50,000
 * rows took 1,000,000 events with random ids from ~67 s to ~50 s (bench/RESULTS.md).
 */
const BULK_BATCH_ROWS = 50_000;
/**
 * A file is staged (a staged or bulk load) from about 50,000 events (exported events run 500 to
 * 1,500 bytes); a smaller one goes row by row.
 */
const STAGE_MIN_BYTES = 48 * 1024 * 1024;
const BYTES_PER_EVENT = 1000;
/**
 * A file of more events than this share of the cache's (estimated from its size) is loaded in bulk,
 * a smaller one staged with every index live. Through live indexes an event costs more the larger
 * the cache (random index inserts); a bulk load costs ~35 µs per event plus rebuilding the indexes,
 * ~13 s per 1,000,000 cached. Into 2,000,000 cached events (bench/RESULTS.md, eighth round):
 * 250,000 events took 22 s staged and 32-45 s in bulk, 333,000 took 34 and 44 s, 500,000 took 61 and
 * 54 s, and 1,000,000 took 103 s staged and 52-62 s in bulk. Exported events run ~800 bytes, so a
 * sixth by this estimate is about a fifth of the cache's count.
 */
const BULK_SHARE_OF_CACHE = 1 / 6;

function loadPathFor(bytes: number, cachedEvents: number): LoadPath {
  if (bytes < STAGE_MIN_BYTES) return 'rows';
  return bytes / BYTES_PER_EVENT > cachedEvents * BULK_SHARE_OF_CACHE ? 'bulk' : 'staged';
}
/**
 * The format of text whose first bytes are `head`, from a file named `*{ext}` (`''`: standard input):
 * by extension; otherwise by the first bytes (`[` JSON, `{` NDJSON or a JSON page, else CSV).
 */
export function formatOfHead(head: string, ext: string): ImportFormat | 'binary' {
  if (head.includes('\u0000')) return 'binary';
  if (ext === '.ndjson' || ext === '.jsonl') return 'ndjson';
  if (ext === '.csv') return 'csv';
  const text = head.replace(/^\ufeff/, '').trimStart();
  // Nothing is named as the CLI exports by default, not as the CSV an empty head would suggest.
  if (!text) return ext === '.json' ? 'json' : 'ndjson';
  if (text.startsWith('[')) return 'json';
  if (text.startsWith('{')) {
    const firstLine = text.split('\n', 1)[0].trim();
    try {
      JSON.parse(firstLine);
      // A complete object on the first line followed by more lines: one value per line.
      return text.slice(firstLine.length).trim().startsWith('{') ? 'ndjson' : 'json';
    } catch {
      return 'json';
    }
  }
  return ext === '.json' ? 'json' : 'csv';
}

/** The file's first bytes as text; `whole` when they are the entire file. */
async function readHead(path: string): Promise<{ text: string; whole: boolean }> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await fh.read(buf, 0, SNIFF_BYTES, 0);
    return { text: buf.subarray(0, bytesRead).toString('utf8'), whole: bytesRead < SNIFF_BYTES };
  } finally {
    await fh.close();
  }
}

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

  // A file large relative to the cache is loaded in bulk: the secondary indexes set aside and
  // built once at the end, the rows staged and copied in by SQLite (store.openStage). A smaller one
  // goes through the indexes (rebuilding them for it would cost more): staged the same way if it is
  // large enough for a worker thread to pay, else row by row.
  const cached = store.counts().events;
  const load = opts.load ?? loadPathFor(bytes, cached);
  const batchSize = opts.batchSize ?? (load === 'rows' ? BATCH_ROWS : BULK_BATCH_ROWS);
  // Refused before anything is written when the disk could not hold it: otherwise a large export
  // would fail minutes in, with the cache's indexes still to rebuild on a full disk.
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
 * An export piped in (`audit import -`), its format told by its first bytes as a file's is. It goes
 * in row by row as it arrives: its size is not known beforehand (to choose a staged load or check
 * the disk), and a worker thread cannot read this thread's stream. A large export loads faster
 * from a file.
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

/** The first `chars` (or all) of `input` to tell its format by, and the whole text, those included, to read. */
async function peek(
  input: AsyncIterable<string>,
  chars: number,
): Promise<{ head: string; whole: boolean; text: AsyncIterable<string>; release: () => Promise<unknown> }> {
  const it = input[Symbol.asyncIterator]();
  let head = '';
  let ended = false;
  while (head.length < chars) {
    const r = await it.next();
    if (r.done) {
      ended = true;
      break;
    }
    head += r.value;
  }
  async function* text(): AsyncGenerator<string> {
    try {
      if (head) yield head;
      while (!ended) {
        const r = await it.next();
        if (r.done) ended = true;
        else yield r.value;
      }
    } finally {
      // Left early (Ctrl-C, a fatal error): the source is let go of, as a for-await over it would.
      if (!ended) await it.return?.();
    }
  }
  return { head, whole: ended, text: text(), release: async () => ended || it.return?.() };
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
  // Another program can still fill the disk during a long import. Each batch is one transaction,
  // so the cache keeps the batches committed before it, and a second import of the file skips
  // them. The stage's writer, or a write from the reading loop, can meet the full disk first: its
  // error then arrives as the reading's stop.
  if (diskFull || (report.fatal?.startsWith(READING_STOPPED) && isDiskFull(report.fatal)))
    report.fatal = diskFullStop(store, report.accepted);
  if (report.rejected > report.rejects.length)
    report.warnings.push(`${report.rejected - report.rejects.length} more rejected item(s) not listed`);
  return report;
}

const UNREADABLE: Record<string, string> = { ENOENT: 'no such file', EISDIR: 'is a folder' };
const FORMAT_OF_EXT: Record<string, ImportFormat> = { '.csv': 'csv', '.ndjson': 'ndjson', '.jsonl': 'ndjson' };

const NOT_TEXT = 'not a text file (it contains NUL bytes): expected JSON, NDJSON or CSV';

/**
 * Nothing, or only blank lines (`echo | mediadesk audit import -`): no events, said as such. The
 * parsers would read it as a CSV without a header row, or with whitespace for one, and refuse it.
 * Not an error: the export of a query that matched nothing is an empty file too.
 */
const isBlank = (head: string) => head.trim() === '';
const nothingIn = (what: string) => `${what} is empty (no events): nothing to import`;

const emptyReport = (path: string, format: ImportFormat): ImportReport => ({
  path,
  format,
  items: 0,
  accepted: 0,
  duplicates: 0,
  rejected: 0,
  rejects: [],
  fatal: null,
  warnings: [],
});

/**
 * An empty report for the file, its format detected (or `format`); `fatal` says why a file cannot be
 * read at all, a warning that there is nothing in it to read (isBlank, and `blank` set): either way it is not loaded.
 */
async function openReport(path: string, format?: ImportFormat): Promise<{ report: ImportReport; blank: boolean }> {
  let detected: ImportFormat | 'binary' | { unreadable: string };
  let blank = false;
  try {
    const head = await readHead(path);
    blank = head.whole && isBlank(head.text);
    detected = formatOfHead(head.text, extname(path).toLowerCase());
    if (format && detected !== 'binary') detected = format;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    detected = { unreadable: UNREADABLE[e.code ?? ''] ?? e.message };
  }
  const ext = extname(path).toLowerCase();
  const byExt: ImportFormat = FORMAT_OF_EXT[ext] ?? 'json';
  const report = emptyReport(path, typeof detected === 'string' && detected !== 'binary' ? detected : byExt);
  if (typeof detected === 'object') report.fatal = `cannot read the file: ${detected.unreadable}`;
  else if (detected === 'binary') report.fatal = NOT_TEXT;
  else if (blank) report.warnings.push(nothingIn('the file'));
  return { report, blank };
}

/** The report as the load fills it: every rejection counted, the first `maxListed` listed. */
class Tally {
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
type LoadWrite = <T>(write: () => T, o?: { signal?: AbortSignal; afterwards?: string }) => Promise<T>;

/**
 * A load's writes wait for the cache's lock with this thread free (whenWritable); the progress
 * says what a write waits for, once per wait, and that the wait is over.
 */
function lockWaiter(store: AuditStore, tally: Tally, wait: LockWait = APP_LOCK_WAIT): LoadWrite {
  return async (write, o = {}) => {
    let said: string | null = null;
    const done = await whenWritable(store, write, {
      wait,
      afterwards: o.afterwards ?? IMPORT_LATER,
      signal: o.signal,
      onWait: (m) => {
        if (m !== said) tally.progress((said = m));
      },
    });
    if (said !== null) tally.progress();
    return done;
  };
}

/** A write the signal stopped while it waited for the lock: it was not made. */
const STOPPED = Symbol('stopped');

async function unlessStopped<T>(write: Promise<T>, signal: AbortSignal | undefined): Promise<T | typeof STOPPED> {
  try {
    return await write;
  } catch (err) {
    if (signal?.aborted && (err as { name?: unknown } | null)?.name === 'AbortError') return STOPPED;
    throw err;
  }
}

/**
 * Parsed in this thread and inserted batch by batch through every index. A batch waits for the
 * cache's lock between chunks (whenWritable), so the thread stays free meanwhile.
 */
async function loadRows(
  store: AuditStore,
  task: ReadTask,
  tally: Tally,
  batchSize: number,
  o: { source?: TextSource; signal?: AbortSignal; lockWait?: LockWait },
): Promise<void> {
  const report = tally.report;
  let batch: EventRow[] = [];
  const full: EventRow[][] = [];
  const write = lockWaiter(store, tally, o.lockWait);
  // A Stop that ended a wait for the lock: the rows in hand and after are not added (the report says how many).
  let stoppedWaiting = false;
  const insert = async (rows: EventRow[]) => {
    const counts = stoppedWaiting
      ? STOPPED
      : await unlessStopped(
          write(() => store.insertBatch(rows, 'import'), { signal: o.signal }),
          o.signal,
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
      { ...o, onRead: (b) => (tally.bytesRead = b), drain },
    );
    if (stopped) report.interrupted = true;
  } finally {
    if (batch.length) full.push(batch);
    batch = [];
    if (!gaveUp) await drain();
  }
  if (gaveUp) report.fatal = (gaveUp as CacheBusyError).message;
}

interface StagedLoad {
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
 * write waits for the cache's lock with this thread free (lockWaiter), one check per batch; a
 * Stop ends a wait, the rows it held back not added, but not the indexes' building at the end.
 */
async function loadStaged(store: AuditStore, task: ReadTask, tally: Tally, how: StagedLoad): Promise<void> {
  const { bulk, cached, bytes, batchSize, signal } = how;
  const report = tally.report;
  const write = lockWaiter(store, tally, how.lockWait);
  // A staged load keeps every index live, and is recorded all the same: a bulk load in another
  // process must not set the unique index aside under it, nor build it again under it.
  //
  // A bulk load sets the indexes aside. The event_id unique index goes aside too when few cached
  // events could clash with the file's: with random ids it is the costliest index to keep, but
  // aside, each duplicate is inserted and removed again at the end (a re-import of the same
  // export would double the file for nothing). Into an empty cache it goes aside at once. Into a
  // cache with events, the stage decides batch by batch from the dates: aside where the cache
  // holds few events (a month not yet imported), live where it holds many (store.openStage).
  // Where keys do not follow dates, by counts: live when the cache holds a tenth of the file's events.
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
    // A file in date order (an export: newest first, or oldest first) is copied in as it is
    // staged, each batch landing at one end of the dates already written. From the first batch
    // that would land among them, the rest is held in the stage and moved in by date at the
    // end, so the cache's tables are still appended to.
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
        how.onHold?.({ path: report.path, items: from });
      }
      if (tally.held && heldFrom !== null) tally.held.rows = stagedTo - heldFrom;
      tally.progress();
    };
    // The reading side commits and reports every BATCH_ROWS rows, so the decision to copy or hold
    // back follows the file closely; a bulk transaction spans several staged batches.
    await stageRows({ ...task, stagePath: stage.path, batchSize: Math.min(batchSize, BATCH_ROWS) }, onStaged, how);
    await copyPending();
    // Interrupted, the rows held back stay out: moving them in could take as long as the load so
    // far; so do rows whose copy a Stop found waiting for the lock. The report says how many, or
    // its items would not add up to what it says became of them.
    if (signal?.aborted && (heldFrom !== null || notCopied()))
      report.notAdded = notCopied() + (heldFrom !== null ? stagedTo - heldFrom : 0);
    else if (heldFrom !== null) {
      // The last step: a Ctrl-C from here on is seen only once the file is all in.
      how.onSort?.({ path: report.path, rows: stagedTo - heldFrom });
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
        // Rows the load let in whose event_id was cached already, or came earlier in the file.
        // A Stop does not end these waits: the cache would be left without its indexes.
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

/** Rows inside the dates already written: a few (a file nearly in order) are cheap, many are random writes. */
const OUT_OF_ORDER_SHARE = 0.01;

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

/** The worker's message when reading failed outright. */
interface StageFailure {
  kind: 'error';
  message: string;
}

/**
 * Stages the file from a worker thread (stage-worker.ts), calling `emit` here for each staged
 * batch in order. Where the worker cannot start (a build without the worker file), the file is
 * staged in this thread instead, through the same code.
 */
async function stageRows(
  task: StageTask,
  emit: (b: StagedBatch) => Promise<void>,
  o: { worker: boolean; signal?: AbortSignal },
): Promise<void> {
  const url = workerUrl();
  const { signal } = o;
  if (!o.worker || !url) return stageFile(task, emit, signal);
  let worker: Worker;
  try {
    // Caps the parser's heap: young generations above 16 MB bought no speed, only RSS (bench/RESULTS.md).
    worker = new Worker(url, {
      workerData: { auditStage: task },
      resourceLimits: { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 16 },
    });
  } catch {
    return stageFile(task, emit, signal);
  }
  let started = false;
  const stopped = (reason: string): StagedBatch => ({
    kind: 'batch',
    lo: 0,
    hi: 0,
    ts: new Float64Array(0),
    items: 0,
    rejects: [],
    warnings: [],
    done: true,
    stopped: false,
    bytesRead: 0,
    fatal: readingStopped(reason),
  });
  const outcome = await new Promise<'done' | 'fallback' | { failed: unknown }>((resolve) => {
    let finished = false;
    // The batch in hand: its copy may be waiting for the cache's lock.
    let delivering: Promise<void> | null = null;
    // Interrupted: the batches delivered so far are the load; the thread is stopped where it is.
    const onAbort = () => finish('done');
    const finish = (how: 'done' | 'fallback' | { failed: unknown }) => {
      if (finished) return;
      finished = true;
      signal?.removeEventListener('abort', onAbort);
      // Resolved once the thread is gone (the stage file is deleted next, which Windows refuses
      // while it is open) and the batch in hand is settled (a Stop ends its wait).
      void Promise.allSettled([worker.terminate(), delivering]).then(() => resolve(how));
    };
    // Every batch, the last one too, may copy rows into the cache here; if that fails (disk full, a
    // wait for the lock given up) the import fails as it would in this thread.
    const deliver = async (b: StagedBatch) => {
      try {
        await emit(b);
      } catch (err) {
        return finish({ failed: err });
      }
      if (b.done) finish('done');
    };
    // One batch per turn of the event loop. Node hands a port's waiting messages over in one go,
    // and a reading thread that is ahead (a newest-first export reads faster than it is copied)
    // leaves many waiting: delivered in one go, their copies held the loop for seconds, so a Stop
    // (audit.importCancel), a status read or a Ctrl-C waited for the end of the file. The thread's
    // error or exit waits its turn too: its last batches come before it.
    const waiting: StagedBatch[] = [];
    const next = () => {
      const b = waiting.shift();
      if (!b || finished) return;
      delivering = deliver(b).then(() => {
        delivering = null;
        if (waiting.length) setImmediate(next);
      });
    };
    const queue = (b: StagedBatch) => {
      if (finished) return;
      waiting.push(b);
      if (waiting.length === 1 && !delivering) setImmediate(next);
    };
    worker.on('message', (m: StagedBatch | StageFailure) => {
      started = true;
      queue(m.kind === 'error' ? stopped(m.message) : m);
    });
    worker.on('error', (err) => {
      if (!started) return finish('fallback');
      queue(stopped(err.message));
    });
    worker.on('exit', () => {
      if (!started) return finish('fallback');
      queue(stopped('the reading thread ended early'));
    });
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort);
  });
  if (outcome === 'fallback' && !signal?.aborted) return stageFile(task, emit, signal);
  if (typeof outcome === 'object') throw outcome.failed;
}

/** The worker's file: the .ts source when run from source, the built .js beside the bundle. */
function workerUrl(): URL | null {
  for (const name of ['./stage-worker.ts', './stage-worker.js']) {
    const url = new URL(name, import.meta.url);
    if (url.protocol === 'file:' && existsSync(fileURLToPath(url))) return url;
  }
  return null;
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
