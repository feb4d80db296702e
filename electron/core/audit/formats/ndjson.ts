import { MAX_ITEM_CHARS, jsonError, pageItems, type Emit, type FormatParser } from './parsed.ts';

const CR = 0x0d;
const LF = 0x0a;

/** One JSON value per line: an event, or an API page whose `data` events all count as items. */
export class NdjsonParser implements FormatParser {
  private carry = '';
  private oversize = false;
  private line = 0;
  private item = 0;
  /** The last line ended with a CR: a LF right after it belongs to that end (CRLF), not to a line of its own. */
  private sawCr = false;

  feed(chunk: string, emit: Emit): void {
    let start = 0;
    if (this.sawCr && chunk.startsWith('\n')) start = 1;
    this.sawCr = false;
    // A line ends at LF, CRLF or a lone CR (old Mac files): JSON never holds a raw CR or LF.
    // Each found once per chunk (native search), not a scan per line.
    let lf = chunk.indexOf('\n', start);
    let cr = chunk.indexOf('\r', start);
    for (;;) {
      if (lf >= 0 && lf < start) lf = chunk.indexOf('\n', start);
      if (cr >= 0 && cr < start) cr = chunk.indexOf('\r', start);
      const nl = cr < 0 || lf < 0 ? Math.max(lf, cr) : Math.min(lf, cr);
      if (nl < 0) {
        if (!this.oversize) {
          this.carry += chunk.slice(start);
          if (this.carry.length > MAX_ITEM_CHARS) {
            this.oversize = true;
            this.carry = '';
          }
        }
        return;
      }
      this.line++;
      if (this.oversize) {
        this.item++;
        emit({
          kind: 'reject',
          line: this.line,
          item: this.item,
          reason: `line is longer than ${MAX_ITEM_CHARS} characters`,
        });
        this.oversize = false;
      } else {
        const text = this.carry ? this.carry + chunk.slice(start, nl) : chunk.slice(start, nl);
        this.carry = '';
        this.handle(text, emit, false);
      }
      start = nl + 1;
      if (chunk.charCodeAt(nl) === CR) {
        if (start === chunk.length) this.sawCr = true;
        else if (chunk.charCodeAt(start) === LF) start++;
      }
    }
  }

  end(emit: Emit): void {
    if (this.oversize) {
      this.line++;
      emit({
        kind: 'fatal',
        line: this.line,
        reason: `file ends inside a line longer than ${MAX_ITEM_CHARS} characters (truncated?)`,
      });
    } else if (this.carry.trim()) {
      this.line++;
      this.handle(this.carry, emit, true);
    }
    this.carry = '';
  }

  /** A last line without its newline is fine when it parses; when it does not, the file was cut. */
  private handle(raw: string, emit: Emit, last: boolean): void {
    const text = raw.trim();
    if (!text) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      if (last) {
        emit({
          kind: 'fatal',
          line: this.line,
          reason: `file ends mid-line: line ${this.line} is incomplete (${jsonError(err)}); the file looks truncated`,
        });
        return;
      }
      this.item++;
      emit({ kind: 'reject', line: this.line, item: this.item, reason: jsonError(err) });
      return;
    }
    const items = pageItems(value);
    if (items) {
      for (const v of items) emit({ kind: 'item', line: this.line, item: ++this.item, value: v });
    } else {
      emit({ kind: 'item', line: this.line, item: ++this.item, value, text });
    }
  }
}
