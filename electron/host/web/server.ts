import { randomBytes, timingSafeEqual } from 'node:crypto';
import { HOST_APP, HOST_PROOF_PATH, hostProof, NONCE_PATTERN } from '../../../shared/host-proof.ts';
import { createWriteStream, existsSync, realpathSync, type WriteStream } from 'node:fs';
import { lstat, mkdir, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import fastifyStatic from '@fastify/static';
import fastifyWebsocket from '@fastify/websocket';
import { createCore, HAND_OVER, NOT_RECORDED, type Core } from '../../core/index.ts';
import { toErrorData } from '../../core/dispatch.ts';
import { dbPaths } from '../../core/paths.ts';
import { startSandbox } from '../../sandbox/index.ts';
import { EVENTS } from '../../../shared/contract/index.ts';
import { MAX_MESSAGE_BYTES } from '../../../shared/socket-limit.ts';
import { eventText, readSocketRequest, replyText, type SocketRequest } from './message.ts';
import { DropNames } from './drop-names.ts';
import { fsWriteWords } from '../../core/batch/fs-error.ts';

export interface WebHostOptions {
  home: string;
  /** Tried in order, one in use or forbidden passed over (0: any free port); the last one's failure is thrown. */
  ports?: readonly number[];
  /** The built renderer (electron-vite's out/renderer). */
  rendererDir?: string;
  env?: NodeJS.ProcessEnv;
  token?: string;
  /** Folders the person named when starting the host (--folder, MEDIADESK_WEB_FOLDERS): a page may name inputs inside them. */
  folders?: readonly string[];
}

export interface RunningWebHost {
  /** The URL to open, token included. */
  url: string;
  origin: string;
  token: string;
  /** This launch's id, which /healthz answers: another launch on the data folder tells a running host by it. */
  launch: string;
  core: Core;
  close(): Promise<void>;
}

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

/** Content-Disposition for a download of `name`: an ASCII fallback, and the real name for browsers that read filename*. */
export function attachmentHeader(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const utf8 = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${utf8}`;
}

const WRITE_ERROR_STATUS: Record<string, number> = { ENOTDIR: 409, EISDIR: 409, ENAMETOOLONG: 400 };

/** Why a dropped file could not be written: 409 when the drop's own files are in its way, 400 for a path too long for the disk. */
function uploadError(e: unknown): Error {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'EEXIST')
    return Object.assign(new Error('a file of this path was already copied in this drop'), { statusCode: 409 });
  const status = WRITE_ERROR_STATUS[code ?? ''] ?? 500;
  return Object.assign(new Error(fsWriteWords(e)), { statusCode: status });
}

/** The first of `base`/parts[0], `base`/parts[0]/parts[1]... that exists as a link, or null; none past the first that does not exist. */
async function linkOnPath(base: string, parts: readonly string[]): Promise<string | null> {
  let path = base;
  for (const part of parts) {
    path = join(path, part);
    try {
      if ((await lstat(path)).isSymbolicLink()) return path;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR')
        return null;
      throw e;
    }
  }
  return null;
}

/**
 * The web host: the same core as the desktop app, its contract carried over a WebSocket. It binds
 * 127.0.0.1 only, and every request that reaches the core must carry the token (kept in the data
 * folder by main.ts, so a tab outlives a restart; a new one per launch when none is given).
 */
// eslint-disable-next-line max-lines-per-function -- the web host's composition: routes, token check and socket share one server's state
export async function startWebHost(options: WebHostOptions): Promise<RunningWebHost> {
  const token = options.token ?? randomBytes(24).toString('base64url');
  const launch = randomBytes(9).toString('base64url');
  const rendererDir = resolve(options.rendererDir ?? 'out/renderer');
  const core = await createCore({
    home: options.home,
    host: 'web',
    env: options.env,
    startSandbox: () => startSandbox({ port: 0, taskJournal: dbPaths(options.home).sandboxTasks }),
  });
  core.log.addSecret(token);
  // A browser sends files, never paths: folders the person named at start are the paths a page may type.
  for (const folder of options.folders ?? []) core.pathPolicy?.grant(folder);
  // Files saved for a browser to download are the host's only until downloaded: none outlives a launch.
  const handOverDir = join(resolve(options.home), HAND_OVER);
  await rm(handOverDir, { recursive: true, force: true });

  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 * 1024 });
  let origin = '';
  const allowedHosts = () => {
    const port = new URL(origin).port;
    return new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  };
  // A reload after the page drops ?token= asks for `/` with the cookie instead. The port is in its
  // name since cookies ignore ports; HttpOnly keeps it from scripts, SameSite=Strict from other sites.
  const cookieName = () => `mediadesk-token-${new URL(origin).port}`;
  // A token in the query decides alone: a tab holding a token since replaced (--new-token) must
  // hear 401 (and say so) even when another tab has since set the new cookie.
  const authorized = (req: FastifyRequest<{ Querystring: { token?: string } }>) =>
    req.query.token !== undefined
      ? sameToken(req.query.token, token)
      : sameToken(readCookie(req.headers.cookie, cookieName()), token);

  app.addHook('onSend', async (_req, reply, payload) => {
    reply.header('content-security-policy', webCsp(origin));
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    // frame-ancestors for browsers that predate it; and no other site may embed what we serve.
    reply.header('x-frame-options', 'DENY');
    reply.header('cross-origin-resource-policy', 'same-origin');
    return payload;
  });

  // A longer frame is refused by its header before it is read (closed with 1009): 16 MB frames read whole held memory.
  await app.register(fastifyWebsocket, { options: { maxPayload: MAX_MESSAGE_BYTES } });
  // DNS rebinding: a page on another site that resolves its name to 127.0.0.1 still sends its own Host.
  // Added after the socket plugin: its own onRequest hook marks an upgrade, so that the socket of
  // a refused one is ended (before it, a refused upgrade was left open, and host.close() waited on it).
  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    if (!allowedHosts().has(String(req.headers.host))) return reply.code(421).send({ message: 'wrong host' });
  });

  // Asked by a tab before it sends its token (shared/host-proof.ts): no token here, only the proof of holding it.
  app.get(HOST_PROOF_PATH, async (req: FastifyRequest<{ Querystring: { nonce?: string } }>, reply) => {
    const nonce = String(req.query.nonce ?? '');
    if (!NONCE_PATTERN.test(nonce)) return reply.code(400).send({ message: 'nonce must be 32 to 128 hex digits' });
    reply.header('cache-control', 'no-store');
    return { app: HOST_APP, proof: await hostProof(token, nonce) };
  });

  app.get(
    '/ws',
    {
      websocket: true,
      preValidation: async (req: FastifyRequest<{ Querystring: { token?: string } }>, reply: FastifyReply) => {
        // A browser always sends Origin on a WebSocket, and it must be the page's own: http and the
        // Host checked above. A page on another local port is same-site, so it carries the cookie;
        // checked first, a foreign page hears the same refusal whatever token it tries.
        if (req.headers.origin !== undefined && req.headers.origin !== `http://${req.headers.host}`) {
          return reply.code(403).send({ message: 'cross-origin socket refused' });
        }
        if (!authorized(req)) return reply.code(401).send({ message: 'missing or wrong token' });
      },
    },
    (socket) => {
      const off = core.events.onAny((event, payload) => {
        if (socket.readyState !== socket.OPEN) return;
        // The bus's emitter is the core's own code: an event that cannot be written is dropped, said on stderr, never thrown into it.
        const text = eventText(event, payload);
        if (text === null)
          process.stderr.write(
            `mediadesk web: event "${event}" could not be sent to a page: its payload cannot be written as JSON\n`,
          );
        else socket.send(text);
      });
      socket.on('close', off);
      // Each message is answered, whatever it holds: the dispatcher never rejects, and its reply is
      // written by replyText, which never throws. The catch is the last guard: an exception here
      // would be an unhandled rejection, and that ends the host.
      socket.on('message', async (raw: Buffer) => {
        let id: SocketRequest['id'] = null;
        let cmd = '';
        try {
          const read = readSocketRequest(raw);
          if ('refusal' in read) {
            socket.send(JSON.stringify(read.refusal));
            return;
          }
          ({ id, cmd } = read.request);
          const reply = await core.dispatch(cmd, read.request.payload);
          if (socket.readyState === socket.OPEN) socket.send(replyText(id, cmd, reply));
        } catch (err) {
          const why = `a message${cmd ? ` for ${JSON.stringify(cmd.slice(0, 80))}` : ''} failed:`;
          process.stderr.write(`mediadesk web: ${why} ${err instanceof Error ? err.message : String(err)}\n`);
          core.log.error(`web: ${why}`, err);
          if (socket.readyState === socket.OPEN)
            socket.send(
              replyText(id, cmd, {
                ok: false,
                error: { code: 'internal', message: 'the message could not be answered' },
              }),
            );
        }
      });
    },
  );

  type FileRequest = FastifyRequest<{ Querystring: { token?: string; path?: string } }>;
  /** A file a route may send: the token first, then `check` (a gate of the core) picks it; else the refusal is sent and null returned. */
  const gatedFile = (req: FileRequest, reply: FastifyReply, check: (path: string) => string): string | null => {
    if (!sameToken(req.query.token, token)) {
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

  // Dropped files stream into <home>/inbox/<drop>/<relative path>, names made portable (DropNames).
  // A context without Fastify's parsers: the JSON and text parsers read the body first, so a .json
  // or .txt file arrived empty.
  const dropNames = new DropNames(join(options.home, 'inbox'));
  await app.register(async (uploads) => {
    uploads.removeAllContentTypeParsers();
    uploads.addContentTypeParser('*', (_req, _payload, done) => done(null));
    uploads.put(
      '/upload',
      async (req: FastifyRequest<{ Querystring: { token?: string; drop?: string; rel?: string } }>, reply) => {
        if (!sameToken(req.query.token, token)) return reply.code(401).send({ message: 'missing or wrong token' });
        const drop = String(req.query.drop ?? '');
        const rel = String(req.query.rel ?? '');
        if (!/^[A-Za-z0-9_-]{6,64}$/.test(drop))
          return reply.code(400).send({ message: 'drop must be 6 to 64 letters, digits, _ or -' });
        const parts = rel.split(/[\\/]+/).filter(Boolean);
        // The renderer names the file beside each message, so the messages do not repeat its path.
        if (!parts.length || parts.some((p) => p === '..' || p === '.' || p.includes('\0'))) {
          return reply
            .code(400)
            .send({ message: 'not a relative file path inside the drop (a "." or ".." part, or no name)' });
        }
        const taken = dropNames.take(drop, parts);
        if ('status' in taken) return reply.code(taken.status).send({ message: taken.message });
        const dir = join(options.home, 'inbox', drop);
        const dest = join(dir, ...taken.parts);
        let out: WriteStream | undefined;
        let created = false;
        // Every folder of a drop is made here, never a link: one found on the way (put there by
        // another program) would have the file, or the folders made for it, land outside the inbox.
        let link: string | null;
        try {
          link = await linkOnPath(join(options.home, 'inbox'), [drop, ...taken.parts]);
        } catch (e) {
          taken.settle(false);
          throw uploadError(e);
        }
        if (link !== null) {
          taken.settle(false);
          return reply.code(403).send({
            message: `${link} is a link, and a dropped file is written only inside its drop's own folders: not written`,
          });
        }
        try {
          await mkdir(dirname(dest), { recursive: true }).catch((e: NodeJS.ErrnoException) => {
            // A file where a folder of its path goes: not this path's file, which EEXIST says below.
            throw e.code === 'EEXIST' ? Object.assign(e, { code: 'ENOTDIR' }) : e;
          });
          out = createWriteStream(dest, { flags: 'wx' });
          out.once('open', () => (created = true));
          await pipeline(req.raw, out);
        } catch (e) {
          // A part of a file is no file: the batch takes the drop's whole folder, so it would run it.
          // A destroyed stream may still be opening (and then create the file): wait for it to close.
          // EEXIST never opened: that file is another upload's, and stays.
          const opening = out;
          if (opening && !opening.closed) await new Promise<void>((done) => opening.once('close', () => done()));
          if (created) await rm(dest, { force: true });
          taken.settle(false);
          throw uploadError(e);
        }
        taken.settle(true);
        return { path: dest, folder: dir };
      },
    );
  });

  // A file the core saved at the person's request (an export, a saved creation) as a browser
  // download: the host's disk may not be the person's. Only those files (SavedFiles), token first,
  // and results MediaDesk wrote (core.draggable), which a gallery tile dragged out of the tab downloads.
  const downloadable = (path: string) => {
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
  };
  app.get('/download', async (req: FileRequest, reply) => {
    const abs = gatedFile(req, reply, downloadable);
    if (abs === null) return reply;
    reply.header('cache-control', 'no-store');
    reply.header('content-disposition', attachmentHeader(basename(abs)));
    // Downloaded whole: the host keeps no copy (an answer to HEAD, or one cut short, leaves it for another try).
    if (req.method === 'GET' && dirname(abs) === handOverDir)
      reply.raw.once('finish', () => {
        if (reply.statusCode === 200) void rm(abs, { force: true });
      });
    return reply.sendFile(basename(abs), dirname(abs), { cacheControl: false });
  });

  app.get('/healthz', async () => ({ ok: true, events: Object.keys(EVENTS).length, launch }));

  // sendFile (for /media, whose files the MediaGate chose) comes from this plugin.
  await app.register(fastifyStatic, { root: resolve('.'), serve: false });
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
  app.get('/', async (req: FastifyRequest<{ Querystring: { token?: string } }>, reply) => {
    // The address holds the token: the browser's cache must not keep it.
    reply.header('cache-control', 'no-store');
    if (!authorized(req)) {
      return reply
        .code(401)
        .type('text/plain')
        .send(
          'MediaDesk: open the URL the web host printed when it started (npm run web); it carries the access token.\n',
        );
    }
    if (sameToken(req.query.token, token)) {
      reply.header('set-cookie', `${cookieName()}=${token}; HttpOnly; SameSite=Strict; Path=/`);
    }
    if (!hasRenderer)
      return reply
        .code(503)
        .type('text/plain')
        .send(`MediaDesk: the renderer is not built (${rendererDir}); run npm run build.\n`);
    return reply.sendFile('index.html', rendererDir, { cacheControl: false });
  });

  let address = '';
  const ports = options.ports?.length ? options.ports : [0];
  for (const [i, port] of ports.entries()) {
    try {
      address = await app.listen({ host: '127.0.0.1', port });
      break;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if ((code !== 'EADDRINUSE' && code !== 'EACCES') || i === ports.length - 1) {
        await app.close();
        await core.close();
        throw e;
      }
    }
  }
  origin = address.replace('localhost', '127.0.0.1');
  core.log.info(`web host listening on ${origin}`);
  return {
    url: `${origin}/?token=${token}`,
    origin,
    token,
    launch,
    core,
    async close() {
      await app.close();
      await core.close();
    },
  };
}
