import { existsSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ImportReject, ImportReport } from '../../../shared/contract/audit.ts';
import type { EventRow } from './event.ts';
import { unpack, type PackedBatch } from './parse-worker.ts';
import { readParsed, type ReadTask, type RowSink } from './read.ts';
import type { AuditStore, InsertCounts, Stage } from './store.ts';

export type ImportFormat = ImportReport['format'];

export interface ImportOptions {
  /** Rows per transaction: each batch lands whole or not at all. */
  batchSize?: number;
  /** Rejections listed in the report; all are counted. */
  maxRejectsListed?: number;
  onProgress?: (p: { path: string; items: number; accepted: number; rejected: number }) => void;
  /** Bulk mode (indexes set aside, built at the end) whatever the file size; tests use it. */
  bulk?: boolean;
  /**
   * Parse and check in a worker thread while this one writes. Off by default: on a shared 2-core
   * machine it cost more CPU and ~140 MB more peak RSS without a shorter wall time (bench/RESULTS.md).
   */
  worker?: boolean;
}

const SNIFF_BYTES = 64 * 1024;
/**
 * Rows per transaction. Smaller batches die young in V8 instead of being promoted and collected
 * late: 5,000 rows peaked ~60 MB lower than 10,000 over a 1M-event import at about the same time;
 * 2,500 saved ~30 MB more but committed twice as often (bench/RESULTS.md).
 */
const BATCH_ROWS = 5000;
/** Bulk loading starts at about 50,000 events (exported events run 500 to 1,500 bytes). */
const BULK_MIN_BYTES = 48 * 1024 * 1024;
const BYTES_PER_EVENT = 1000;

/** By extension; otherwise by the first bytes (`[` JSON, `{` NDJSON or a JSON page, else CSV). */
export async function detectFormat(path: string): Promise<ImportFormat | 'binary'> {
  const head = await readHead(path);
  if (head.includes('\u0000')) return 'binary';
  const ext = extname(path).toLowerCase();
  if (ext === '.ndjson' || ext === '.jsonl') return 'ndjson';
  if (ext === '.csv') return 'csv';
  const text = head.replace(/^\ufeff/, '').trimStart();
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

async function readHead(path: string): Promise<string> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await fh.read(buf, 0, SNIFF_BYTES, 0);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await fh.close();
  }
}

/**
 * Streams one file into the store. Memory is one read chunk plus one batch whatever the file
 * size. Existing events are never touched (INSERT OR IGNORE), and a broken file keeps every
 * complete row before the break.
 */
export async function importFile(store: AuditStore, path: string, opts: ImportOptions = {}): Promise<ImportReport> {
  const batchSize = opts.batchSize ?? BATCH_ROWS;
  const maxListed = opts.maxRejectsListed ?? 200;
  let detected: ImportFormat | 'binary' | { unreadable: string };
  try {
    detected = await detectFormat(path);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    detected = { unreadable: e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'is a folder' : e.message };
  }
  const ext = extname(path).toLowerCase();
  const byExt: ImportFormat = ext === '.csv' ? 'csv' : ext === '.ndjson' || ext === '.jsonl' ? 'ndjson' : 'json';
  const format = typeof detected === 'string' && detected !== 'binary' ? detected : byExt;
  const report: ImportReport = { path, format, items: 0, accepted: 0, duplicates: 0, rejected: 0, rejects: [], fatal: null, warnings: [] };
  if (typeof detected === 'object') {
    report.fatal = `cannot read the file: ${detected.unreadable}`;
    return report;
  }
  if (detected === 'binary') {
    report.fatal = 'not a text file (it contains NUL bytes): expected JSON, NDJSON or CSV';
    return report;
  }

  const rejects: ImportReject[] = report.rejects;
  let batch: EventRow[] = [];
  let stage: Stage | null = null;
  let bulk = false;
  /** Dates written straight into the cache by this bulk import while its input came in date order. */
  let span: { lo: number; hi: number } | null = null;
  const counted = (c: InsertCounts) => {
    report.accepted += c.inserted;
    report.duplicates += c.duplicates;
    opts.onProgress?.({ path, items: report.items, accepted: report.accepted, rejected: report.rejected });
  };
  const flush = () => {
    if (!batch.length) return;
    if (bulk && !stage && !inOrder(batch, span)) stage = store.openStage();
    if (stage) {
      stage.add(batch);
      opts.onProgress?.({ path, items: report.items, accepted: report.accepted, rejected: report.rejected });
    } else {
      if (bulk) span = widen(batch, span);
      counted(store.insertBatch(batch, 'import'));
    }
    batch = [];
  };
  const reject = (line: number, item: number, reason: string) => {
    report.rejected++;
    if (rejects.length < maxListed) rejects.push({ line, item, reason });
  };
  const sink: RowSink = {
    row: (r) => {
      report.items++;
      batch.push(r);
      if (batch.length >= batchSize) flush();
    },
    reject: (r) => {
      report.items++;
      reject(r.line, r.item, r.reason);
    },
    fatal: (reason) => (report.fatal ??= reason),
    warning: (m) => report.warnings.push(m),
    full: () => false,
    flush: () => {},
  };

  // A file large relative to the cache is loaded with the secondary indexes set aside and built
  // once at the end; a small one goes through them (rebuilding for it would cost more). A bulk
  // file in date order (an export: newest first, or oldest first) goes straight in, batch by
  // batch, each batch landing at one end of the dates already written. Once a batch would land
  // among them, the rest of the file is staged in a scratch file and moved in by date
  // (store.openStage), so the cache's tables are still appended to. Either way the cache is only
  // written in whole committed batches.
  const bytes = (await stat(path)).size;
  bulk = opts.bulk ?? (bytes >= BULK_MIN_BYTES && bytes / BYTES_PER_EVENT > store.counts().events / 2);
  if (bulk) {
    store.deferIndexes();
    store.beginBulk();
  }
  try {
    const task: ReadTask = { path, format, batchSize };
    if (opts.worker) await readInWorker(task, sink);
    else await readParsed(task, sink);
    flush();
    (stage as Stage | null)?.merge('import', batchSize, counted);
  } finally {
    try {
      flush();
    } finally {
      try {
        (stage as Stage | null)?.close();
      } finally {
        if (bulk) {
          try {
            store.restoreIndexes();
          } finally {
            store.endBulk();
          }
        }
      }
    }
  }
  if (report.rejected > rejects.length) report.warnings.push(`${report.rejected - rejects.length} more rejected item(s) not listed`);
  return report;
}

