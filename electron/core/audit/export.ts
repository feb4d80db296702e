import Database from 'better-sqlite3';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { dirname } from 'node:path';
import type { AuditFilters, AuditSort } from '../../../shared/contract/audit.ts';
import { escapeJsonText } from '../../../shared/unsafe-text.ts';
import { CSV_COLUMNS, escapeFormula } from './formats/csv.ts';
import { storedEventProblem } from './event.ts';
import { iterateEvents, type DbRow } from './query.ts';

const JSON_COLUMNS = new Set(['action.data', 'action.old_state', 'action.new_state', 'action.context']);

function valueAt(event: Record<string, unknown>, path: string): unknown {
  let v: unknown = event;
  for (const seg of path.split('.')) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<string, unknown>)[seg];
  }
  return v;
}

/**
 * null and a missing field are an empty cell, an empty text a quoted empty cell `""` (as
 * PostgreSQL's CSV COPY writes them), so the import tells the two apart. A JSON cell's text is
 * never empty: its "" is the JSON text `""`.
 */
export function csvCell(v: unknown, json: boolean): string {
  if (v === undefined || v === null) return '';
  const s = escapeFormula(json || typeof v === 'object' ? JSON.stringify(v) : String(v));
  return s === '' || /[",\r\n]|^\s|\s$/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/**
 * One event as an NDJSON line: its stored JSON text, line breaks (only ever between tokens) removed
 * with their indentation, and line separators, C1 and bidi controls escaped (`\u2028`) so no reader
 * or terminal splits or reorders the line; it parses to the same value.
 */
export const ndjsonLine = (raw: string): string => escapeJsonText(raw.replace(/[\r\n][\t\n\r ]*/g, '')) + '\n';

/**
 * A cached event as an export or `audit query --json|--csv` writes it: its stored JSON text, or for
 * one beyond an event's limits (cached before they were enforced) its indexed fields and, in
 * `withheld`, why the rest is not handed on to every reader.
 */
export function servedEvent(r: DbRow & { raw: string }): { raw: string; withheld: string | null } {
  const problem = storedEventProblem(r.raw);
  if (!problem) return { raw: r.raw, withheld: null };
  const note = `${problem}: cached before MediaDesk refused such events, it is not written; these are its indexed fields`;
  const some = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null));
  const stub = some({
    event_id: r.event_id,
    date: new Date(r.ts).toISOString(),
    category: r.category,
    action: some({
      event_type: r.event_type,
      verb: r.verb,
      status: r.status,
      resource_id: r.resource_id,
      request_id: r.request_id,
      correlation_id: r.correlation_id,
    }),
    member: some({ type: r.member_type, user_id: r.member_id, email: r.member_email || null }),
    withheld: note,
  });
  return { raw: JSON.stringify(stub), withheld: problem };
}

/** One event as a CSV record in CSV_COLUMNS order: the same shape the CSV import reads back. */
export function csvRecord(event: Record<string, unknown>): string {
  return CSV_COLUMNS.map((c) => csvCell(valueAt(event, c), JSON_COLUMNS.has(c))).join(',') + '\r\n';
}

/**
 * Writes the filtered view to `path`. It reads through its own read-only connection (a WAL
 * snapshot), so the export neither blocks the viewer's queries nor sees rows a sync adds meanwhile,
 * and writes to a temporary name first so a half-written export never looks finished.
 */
export async function exportEvents(
  dbPath: string,
  opts: { format: 'csv' | 'ndjson'; path: string; filters: AuditFilters; sort: AuditSort },
): Promise<{ path: string; rows: number }> {
  // The suggested file is in the output folder, which may not exist yet (and a browser cannot make it).
  await mkdir(dirname(opts.path), { recursive: true });
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  const tmp = `${opts.path}.partial-${process.pid}`;
  const out = createWriteStream(tmp, { encoding: 'utf8' });
  const failed = new Promise<never>((_, reject) => out.once('error', reject));
  failed.catch(() => {});
  let rows = 0;
  try {
    const write = async (s: string) => {
      if (!out.write(s)) await Promise.race([once(out, 'drain'), failed]);
    };
    if (opts.format === 'csv') await write(CSV_COLUMNS.join(',') + '\r\n');
    let buf = '';
    for (const r of iterateEvents(db, opts.filters, opts.sort)) {
      const { raw } = servedEvent(r);
      buf += opts.format === 'ndjson' ? ndjsonLine(raw) : csvRecord(JSON.parse(raw) as Record<string, unknown>);
      rows++;
      if (buf.length > 256 * 1024) {
        await write(buf);
        buf = '';
      }
    }
    if (buf) await write(buf);
    out.end();
    await Promise.race([once(out, 'finish'), failed]);
    await rename(tmp, opts.path);
    return { path: opts.path, rows };
  } catch (err) {
    out.destroy();
    await rm(tmp, { force: true });
    throw err;
  } finally {
    db.close();
  }
}
