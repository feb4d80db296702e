import type { FastifyReply } from 'fastify';

export interface InvalidParam {
  field: string;
  reason: string;
}

export const VALIDATION_MESSAGE = "Your request parameters didn't validate.";

/** The standard error body of the spec: `{message}`. */
export function sendError(
  reply: FastifyReply,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): FastifyReply {
  return reply.code(status).headers(headers).type('application/json').send({ message });
}

/**
 * 400 (apps: 422) as `application/problem+json` in both placements the official description gives,
 * top level (its examples) and under `problem` (its schema), each item with `field` and `name` (the
 * spec and the description differ), so a client reading either reads this.
 */
export function sendInvalid(
  reply: FastifyReply,
  params: readonly InvalidParam[],
  message = VALIDATION_MESSAGE,
  status = 400,
): FastifyReply {
  const invalid_params = params.map((p) => ({ field: p.field, reason: p.reason, name: p.field }));
  return reply
    .code(status)
    .type('application/problem+json')
    .send(JSON.stringify({ message, invalid_params, problem: { message, invalid_params } }));
}

/** Thrown from deep helpers (input decoding) and turned into a 400 by the route. */
export class InvalidParamsError extends Error {
  params: InvalidParam[];
  constructor(params: InvalidParam[]) {
    super(params.map((p) => `${p.field} ${p.reason}`).join('; '));
    this.params = params;
  }
}
