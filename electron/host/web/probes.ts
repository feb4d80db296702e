import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HOST_APP, HOST_PROOF_PATH, hostProof, NONCE_PATTERN } from '../../../shared/host-proof.ts';
import { EVENTS } from '../../../shared/contract/index.ts';

/** The routes that answer without the token: `/hello` (proof of holding it) and `/healthz` (this launch's id). */
export function serveProbes(app: FastifyInstance, token: string, launch: string): void {
  // Asked by a tab before it sends its token (shared/host-proof.ts): no token here, only the proof of holding it.
  app.get(HOST_PROOF_PATH, async (req: FastifyRequest<{ Querystring: { nonce?: string } }>, reply) => {
    const nonce = String(req.query.nonce ?? '');
    if (!NONCE_PATTERN.test(nonce)) return reply.code(400).send({ message: 'nonce must be 32 to 128 hex digits' });
    reply.header('cache-control', 'no-store');
    return { app: HOST_APP, proof: await hostProof(token, nonce) };
  });

  app.get('/healthz', async () => ({ ok: true, events: Object.keys(EVENTS).length, launch }));
}
