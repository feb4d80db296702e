import { createReadStream } from 'node:fs';
import type { ImportReject, ImportReport } from '../../../shared/contract/audit.ts';
import { checkEvent, type EventRow } from './event.ts';
import { CsvParser } from './formats/csv.ts';
import { JsonItemsParser } from './formats/json.ts';
import { NdjsonParser } from './formats/ndjson.ts';
import type { FormatParser, Parsed } from './formats/parsed.ts';

export interface ReadTask {
  path: string;
  format: ImportReport['format'];
}

/** Text to read instead of the file at `task.path` (standard input); only in this thread, never a worker's. */
export type TextSource = AsyncIterable<string>;

/** Where read rows go, in file order. */
export interface RowSink {
  row(r: EventRow): void;
  reject(r: ImportReject): void;
  fatal(reason: string): void;
  warning(message: string): void;
}

function parserFor(format: ImportReport['format']): FormatParser {
  if (format === 'ndjson') return new NdjsonParser();
  return format === 'json' ? new JsonItemsParser() : new CsvParser();
}

/** How a report's error begins when reading (or a write the reading called) failed mid-file. */
export const READING_STOPPED = 'reading stopped: ';

export function readingStopped(reason: string): string {
  return `${READING_STOPPED}${reason}; the rows before it were kept.`;
}

/**
 * Streams the file (or `source`) through its parser and the event check, one chunk in memory. Once
 * `signal` aborts nothing more is read or parsed (a cut line is no rejection), and `stopped` says so
 * unless the file was read to its end. `onRead`: bytes read, before each chunk; `drain`: after it.
 */
export async function readParsed(
  task: ReadTask,
  sink: RowSink,
  opts: {
    source?: TextSource;
    signal?: AbortSignal;
    onRead?: (bytes: number) => void;
    drain?: () => Promise<void>;
  } = {},
): Promise<{ stopped: boolean }> {
  let fatal = false;
  let stopped = false;
  const emit = (p: Parsed) => {
    switch (p.kind) {
      case 'item': {
        const checked = checkEvent(p.value, p.text);
        if (checked.ok) sink.row(checked.row);
        else sink.reject({ line: p.line, item: p.item, reason: checked.reason });
        break;
      }
      case 'reject':
        sink.reject({ line: p.line, item: p.item, reason: p.reason });
        break;
      case 'fatal':
        fatal = true;
        sink.fatal(p.reason);
        break;
      case 'warning':
        sink.warning(p.message);
    }
  };
  const parser = parserFor(task.format);
  const stream = opts.source ? null : createReadStream(task.path, { encoding: 'utf8', highWaterMark: 1 << 20 });
  try {
    for await (const chunk of opts.source ?? (stream as AsyncIterable<string>)) {
      if (stream) opts.onRead?.(stream.bytesRead);
      parser.feed(chunk, emit);
      // The sink's writes that must wait (for the cache's lock) are done before the next chunk is read.
      await opts.drain?.();
      if (fatal) break;
      if (opts.signal?.aborted) {
        stopped = true;
        break;
      }
    }
    if (!fatal && !stopped) parser.end(emit);
  } catch (err) {
    sink.fatal(readingStopped(err instanceof Error ? err.message : String(err)));
  } finally {
    stream?.destroy();
  }
  return { stopped };
}
