import { MAX_REPLY_BYTES, MAX_REPLY_DEPTH, replyProblem, unsendable, type Reply } from '../../core/dispatch.ts';

/** One request over the web host's socket, as the renderer's bridge sends it. */
export interface SocketRequest {
  id: string | number | null;
  cmd: string;
  payload: unknown;
}

/**
 * Reads a socket message into a request, or the reply that refuses it. Anything JSON may arrive
 * (`null`, a number, an array): reading `.cmd` off it unchecked threw outside the dispatcher,
 * and the unhandled rejection ended the whole host.
 */
export function readSocketRequest(
  raw: string | Buffer,
): { request: SocketRequest } | { refusal: { id: SocketRequest['id'] } & Reply } {
  // Before parsing: 16 MB of nesting parsed became some 35 MB of objects a frame, which the host kept.
  if (nestsDeeper(raw, MAX_MESSAGE_DEPTH))
    return refuse(`message is nested deeper than ${MAX_MESSAGE_DEPTH} levels`, leadingId(raw));
  let msg: unknown;
  try {
    msg = JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8'));
  } catch {
    return refuse('message is not JSON');
  }
  if (!msg || typeof msg !== 'object' || Array.isArray(msg))
    return refuse('message must be a JSON object {id, cmd, payload}');
  const { id, cmd, payload } = msg as Record<string, unknown>;
  if (typeof cmd !== 'string' || cmd === '') return refuse('message must name its command in "cmd" (a string)');
  const okId = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
  return { request: { id: okId ? id : null, cmd, payload } };
}

/** How deep a message may nest: as deep as a reply may (a command's payload is far shallower). */
export const MAX_MESSAGE_DEPTH = MAX_REPLY_DEPTH;

const OPEN = new Set([0x5b, 0x7b]);
const CLOSE = new Set([0x5d, 0x7d]);

/** Whether JSON text opens more than `max` arrays and objects at once, read as bytes (strings skipped). */
export function nestsDeeper(raw: string | Buffer, max: number): boolean {
  const bytes = typeof raw === 'string' ? Buffer.from(raw) : raw;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (inString) {
      if (b === 0x5c) i++;
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (OPEN.has(b)) {
      if (++depth > max) return true;
    } else if (CLOSE.has(b)) depth--;
  }
  return false;
}

function refuse(message: string, id: SocketRequest['id'] = null): { refusal: { id: SocketRequest['id'] } & Reply } {
  return { refusal: { id, ok: false, error: { code: 'invalid', message } } };
}

// `{"id":7,` or `{"id":"a1",` as the page's bridge starts each message: read without parsing the rest.
const LEADING_ID = /^\s*\{\s*"id"\s*:\s*(-?\d{1,15}(?:\.\d{1,15})?|"(?:[^"\\\u0000-\u001f]|\\.){0,200}")\s*[,}]/;

/** The id a message opens with, so that a refusal before parsing still answers it; null when it has none there. */
function leadingId(raw: string | Buffer): SocketRequest['id'] {
  const head = typeof raw === 'string' ? raw.slice(0, 512) : raw.subarray(0, 512).toString('utf8');
  const m = LEADING_ID.exec(head);
  if (!m) return null;
  try {
    const id = JSON.parse(m[1]) as unknown;
    return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
  } catch {
    return null;
  }
}

/**
 * The text sent for `cmd`'s reply, the last step before the socket and outside any handler's try:
 * should JSON.stringify throw or give more than a reply may hold, the answer is an error naming the
 * command, never an exception that ends the host.
 */
export function replyText(id: SocketRequest['id'], cmd: string, reply: Reply): string {
  let why: string;
  try {
    const text = JSON.stringify({ id, ...reply });
    if (text.length <= MAX_REPLY_BYTES) return text;
    why = `is larger than ${MAX_REPLY_BYTES / 1024 / 1024} MB`;
  } catch (err) {
    why =
      replyProblem(reply) ??
      `could not be written as JSON (${err instanceof Error ? err.message.slice(0, 200) : 'unknown error'})`;
  }
  return JSON.stringify({ id, ...unsendable(cmd, why) });
}

/** An event's text for the socket, or null when it cannot be written (then it is not sent). */
export function eventText(event: string, payload: unknown): string | null {
  try {
    return replyProblem(payload) ? null : JSON.stringify({ event, payload });
  } catch {
    return null;
  }
}