/** Rows inside the dates already written: a few (a file nearly in order) are cheap, many are random writes. */
const OUT_OF_ORDER_SHARE = 0.01;

function inOrder(rows: readonly EventRow[], span: { lo: number; hi: number } | null): boolean {
  if (!span) return true;
  let inside = 0;
  for (const r of rows) if (r.ts > span.lo && r.ts < span.hi) inside++;
  return inside <= rows.length * OUT_OF_ORDER_SHARE;
}

/** The batch's dates, a few stray ones at either end left out so they do not block the rest of the file. */
function widen(rows: readonly EventRow[], span: { lo: number; hi: number } | null): { lo: number; hi: number } {
  const ts = Float64Array.from(rows, (r) => r.ts).sort();
  const skip = Math.floor(ts.length * OUT_OF_ORDER_SHARE);
  return { lo: Math.min(span?.lo ?? Infinity, ts[skip]), hi: Math.max(span?.hi ?? -Infinity, ts[ts.length - 1 - skip]) };
}

/**
 * Large files are parsed and checked in a worker thread (parse-worker.ts) while this thread
 * writes: the sink sees the same calls in the same order as reading here would make. Where the
 * worker cannot start (a bundle without the worker file), the file is read here instead.
 */
async function readInWorker(task: ReadTask, sink: RowSink): Promise<void> {
  const url = new URL('./parse-worker.ts', import.meta.url);
  if (url.protocol !== 'file:' || !existsSync(fileURLToPath(url))) return readParsed(task, sink);
  let worker: Worker;
  try {
    worker = new Worker(url, { workerData: { auditParse: task }, resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16 } });
  } catch {
    return readParsed(task, sink);
  }
  let started = false;
  const outcome = await new Promise<'done' | 'fallback'>((resolve) => {
    let finished = false;
    const finish = (how: 'done' | 'fallback') => {
      if (finished) return;
      finished = true;
      void worker.terminate();
      resolve(how);
    };
    worker.on('message', (m: PackedBatch | { kind: 'error'; message: string }) => {
      if (finished) return;
      started = true;
      if (m.kind === 'error') {
        sink.fatal(`reading stopped: ${m.message}; the rows before it were kept`);
        return finish('done');
      }
      try {
        for (const w of m.warnings) sink.warning(w);
        // Rejects first: each carries its own line and item number, and the rows keep their order.
        for (const r of m.rejects) sink.reject(r);
        for (const r of unpack(m)) sink.row(r);
        if (m.fatal) sink.fatal(m.fatal);
      } catch (err) {
        sink.fatal(`reading stopped: ${err instanceof Error ? err.message : String(err)}; the rows before it were kept`);
        return finish('done');
      }
      if (m.done || m.fatal) finish('done');
      else worker.postMessage('ack');
    });
    worker.on('error', (err) => {
      if (!started) return finish('fallback');
      sink.fatal(`reading stopped: ${err.message}; the rows before it were kept`);
      finish('done');
    });
    worker.on('exit', () => finish(started ? 'done' : 'fallback'));
  });
  if (outcome === 'fallback') await readParsed(task, sink);
}

export async function importFiles(store: AuditStore, paths: readonly string[], opts: ImportOptions = {}): Promise<ImportReport[]> {
  const out: ImportReport[] = [];
  for (const p of paths) out.push(await importFile(store, p, opts));
  return out;
}
