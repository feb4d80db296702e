import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { WebAccess } from './access.ts';

/** Content-Security-Policy of the served renderer: nothing but our own origin and its socket. */
export function webCsp(origin: string): string {
  const ws = origin.replace(/^http/, 'ws');
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "media-src 'self' blob:",
    `connect-src 'self' ${ws}`,
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "form-action 'none'",
  ].join('; ');
}

/** The headers every answer carries: the CSP, and no sniffing, referrer or embedding by another site. */
export function addSecurityHeaders(app: FastifyInstance, origin: () => string): void {
  app.addHook('onSend', async (_req, reply, payload) => {
    reply.header('content-security-policy', webCsp(origin()));
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    // frame-ancestors for browsers that predate it; and no other site may embed what we serve.
    reply.header('x-frame-options', 'DENY');
    reply.header('cross-origin-resource-policy', 'same-origin');
    return payload;
  });
}

/**
 * DNS rebinding: a page on another site that resolves its name to 127.0.0.1 still sends its own Host.
 * Added after the socket plugin: its own onRequest hook marks an upgrade, so that the socket of
 * a refused one is ended (before it, a refused upgrade was left open, and host.close() waited on it).
 */
export function refuseForeignHosts(app: FastifyInstance, access: WebAccess): void {
  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    if (!access.hostAllowed(String(req.headers.host))) return reply.code(421).send({ message: 'wrong host' });
  });
}
