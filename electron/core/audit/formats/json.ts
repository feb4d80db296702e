import { MAX_ITEM_CHARS, jsonError, pageItems, type Emit, type FormatParser } from './parsed.ts';

const LBRACE = 0x7b,
  RBRACE = 0x7d,
  LBRACK = 0x5b,
  RBRACK = 0x5d,
  QUOTE = 0x22,
  BSLASH = 0x5c,
  COMMA = 0x2c,
  COLON = 0x3a,
  NL = 0x0a;
const isSpace = (c: number) => c === 0x20 || c === NL || c === 0x0d || c === 0x09 || c === 0xfeff;

/**
 * An incremental scanner of exported JSON holding one item at most: items are the elements of a
 * top-level array or of an API page's `data` (pages may follow one another; an object without `data`
 * is one event). It tracks nesting and strings only, and hands each item's text to JSON.parse.
 */
export class JsonItemsParser implements FormatParser {
  private readonly stack: number[] = [];
  private inString = false;
  private escape = false;
  private line = 1;
  private item = 0;
  private roots = 0;

  /** Depth (stack length) at which items live while inside an items array; -1 outside. */
  private itemDepth = -1;
  /** Capture of the current item: text parts and where in the current chunk it continues. */
  private capturing = false;
  private primitive = false;
  private parts: string[] = [];
  private partsLen = 0;
  private from = 0;
  private oversize = false;
  private captureLine = 0;

  /** Root object: key tracking at depth 1 to find `data`, and a capture of the whole root in case it is an event. */
  private rootIsObject = false;
  private expectKey = false;
  private keyChars: number[] | null = null;
  private lastKey = '';
  private sawData = false;

  private failed = false;

  feed(chunk: string, emit: Emit): void {
    if (this.failed) return;
    this.from = 0;
    const n = chunk.length;
    for (let i = 0; i < n; i++) {
      const c = chunk.charCodeAt(i);
      if (this.inString) {
        if (this.escape) this.escape = false;
        else if (c === BSLASH) this.escape = true;
        else if (c === QUOTE) {
          this.inString = false;
          if (this.keyChars) {
            this.lastKey = String.fromCharCode(...this.keyChars);
            this.keyChars = null;
          }
        } else if (this.keyChars && this.keyChars.length < 64) this.keyChars.push(c);
        if (c === NL) this.line++;
        continue;
      }
      if (isSpace(c)) {
        if (c === NL) this.line++;
        continue;
      }
      const depth = this.stack.length;
      if (this.capturing && this.primitive && depth === this.itemDepth && (c === COMMA || c === RBRACK)) {
        this.endCapture(chunk, i, emit);
      }
      switch (c) {
        case QUOTE:
          this.inString = true;
          if (depth === this.itemDepth && !this.capturing) this.startCapture(i, true);
          else if (this.rootIsObject && depth === 1 && this.expectKey) this.keyChars = [];
          break;
        case LBRACE:
        case LBRACK:
          if (depth === 0) this.startRoot(c, i);
          else if (depth === this.itemDepth && !this.capturing) this.startCapture(i, false);
          this.stack.push(c);
          if (this.rootIsObject && depth === 1) {
            if (c === LBRACK && this.lastKey === 'data' && !this.sawData) {
              // Entering the page's events: the root capture (single-event case) is no longer needed.
              this.sawData = true;
              this.dropCapture();
              this.itemDepth = 2;
            }
          } else if (depth === 0 && c === LBRACE) {
            this.expectKey = true;
          }
          break;
        case RBRACE:
        case RBRACK: {
          const open = this.stack.pop();
          if (open === undefined || (open === LBRACE) !== (c === RBRACE)) {
            this.fail(
              emit,
              open === undefined
                ? `unexpected "${String.fromCharCode(c)}" outside any value`
                : `"${String.fromCharCode(open)}" closed by "${String.fromCharCode(c)}": the JSON structure is broken`,
            );
            return;
          }
          const now = this.stack.length;
          if (this.capturing && !this.primitive && now === this.itemDepth) this.endCapture(chunk, i + 1, emit);
          else if (this.capturing && now === 0 && this.rootIsObject) this.endCapture(chunk, i + 1, emit);
          if (c === RBRACK && now === this.itemDepth - 1) this.itemDepth = -1;
          if (now === 0) {
            this.rootIsObject = false;
            this.itemDepth = -1;
          }
          break;
        }
        case COMMA:
          if (this.rootIsObject && depth === 1) this.expectKey = true;
          break;
        case COLON:
          if (this.rootIsObject && depth === 1) this.expectKey = false;
          break;
        default:
          if (depth === 0) {
            this.fail(emit, `expected a JSON array or object, found "${chunk.slice(i, i + 20).replace(/\s+/g, ' ')}"`);
            return;
          }
          if (depth === this.itemDepth && !this.capturing) this.startCapture(i, true);
      }
    }
    if (this.capturing && !this.oversize) this.keep(chunk.slice(this.from));
  }

  end(emit: Emit): void {
    if (this.failed) return;
    if (this.stack.length > 0 || this.inString) {
      const where =
        this.capturing && this.itemDepth > 0
          ? `inside item ${this.item + 1} (line ${this.captureLine})`
          : `at line ${this.line} with ${this.stack.length} unclosed bracket(s)`;
      emit({
        kind: 'fatal',
        line: this.line,
        reason: `file ends ${where}: the file looks truncated; the ${this.item} item(s) before it were read`,
      });
    } else if (this.roots === 0) {
      emit({ kind: 'warning', message: 'the file holds no JSON value' });
    }
  }

  private startRoot(c: number, i: number): void {
    this.roots++;
    this.rootIsObject = c === LBRACE;
    this.sawData = false;
    this.lastKey = '';
    if (c === LBRACK) this.itemDepth = 1;
    else this.startCapture(i, false);
  }

  private startCapture(i: number, primitive: boolean): void {
    this.capturing = true;
    this.primitive = primitive;
    this.parts = [];
    this.partsLen = 0;
    this.from = i;
    this.oversize = false;
    this.captureLine = this.line;
  }

  private dropCapture(): void {
    this.capturing = false;
    this.parts = [];
    this.partsLen = 0;
  }

  private keep(s: string): void {
    this.partsLen += s.length;
    if (this.partsLen > MAX_ITEM_CHARS) {
      this.oversize = true;
      this.parts = [];
    } else this.parts.push(s);
  }

  private endCapture(chunk: string, end: number, emit: Emit): void {
    if (!this.oversize) this.keep(chunk.slice(this.from, end));
    const line = this.captureLine;
    const text = this.parts.join('');
    const oversize = this.oversize;
    this.dropCapture();
    if (oversize) {
      emit({ kind: 'reject', line, item: ++this.item, reason: `item is larger than ${MAX_ITEM_CHARS} characters` });
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      emit({ kind: 'reject', line, item: ++this.item, reason: jsonError(err) });
      return;
    }
    const items = pageItems(value);
    if (items) for (const v of items) emit({ kind: 'item', line, item: ++this.item, value: v });
    else emit({ kind: 'item', line, item: ++this.item, value, text });
  }

  private fail(emit: Emit, reason: string): void {
    this.failed = true;
    emit({
      kind: 'fatal',
      line: this.line,
      reason: `line ${this.line}: ${reason}; the ${this.item} item(s) before it were read`,
    });
  }
}
