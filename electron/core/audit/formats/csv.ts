import { MAX_ITEM_CHARS, type Emit, type FormatParser } from './parsed.ts';

const QUOTE = 0x22,
  COMMA = 0x2c,
  CR = 0x0d,
  NL = 0x0a;

/**
 * The CSV columns of an audit event, in export order: the flattened field paths of api-spec's
 * event, with the free-key objects JSON-encoded in one cell each. Import reads the same header.
 */
export const CSV_COLUMNS = [
  'event_id',
  'date',
  'category',
  'action.event_type',
  'action.verb',
  'action.status',
  'action.resource_id',
  'action.request_id',
  'action.correlation_id',
  'action.duration_ms',
  'action.project_name',
  'action.folder_name',
  'action.data',
  'action.old_state',
  'action.new_state',
  'action.context',
  'member.type',
  'member.user_id',
  'member.email',
  'source.project',
  'source.platform',
  'source.referer',
] as const;

/**
 * A cell starting with `=+-@`, a tab or a CR would run as a formula on the admin's machine (any member
 * can name a project `=HYPERLINK(...)`): the export adds one leading apostrophe and the import takes
 * one off, apostrophes already there included, so every value comes back as it was.
 */
const FORMULA_START = /^'*[=+\-@\t\r]/;
const FORMULA_ESCAPED = /^'+[=+\-@\t\r]/;
export const escapeFormula = (cell: string): string => (FORMULA_START.test(cell) ? `'${cell}` : cell);
export const unescapeFormula = (cell: string): string => (FORMULA_ESCAPED.test(cell) ? cell.slice(1) : cell);

const JSON_CELLS = new Set(['action.data', 'action.old_state', 'action.new_state', 'action.context']);
const NUMBER_CELLS = new Set(['member.user_id', 'action.duration_ms']);
const ACTION_FIELDS = new Set(CSV_COLUMNS.filter((c) => c.startsWith('action.')).map((c) => c.slice(7)));
/** Short names other tools export (`event_type`, `user_id`, `email`...). */
const ALIASES: Record<string, string> = {
  member_id: 'member.user_id',
  user_id: 'member.user_id',
  email: 'member.email',
  member_email: 'member.email',
  member_type: 'member.type',
  platform: 'source.platform',
  referer: 'source.referer',
  project: 'source.project',
};
/**
 * An empty cell is no value and `""` an empty text, as PostgreSQL's CSV COPY reads them and our export
 * writes them. A JSON or number cell has no empty text, so `""` there is no value too, and a file that
 * quotes every cell still imports; elsewhere the cache takes "" as no value (a required id included).
 */
const TEXT_CAN_BE_EMPTY = (path: string) => !JSON_CELLS.has(path) && !NUMBER_CELLS.has(path);
const FORBIDDEN_SEGMENTS = new Set(['__proto__', 'prototype', 'constructor']);

/** Header name to a field path; null when the column means nothing to an event. */
export function columnPath(name: string): string | null {
  const n = name.trim().toLowerCase();
  if (!n || n.split('.').some((s) => !s || FORBIDDEN_SEGMENTS.has(s))) return null;
  if ((CSV_COLUMNS as readonly string[]).includes(n)) return n;
  if (ALIASES[n]) return ALIASES[n];
  if (ACTION_FIELDS.has(n)) return `action.${n}`;
  // A flattened payload key: action.data.group_id, data.folder_reference, new_state.role...
  const m = /^(?:action\.)?(data|old_state|new_state|context)\.([a-z0-9_]+)$/.exec(n);
  return m ? `action.${m[1]}.${m[2]}` : null;
}

type Obj = Record<string, unknown>;

function setPath(target: Obj, path: string, value: unknown): void {
  const segs = path.split('.');
  let node = target;
  for (const s of segs.slice(0, -1)) {
    const next = node[s];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[s] = {};
    node = node[s] as Obj;
  }
  node[segs[segs.length - 1]] = value;
}

/** RFC 4180 records, quoted fields with embedded commas, quotes and newlines; then header mapping. */
export class CsvParser implements FormatParser {
  private fields: string[] = [];
  /** Whether each of `fields` was quoted: `""` is an empty text, an empty unquoted cell no value. */
  private quoted: boolean[] = [];
  private field = '';
  private fieldQuoted = false;
  private inQuotes = false;
  /** Just saw a quote inside a quoted field: either an escaped quote or the field's end. */
  private quotePending = false;
  private afterQuote = false;
  private line = 1;
  private recordLine = 1;
  private recordLen = 0;
  private oversize = false;
  private record = 0;
  private header: (string | null)[] | null = null;
  private failed = false;
  private sawCr = false;
  /** The field separator: a comma, or what an Excel `sep=;` first line names. */
  private delimiter = COMMA;
  private sawSep = false;

