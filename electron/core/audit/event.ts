/**
 * One audit event (api-spec: "Audit-log event") checked and mapped to the cache's columns. The
 * same function serves sync and every import format, so a row means the same thing wherever it
 * came from.
 */

export interface EventRow {
  eventId: string;
  ts: number;
  eventType: string;
  memberEmail: string;
  memberId: number | null;
  memberType: string | null;
  verb: string | null;
  status: string | null;
  category: string | null;
  groupId: number | null;
  folderRef: string | null;
  projectRef: string | null;
  requestId: string | null;
  correlationId: string | null;
  resourceId: string | null;
  raw: string;
  /** What the FTS index holds for this event. */
  text: string;
  /** The event's names a person searches by a part of (search.ts): event type, e-mail, project and folder names. */
  names: string[];
}

export type Checked = { ok: true; row: EventRow } | { ok: false; reason: string };

const MAX_ID = 512;
/** Payload nesting allowed: real payloads are flat; hostile nesting is rejected before it can blow a stack. */
const MAX_DEPTH = 16;
const MAX_TEXT = 64 * 1024;
/** Longest value kept as a search name (search.ts); migration 8 keeps the same bound. */
export const MAX_NAME = 200;
/**
 * Nesting allowed in a whole event (the event is level 1, `action.data` level 3); deeper is refused
 * at import and sync, since a field 5,000 levels deep overflowed the stack of whatever serialised
 * the event again (the web host's reply, an export).
 */
export const MAX_EVENT_DEPTH = 32;
/**
 * Size allowed for one event as stored (its JSON text, UTF-8). Exported events run 500 to 1,500
 * bytes, but a value may be long (a 100,000-character folder name is shown, scrolling); the
 * parsers' item limit (MAX_ITEM_CHARS, 4 MB) only bounds what they buffer.
 */
export const MAX_EVENT_BYTES = 512 * 1024;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

class Reject extends Error {}

function str(parent: Obj, key: string, where: string, required = false): string | null {
  const v = parent[key];
  if (v === undefined || v === null || v === '') {
    if (required) throw new Reject(`${where}${key} is missing`);
    return null;
  }
  if (typeof v !== 'string') throw new Reject(`${where}${key} must be a string, got ${typeName(v)}`);
  if (v.length > MAX_ID && required) throw new Reject(`${where}${key} is longer than ${MAX_ID} characters`);
  return v;
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  return Array.isArray(v) ? 'array' : typeof v;
}

/** Ids arrive as numbers from the API and as strings from CSV or hand-edited files. */
function intId(v: unknown, where: string): number | null {
  if (v === undefined || v === null || v === '') return null;
  const n = typeof v === 'string' && /^\d{1,15}$/.test(v.trim()) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n))
    throw new Reject(`${where} must be an integer id, got ${JSON.stringify(v).slice(0, 40)}`);
  return n;
}

function optObj(parent: Obj, key: string, where: string): Obj | null {
  const v = parent[key];
  if (v === undefined || v === null) return null;
  if (!isObj(v)) throw new Reject(`${where}${key} must be an object, got ${typeName(v)}`);
  return v;
}

/** Whether a JSON value nests more than `levels` objects or arrays deep; recurses at most `levels + 1` calls. */
function deeperThan(v: unknown, levels: number): boolean {
  if (typeof v !== 'object' || v === null) return false;
  if (levels <= 0) return true;
  if (Array.isArray(v)) {
    for (const x of v) if (deeperThan(x, levels - 1)) return true;
    return false;
  }
  for (const k in v) if (Object.hasOwn(v, k) && deeperThan((v as Obj)[k], levels - 1)) return true;
  return false;
}

/**
 * Whether the JSON text holds at most `levels` opening brackets: then its value cannot nest deeper
 * (each level of nesting opens one; brackets inside strings only count extra). A native search per
 * bracket, so an ordinary event skips the walk over its parsed value.
 */
function fewBrackets(text: string, levels: number): boolean {
  let n = 0;
  for (const bracket of ['{', '[']) {
    for (let i = text.indexOf(bracket); i >= 0; i = text.indexOf(bracket, i + 1)) if (++n > levels) return false;
  }
  return true;
}

/**
 * Why an event's JSON text (as stored, or as read) is beyond the limits of one event, or null. It
 * scans the text without parsing it, so an event stored before the limits, of any depth, is
 * judged without a stack at risk.
 */
