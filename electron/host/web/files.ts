import { rm } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NOT_RECORDED, type Core } from '../../core/index.ts';
import { toErrorData } from '../../core/dispatch.ts';
import type { WebAccess } from './access.ts';

type FileRequest = FastifyRequest<{ Querystring: { token?: string; path?: string } }>;

/** Content-Disposition for a download of `name`: an ASCII fallback, and the real name for browsers that read filename*. */
export function attachmentHeader(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const utf8 = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${utf8}`;
}

/**
 * The files a page may fetch by path, token first: `/media` (what the core's MediaGate allows) and
 * `/download` (what it saved at the person's request). `reply.sendFile` is @fastify/static's (server.ts).
 */
export function serveFiles(app: FastifyInstance, core: Core, access: WebAccess, handOverDir: string): void {
  /** A file a route may send: the token first, then `check` (a gate of the core) picks it; else the refusal is sent and null returned. */
  const gatedFile = (req: FileRequest, reply: FastifyReply, check: (path: string) => string): string | null => {
    if (!access.holdsToken(req.query.token)) {
      reply.code(401).send({ message: 'missing or wrong token' });
      return null;
    }
    try {
      return check(String(req.query.path ?? ''));
    } catch (err) {
      const e = toErrorData(err);
      reply.code(e.code === 'not_found' ? 404 : 403).send({ message: e.message });
      return null;
    }
  };
  // Local media for <img>/<video>: the token rides in the query (tags cannot send headers), the
  // core's MediaGate decides which files, and @fastify/static answers Range requests for video.
  app.get('/media', async (req: FileRequest, reply) => {
    const abs = gatedFile(req, reply, (p) => core.media.check(p));
    if (abs === null) return reply;
    reply.header('cache-control', 'private, max-age=60');
    return reply.sendFile(basename(abs), dirname(abs));
  });

  app.get('/download', async (req: FileRequest, reply) => {
    const abs = gatedFile(req, reply, (p) => downloadable(core, p));
    if (abs === null) return reply;
    reply.header('cache-control', 'no-store');
    reply.header('content-disposition', attachmentHeader(basename(abs)));
    // Downloaded whole: the host keeps no copy (an answer to HEAD, or one cut short, leaves it for another try).
    if (req.method === 'GET' && dirname(abs) === handOverDir)
      reply.raw.once('finish', () => {
        // Its folder replaced meanwhile (ENOTDIR), the file is left: said in the log, never thrown.
        if (reply.statusCode === 200)
          rm(abs, { force: true }).catch((err: Error) =>
            core.log.warn(`download: could not remove ${abs}: ${err.message}`),
          );
      });
    return reply.sendFile(basename(abs), dirname(abs), { cacheControl: false });
  });
}

/**
 * A file the core saved at the person's request (an export, a saved creation) as a browser
 * download: the host's disk may not be the person's. Only those files (SavedFiles), and results
 * MediaDesk wrote (core.draggable), which a gallery tile dragged out of the tab downloads.
 */
function downloadable(core: Core, path: string): string {
  try {
    return core.savedFiles.check(path);
  } catch (notSaved) {
    try {
      return core.draggable(path);
    } catch (notResult) {
      // A file in a results folder that no job recorded is told as such; anything else as not saved.
      throw toErrorData(notResult).invalid?.[0]?.reason === NOT_RECORDED ? notResult : notSaved;
    }
  }
}

/**
 * What a 404 says, never the query (it holds the token): Fastify's own repeats the whole URL. A file
 * /media or /download let through and gone by the time it was sent (deleted meanwhile) is said as
 * the gate says it.
 */
export function answerNotFound(app: FastifyInstance): void {
  app.setNotFoundHandler((req: FileRequest, reply) => {
    // Split by hand: a hostile path such as /\ is no URL at all, and the query alone holds `path`.
    const pathname = req.url.split('?')[0];
    const path = req.query.path;
    const message =
      typeof path === 'string' && path && ['/media', '/download'].includes(pathname)
        ? `${resolve(path)} does not exist`
        : `${req.method} ${pathname} not found`;
    return reply.code(404).send({ message });
  });
}
