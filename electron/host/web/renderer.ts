import { existsSync, realpathSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import type { FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import type { TokenRequest, WebAccess } from './access.ts';

/** The built renderer: its files, and `/` (index.html) for a tab holding the token, which it then keeps in a cookie. */
export async function serveRenderer(app: FastifyInstance, rendererDir: string, access: WebAccess): Promise<void> {
  const hasRenderer = existsSync(resolve(rendererDir, 'index.html'));
  if (hasRenderer) {
    // The built files only, each a route of its own (no listing, no `..`). Links are followed
    // when the routes are listed, so a link in the folder must not lead out of it.
    const realRenderer = realpathSync(rendererDir);
    const insideRenderer = (path: string) => {
      try {
        return realpathSync(join(rendererDir, path)).startsWith(realRenderer + sep);
      } catch {
        return false;
      }
    };
    await app.register(fastifyStatic, {
      root: rendererDir,
      index: false,
      wildcard: false,
      serve: true,
      prefix: '/',
      decorateReply: false,
      allowedPath: insideRenderer,
    });
  }
  app.get('/', async (req: TokenRequest, reply) => {
    // The address holds the token: the browser's cache must not keep it.
    reply.header('cache-control', 'no-store');
    if (!access.authorized(req)) {
      return reply
        .code(401)
        .type('text/plain')
        .send(
          'MediaDesk: open the URL the web host printed when it started (npm run web); it carries the access token.\n',
        );
    }
    if (access.holdsToken(req.query.token)) {
      reply.header('set-cookie', `${access.cookieName()}=${access.token}; HttpOnly; SameSite=Strict; Path=/`);
    }
    if (!hasRenderer)
      return reply
        .code(503)
        .type('text/plain')
        .send(`MediaDesk: the renderer is not built (${rendererDir}); run npm run build.\n`);
    return reply.sendFile('index.html', rendererDir, { cacheControl: false });
  });
}
