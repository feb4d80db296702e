import type { Reply } from '../../core/dispatch.ts';

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
export function readSocketRequest(raw: string): { request: SocketRequest } | { refusal: { id: null } & Reply } {
  let msg: unknown;
  try {
    msg = JSON.parse(raw);
  } catch {
    return refuse('message is not JSON');
  }
  if (!msg || typeof msg !== 'object' || Array.isArray(msg)) return refuse('message must be a JSON object {id, cmd, payload}');
  const { id, cmd, payload } = msg as Record<string, unknown>;
  if (typeof cmd !== 'string' || cmd === '') return refuse('message must name its command in "cmd" (a string)');
  const okId = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
  return { request: { id: okId ? id : null, cmd, payload } };
}

function refuse(message: string): { refusal: { id: null } & Reply } {
  return { refusal: { id: null, ok: false, error: { code: 'invalid', message } } };
}
