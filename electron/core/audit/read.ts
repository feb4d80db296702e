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
 * Streams the file (or `o.source`) through its format parser and the event check. Memory is one
 * read chunk plus what the sink holds. Once `o.signal` is aborted no more is read, and the text
 * after the last chunk is left unparsed: a cut line is no rejection. `stopped`: the signal ended it
 * before the end of the file (a file read to its end is read, whenever the signal came). `onRead`:
 * the file's bytes read so far, before each chunk is parsed (not for `o.source`, whose size is unknown).
 * `drain`: awaited after each chunk is parsed.
 */
export async function readParsed(
  task: ReadTask,
  sink: RowSink,
  o: { source?: TextSource; signal?: AbortSignal; onRead?: (bytes: number) => void; drain?: () => Promise<void> } = {},
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
  const stream = o.source ? null : createReadStream(task.path, { encoding: 'utf8', highWaterMark: 1 << 20 });
  try {
    for await (const chunk of o.source ?? (stream as AsyncIterable<string>)) {
      if (stream) o.onRead?.(stream.bytesRead);
      parser.feed(chunk, emit);
      // The sink's writes that must wait (for the cache's lock) are done before the next chunk is read.
      await o.drain?.();
      if (fatal) break;
      if (o.signal?.aborted) {
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