export function storedEventProblem(raw: string): string | null {
  // A character is at least one byte: most texts are told apart without counting bytes.
  if (
    raw.length > MAX_EVENT_BYTES ||
    (raw.length * 3 > MAX_EVENT_BYTES && Buffer.byteLength(raw, 'utf8') > MAX_EVENT_BYTES)
  )
    return tooLarge(Buffer.byteLength(raw, 'utf8'));
  let depth = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > MAX_EVENT_DEPTH) return TOO_DEEP;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return null;
}

const TOO_DEEP = `the event is nested deeper than ${MAX_EVENT_DEPTH} levels`;
const tooLarge = (bytes: number) =>
  `the event is ${(bytes / 1024).toFixed(1)} KB, more than the ${MAX_EVENT_BYTES / 1024} KB an event may hold`;

/** JSON.stringify recurses: nesting that JSON.parse accepted can still overflow it. */
function serialize(event: Obj): string {
  try {
    return JSON.stringify(event);
  } catch (err) {
    if (err instanceof RangeError) throw new Reject('the event is nested too deeply to store');
    throw err;
  }
}

/** ISO 8601 with an explicit zone; the spec's dates are UTC date-times. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * Epoch ms of an ISO 8601 date-time with an explicit zone, NaN otherwise. The API's form
 * (2026-03-15T23:59:59.188Z) is read digit by digit, as Date.parse would, since a million-event
 * import parses a million dates; any other form goes through the pattern and Date.parse.
 */
export function isoUtcMs(s: string): number {
  if (
    s.length === 24 &&
    s.charCodeAt(23) === 90 &&
    s.charCodeAt(4) === 45 &&
    s.charCodeAt(7) === 45 &&
    s.charCodeAt(10) === 84 &&
    s.charCodeAt(13) === 58 &&
    s.charCodeAt(16) === 58 &&
    s.charCodeAt(19) === 46
  ) {
    const y = digits(s, 0, 4);
    const mo = digits(s, 5, 2);
    const d = digits(s, 8, 2);
    const h = digits(s, 11, 2);
    const mi = digits(s, 14, 2);
    const sec = digits(s, 17, 2);
    const ms = digits(s, 20, 3);
    if (
      y >= 0 &&
      mo >= 1 &&
      mo <= 12 &&
      d >= 1 &&
      d <= 31 &&
      h >= 0 &&
      h <= 23 &&
      mi >= 0 &&
      mi <= 59 &&
      sec >= 0 &&
      sec <= 59 &&
      ms >= 0
    ) {
      // Date.UTC maps years 0-99 to 1900-1999; an ISO year is the year itself.
      return y >= 100 ? Date.UTC(y, mo - 1, d, h, mi, sec, ms) : new Date(s).getTime();
    }
  }
  return DATE_TIME.test(s) ? Date.parse(s) : NaN;
}

/** The decimal number in s[at, at + n), or -1 when a character is not a digit. */
function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/** The distinct names among `values`; a very long value (a pasted text) is no name. */
function searchNames(values: unknown[]): string[] {
  const out: string[] = [];
  for (const v of values)
    if (typeof v === 'string' && v !== '' && v.length <= MAX_NAME && !out.includes(v)) out.push(v);
  return out;
}

function flattenInto(out: string[], v: unknown, depth: number, budget: { left: number; tooDeep: boolean }): void {
  if (budget.left <= 0 || v === null || v === undefined) return;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') {
    const s = String(v);
    out.push(s);
    budget.left -= s.length + 1;
    return;
  }
  if (depth >= MAX_DEPTH) {
    budget.tooDeep = true;
    return;
  }
  if (Array.isArray(v)) {
    for (const x of v) flattenInto(out, x, depth + 1, budget);
    return;
  }
  if (isObj(v)) {
    for (const k in v) if (Object.hasOwn(v, k)) flattenInto(out, v[k], depth + 1, budget);
  }
}

/**
 * Checks an event and makes its row. Group and folder (the API's filters, offline) are those the
 * payload names, `action.data.group_id` and `.folder_reference` (the actor's group is not in an
 * event); the project is `data.project_reference`, else `source.project`.
 */
export function checkEvent(input: unknown, text?: string): Checked {
  try {
    return { ok: true, row: toRow(input, text) };
  } catch (err) {
    if (err instanceof Reject) return { ok: false, reason: err.message };
    throw err;
  }
}

