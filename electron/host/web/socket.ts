import type { FastifyInstance, FastifyReply } from 'fastify';
import type { WebSocket } from '@fastify/websocket';
import type { Core } from '../../core/index.ts';
import { eventText, readSocketRequest, replyText, type SocketRequest } from './message.ts';
import type { TokenRequest, WebAccess } from './access.ts';
import type { WebHandOffs } from './hand-off.ts';

/** The contract over `/ws`: a socket of this host's own page holding the token; the frame limit is the plugin's (server.ts). */
export function serveSocket(app: FastifyInstance, core: Core, access: WebAccess, handOffs?: WebHandOffs): void {
  app.get(
    '/ws',
    {
      websocket: true,
      preValidation: async (req: TokenRequest, reply: FastifyReply) => {
        // A browser always sends Origin on a WebSocket, and it must be the page's own: http and the
        // Host checked above. A page on another local port is same-site, so it carries the cookie;
        // checked first, a foreign page hears the same refusal whatever token it tries.
        if (req.headers.origin !== undefined && req.headers.origin !== `http://${req.headers.host}`) {
          return reply.code(403).send({ message: 'cross-origin socket refused' });
        }
        if (!access.authorized(req)) return reply.code(401).send({ message: 'missing or wrong token' });
      },
    },
    (socket) => {
      const off = fanOutEvents(core, socket);
      let gone: (() => void) | null = null;
      socket.on('close', () => {
        off();
        gone?.();
      });
      socket.on('message', (raw: Buffer) =>
        answer(core, socket, raw).then(() => {
          // Its first message came after its listeners were set: hand-offs held for a page go now.
          if (!gone && socket.readyState === socket.OPEN) gone = handOffs?.pageSpoke() ?? (() => {});
        }),
      );
    },
  );
}

/** Sends every core event to the socket while it is open; returns the unsubscribe. */
function fanOutEvents(core: Core, socket: WebSocket): () => void {
  return core.events.onAny((event, payload) => {
    if (socket.readyState !== socket.OPEN) return;
    // The bus's emitter is the core's own code: an event that cannot be written is dropped, said on stderr, never thrown into it.
    const text = eventText(event, payload);
    if (text === null)
      process.stderr.write(
        `mediadesk web: event "${event}" could not be sent to a page: its payload cannot be written as JSON\n`,
      );
    else socket.send(text);
  });
}

/**
 * Each message is answered, whatever it holds: the dispatcher never rejects, and its reply is
 * written by replyText, which never throws. The catch is the last guard: an exception here
 * would be an unhandled rejection, and that ends the host.
 */
async function answer(core: Core, socket: WebSocket, raw: Buffer): Promise<void> {
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
}
