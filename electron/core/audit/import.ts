import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { extname } from 'node:path';
import type { ImportReject, ImportReport } from '../../../shared/contract/audit.ts';
import { checkEvent, type EventRow } from './event.ts';
import { CsvParser } from './formats/csv.ts';
import { JsonItemsParser } from './formats/json.ts';
import { NdjsonParser } from './formats/ndjson.ts';
import type { FormatParser, Parsed } from './formats/parsed.ts';
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
}

const SNIFF_BYTES = 64 * 1024;
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

function parserFor(format: ImportFormat): FormatParser {
  return format === 'ndjson' ? new NdjsonParser() : format === 'json' ? new JsonItemsParser() : new CsvParser();
}

/**
 * Streams one file into the store. Memory is one read chunk plus one batch whatever the file
 * size. Existing events are never touched (INSERT OR IGNORE), and a broken file keeps every
 * complete row before the break.
 */
export async function importFile(store: AuditStore, path: string, opts: ImportOptions = {}): Promise<ImportReport> {
  const batchSize = opts.batchSize ?? 10_000;
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
  const counted = (c: InsertCounts) => {
    report.accepted += c.inserted;
    report.duplicates += c.duplicates;
    opts.onProgress?.({ path, items: report.items, accepted: report.accepted, rejected: report.rejected });
  };
  const flush = () => {
    if (!batch.length) return;
    if (stage) {
      stage.add(batch);
      opts.onProgress?.({ path, items: report.items, accepted: report.accepted, rejected: report.rejected });
    } else counted(store.insertBatch(batch, 'import'));
    batch = [];
  };
  const reject = (line: number, item: number, reason: string) => {
    report.rejected++;
    if (rejects.length < maxListed) rejects.push({ line, item, reason });
  };
  const emit = (p: Parsed) => {
    switch (p.kind) {
      case 'item': {
        report.items++;
        const checked = checkEvent(p.value, p.text);
        if (checked.ok) {
          batch.push(checked.row);
          if (batch.length >= batchSize) flush();
        } else reject(p.line, p.item, checked.reason);
        break;
      }
      case 'reject':
        report.items++;
        reject(p.line, p.item, p.reason);
        break;
      case 'fatal':
        report.fatal ??= p.reason;
        break;
      case 'warning':
        report.warnings.push(p.message);
    }
  };

  // A file large relative to the cache is loaded with the secondary indexes set aside and built
  // once at the end; a small one goes through them (rebuilding for it would cost more). Bulk rows
  // are staged in a scratch file first and moved in by date (store.openStage), so the cache's
  // tables are appended to; the cache is still only written in whole committed batches.
  const bytes = (await stat(path)).size;
  const bulk = opts.bulk ?? (bytes >= BULK_MIN_BYTES && bytes / BYTES_PER_EVENT > store.counts().events / 2);
  if (bulk) {
    store.deferIndexes();
    stage = store.openStage();
  }
  try {
    await readInto(format, path, emit, report);
    flush();
    stage?.merge('import', batchSize, counted);
  } finally {
    try {
      flush();
    } finally {
      stage?.close();
      if (bulk) store.restoreIndexes();
    }
  }
  if (report.rejected > rejects.length) report.warnings.push(`${report.rejected - rejects.length} more rejected item(s) not listed`);
  return report;
}

async function readInto(format: ImportFormat, path: string, emit: (p: Parsed) => void, report: ImportReport): Promise<void> {
  const parser = parserFor(format);
  const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 });
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      parser.feed(chunk, emit);
      if (report.fatal) break;
    }
    if (!report.fatal) parser.end(emit);
  } catch (err) {
    report.fatal ??= `reading stopped: ${err instanceof Error ? err.message : String(err)}; the rows before it were kept`;
  } finally {
    stream.destroy();
  }
}

export async function importFiles(store: AuditStore, paths: readonly string[], opts: ImportOptions = {}): Promise<ImportReport[]> {
  const out: ImportReport[] = [];
  for (const p of paths) out.push(await importFile(store, p, opts));
  return out;
}