  feed(chunk: string, emit: Emit): void {
    if (this.failed) return;
    let start = 0;
    const n = chunk.length;
    for (let i = 0; i < n; i++) {
      const c = chunk.charCodeAt(i);
      if (this.sawCr) {
        this.sawCr = false;
        if (c === NL) {
          start = i + 1;
          continue;
        }
      }
      if (this.inQuotes) {
        if (this.quotePending) {
          this.quotePending = false;
          if (c === QUOTE) {
            // "" is one literal quote.
            this.field += '"';
            start = i + 1;
            continue;
          }
          this.inQuotes = false;
          this.afterQuote = true;
          // fall through: c ends the field or is stray text after the closing quote
        } else {
          if (c === QUOTE) {
            this.field += chunk.slice(start, i);
            start = i + 1;
            this.quotePending = true;
          } else if (c === NL) this.line++;
          continue;
        }
      }
      if (c === this.delimiter) {
        this.pushField(chunk.slice(start, i));
        start = i + 1;
      } else if (c === NL || c === CR) {
        this.pushField(chunk.slice(start, i));
        this.endRecord(emit, false);
        this.line++;
        this.recordLine = this.line;
        if (c === CR) this.sawCr = true;
        start = i + 1;
      } else if (c === QUOTE && this.field === '' && start === i && !this.afterQuote) {
        this.inQuotes = true;
        this.fieldQuoted = true;
        start = i + 1;
      }
      // Anything else is plain field text (a stray quote mid-field is kept as text, as Excel does).
    }
    if (!this.oversize) this.field += chunk.slice(start);
    if (!this.oversize && this.recordLen + this.field.length > MAX_ITEM_CHARS) {
      this.oversize = true;
      this.field = '';
      this.fields = [];
      this.quoted = [];
    }
  }

  end(emit: Emit): void {
    if (this.failed) return;
    if (this.inQuotes && !this.quotePending) {
      emit({
        kind: 'fatal',
        line: this.recordLine,
        reason: `file ends inside a quoted field of the row starting at line ${this.recordLine}: the file looks truncated; the rows before it were read`,
      });
      return;
    }
    this.inQuotes = false;
    if (this.fields.length > 0 || this.field !== '') {
      this.pushField('');
      this.endRecord(emit, true);
    }
    if (!this.header) emit({ kind: 'warning', message: 'the file is empty (no header row)' });
  }

  private pushField(tail: string): void {
    const value = this.oversize ? '' : this.field + tail;
    this.recordLen += value.length;
    this.fields.push(value);
    this.quoted.push(this.fieldQuoted);
    this.field = '';
    this.fieldQuoted = false;
    this.afterQuote = false;
  }

  private endRecord(emit: Emit, last: boolean): void {
    // Stopped by a bad header: the rows after it are not read (they were, later in the same chunk).
    if (this.failed) return;
    const fields = this.fields;
    const quoted = this.quoted;
    this.fields = [];
    this.quoted = [];
    const oversize = this.oversize;
    this.oversize = false;
    this.recordLen = 0;
    if (fields.length === 1 && fields[0] === '') return; // blank line
    if (!this.header) {
      // Excel's first line `sep=;` names the separator of the rest; it is no header.
      const sep = this.record === 0 && !this.sawSep && /^\ufeff?sep=([^"\r\n])$/i.exec(fields.join(','));
      if (sep) {
        this.sawSep = true;
        this.delimiter = sep[1].charCodeAt(0);
        return;
      }
      this.readHeader(fields, emit);
      return;
    }
    const item = ++this.record;
    const line = this.recordLine;
    if (oversize) {
      emit({ kind: 'reject', line, item, reason: `row is larger than ${MAX_ITEM_CHARS} characters` });
      return;
    }
    if (fields.length !== this.header.length) {
      const reason = `row ${item} has ${fields.length} fields, the header has ${this.header.length}`;
      if (last && fields.length < this.header.length)
        emit({
          kind: 'fatal',
          line,
          reason: `${reason}: the file ends mid-row and looks truncated; the rows before it were read`,
        });
      else emit({ kind: 'reject', line, item, reason });
      return;
    }
    const event: Obj = {};
    for (let k = 0; k < fields.length; k++) {
      const path = this.header[k];
      const cell = unescapeFormula(fields[k]);
      if (!path || (cell === '' && !(quoted[k] && TEXT_CAN_BE_EMPTY(path)))) continue;
      let value: unknown = cell;
      if (JSON_CELLS.has(path)) {
        try {
          value = JSON.parse(cell);
        } catch {
          emit({ kind: 'reject', line, item, reason: `${path} is not valid JSON` });
          return;
        }
      } else if (NUMBER_CELLS.has(path) && /^-?\d+(\.\d+)?$/.test(cell.trim())) value = Number(cell);
      setPath(event, path, value);
    }
    emit({ kind: 'item', line, item, value: event });
  }

  private readHeader(fields: string[], emit: Emit): void {
    const paths = fields.map((f, i) => columnPath(i === 0 ? f.replace(/^\ufeff/, '') : f));
    const ignored = fields.filter((_, i) => paths[i] === null);
    const missing = ['event_id', 'date', 'action.event_type'].filter((p) => !paths.includes(p));
    if (missing.length) {
      this.failed = true;
      emit({
        kind: 'fatal',
        line: this.recordLine,
        reason: `the header row lacks ${missing.join(', ')}; expected columns like ${CSV_COLUMNS.slice(0, 5).join(',')},...`,
      });
      return;
    }
    const seen = new Set<string>();
    for (const p of paths) {
      if (p && seen.has(p)) {
        this.failed = true;
        emit({ kind: 'fatal', line: this.recordLine, reason: `the header names ${p} twice` });
        return;
      }
      if (p) seen.add(p);
    }
    if (ignored.length)
      emit({
        kind: 'warning',
        message: `ignored column(s): ${ignored
          .slice(0, 10)
          .map((s) => JSON.stringify(s.slice(0, 40)))
          .join(', ')}`,
      });
    this.header = paths;
  }
}
