import { open } from 'node:fs/promises';
import { extname } from 'node:path';
import type { ImportReport } from '../../../../shared/contract/audit.ts';

export type ImportFormat = ImportReport['format'];

/** How many leading bytes tell a file's format. */
export const SNIFF_BYTES = 64 * 1024;

export const NOT_TEXT = 'not a text file (it contains NUL bytes): expected JSON, NDJSON or CSV';

/**
 * Nothing, or only blank lines: no events, said as such rather than refused as a CSV without a
 * header. Not an error: the export of a query that matched nothing is an empty file too.
 */
export const isBlank = (head: string) => head.trim() === '';
export const nothingIn = (what: string) => `${what} is empty (no events): nothing to import`;

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
    const firstLine = text.split(/\r\n?|\n/, 1)[0].trim();
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

/** The first `chars` (or all) of `input` to tell its format by, and the whole text, those included, to read. */
export async function peek(
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

export const emptyReport = (path: string, format: ImportFormat): ImportReport => ({
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
 * An empty report for the file, its format detected (or `format`): `fatal` says why it cannot be
 * read at all, a warning that it is blank (`blank` set). Either way it is not loaded.
 */
export async function openReport(
  path: string,
  format?: ImportFormat,
): Promise<{ report: ImportReport; blank: boolean }> {
  let detected: ImportFormat | 'binary' | { unreadable: string };
  let blank = false;
  try {
    const head = await readHead(path);
    blank = head.whole && isBlank(head.text);
    detected = formatOfHead(head.text, extname(path).toLowerCase());
    if (format && detected !== 'binary') detected = format;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    detected = { unreadable: UNREADABLE_CODES[e.code ?? ''] ?? e.message };
  }
  const ext = extname(path).toLowerCase();
  const byExt: ImportFormat = FORMAT_OF_EXTENSION[ext] ?? 'json';
  const report = emptyReport(path, typeof detected === 'string' && detected !== 'binary' ? detected : byExt);
  if (typeof detected === 'object') report.fatal = `cannot read the file: ${detected.unreadable}`;
  else if (detected === 'binary') report.fatal = NOT_TEXT;
  else if (blank) report.warnings.push(nothingIn('the file'));
  return { report, blank };
}

const UNREADABLE_CODES: Record<string, string> = { ENOENT: 'no such file', EISDIR: 'is a folder' };
const FORMAT_OF_EXTENSION: Record<string, ImportFormat> = { '.csv': 'csv', '.ndjson': 'ndjson', '.jsonl': 'ndjson' };
