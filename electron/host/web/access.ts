import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

export type TokenRequest = FastifyRequest<{ Querystring: { token?: string } }>;

/** Who may reach the host: its Host header, its token (in the query or the cookie), checked in constant time. */
export interface WebAccess {
  readonly token: string;
  /** Whether a request's Host header names this host (127.0.0.1 or localhost, its port). */
  hostAllowed(host: string | undefined): boolean;
  /** The token cookie's name: the port is in it since cookies ignore ports. */
  cookieName(): string;
  /** Whether `given` is the token. */
  holdsToken(given: unknown): boolean;
  /** Whether a request carries the token, in its query or else in the cookie. */
  authorized(req: TokenRequest): boolean;
}

function sameToken(given: unknown, token: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The value of cookie `name` in a Cookie header, or undefined. */
function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The access rules of a host holding `token`, whose origin is known once it listens. */
export function webAccess(token: string, origin: () => string): WebAccess {
  const port = () => new URL(origin()).port;
  // A reload after the page drops ?token= asks for `/` with the cookie instead. The port is in its
  // name since cookies ignore ports; HttpOnly keeps it from scripts, SameSite=Strict from other sites.
  const cookieName = () => `mediadesk-token-${port()}`;
  return {
    token,
    hostAllowed: (host) => host === `127.0.0.1:${port()}` || host === `localhost:${port()}`,
    cookieName,
    holdsToken: (given) => sameToken(given, token),
    // A token in the query decides alone: a tab holding a token since replaced (--new-token) must
    // hear 401 (and say so) even when another tab has since set the new cookie.
    authorized: (req) =>
      req.query.token !== undefined
        ? sameToken(req.query.token, token)
        : sameToken(readCookie(req.headers.cookie, cookieName()), token),
  };
}