/** `text` is the event's own JSON text (that `event` was parsed from) when the file had it: stored as is, so it is not re-serialized. */
function toRow(event: unknown, text?: string): EventRow {
  if (!isObj(event)) throw new Reject(`an event must be a JSON object, got ${typeName(event)}`);
  // The whole event, every field: what is stored is served again as it is (the detail drawer, an
  // export, `audit query --json`), so nothing of it may be deeper or larger than those can carry.
  if (text !== undefined) {
    const bytes = text.length > MAX_EVENT_BYTES / 3 ? Buffer.byteLength(text, 'utf8') : text.length;
    if (bytes > MAX_EVENT_BYTES) throw new Reject(tooLarge(bytes));
  }
  if (!(text !== undefined && fewBrackets(text, MAX_EVENT_DEPTH)) && deeperThan(event, MAX_EVENT_DEPTH))
    throw new Reject(TOO_DEEP);
  const eventId = str(event, 'event_id', '', true)!;
  // U+FFFD is what bytes that are not UTF-8 are read as: two such ids would merge into one.
  if (eventId.includes('\ufffd'))
    throw new Reject('event_id holds bytes that are not UTF-8 (read as \ufffd), so it cannot be told from another id');
  const date = str(event, 'date', '', true)!;
  const ts = isoUtcMs(date);
  if (!Number.isFinite(ts)) throw new Reject(`date ${JSON.stringify(date.slice(0, 40))} is not an ISO 8601 date-time`);
  if (!isObj(event.action))
    throw new Reject(
      event.action === undefined ? 'action is missing' : `action must be an object, got ${typeName(event.action)}`,
    );
  const a = event.action;
  const eventType = str(a, 'event_type', 'action.', true)!;
  const member = optObj(event, 'member', '') ?? {};
  const source = optObj(event, 'source', '') ?? {};
  const data = optObj(a, 'data', 'action.') ?? {};
  const oldState = optObj(a, 'old_state', 'action.');
  const newState = optObj(a, 'new_state', 'action.');
  const context = optObj(a, 'context', 'action.');
  if (a.duration_ms !== undefined && a.duration_ms !== null && !Number.isFinite(a.duration_ms))
    throw new Reject('action.duration_ms must be a number');
  const memberEmail = str(member, 'email', 'member.');
  const folderRef = data.folder_reference;
  const projectRef = data.project_reference;

  const row: EventRow = {
    eventId,
    ts,
    eventType,
    memberEmail: memberEmail ?? '',
    memberId: intId(member.user_id, 'member.user_id'),
    memberType: str(member, 'type', 'member.'),
    verb: str(a, 'verb', 'action.'),
    status: str(a, 'status', 'action.'),
    category: str(event, 'category', ''),
    groupId: intId(data.group_id, 'action.data.group_id'),
    folderRef: typeof folderRef === 'string' && folderRef ? folderRef : null,
    projectRef: typeof projectRef === 'string' && projectRef ? projectRef : str(source, 'project', 'source.'),
    requestId: str(a, 'request_id', 'action.'),
    correlationId: str(a, 'correlation_id', 'action.'),
    resourceId: a.resource_id === undefined || a.resource_id === null ? null : String(a.resource_id),
    raw: text ?? serialize(event),
    text: '',
    names: [],
  };
  if (text === undefined && row.raw.length > MAX_EVENT_BYTES / 3) {
    const bytes = Buffer.byteLength(row.raw, 'utf8');
    if (bytes > MAX_EVENT_BYTES) throw new Reject(tooLarge(bytes));
  }

  // Values only: key names would be the same few words in every event and only slow the index.
  const parts: string[] = [
    eventType,
    a.verb,
    a.status,
    event.category,
    memberEmail,
    a.project_name,
    a.folder_name,
    row.resourceId,
    source.platform,
  ].filter((x): x is string => typeof x === 'string' && x !== '');
  const budget = { left: MAX_TEXT, tooDeep: false };
  flattenInto(parts, data, 0, budget);
  flattenInto(parts, oldState, 0, budget);
  flattenInto(parts, newState, 0, budget);
  flattenInto(parts, context, 0, budget);
  if (budget.tooDeep) throw new Reject(`the payload is nested deeper than ${MAX_DEPTH} levels`);
  row.text = parts.join(' ');
  row.names = searchNames([
    eventType,
    memberEmail,
    a.project_name,
    a.folder_name,
    source.project,
    oldState?.name,
    newState?.name,
  ]);
  return row;
}
