import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core/index.ts';
import { handOffFromArgv } from '../../core/handoff.ts';
import type { HandOff } from '../../../shared/contract/handoff.ts';
import type { WebAccess } from './access.ts';

/** The header a second `mediadesk web --open` sends the token in: never a cookie, so no other page's request carries it. */
export const HAND_OFF_TOKEN_HEADER = 'x-mediadesk-token';

const handOffRequest = z
  .object({ args: z.array(z.string().max(8192)).min(1).max(100), cwd: z.string().min(1).max(4096) })
  .strict();

/**
 * Files, folders and links handed to the web host (`--open` at start, or a second start while it
 * runs), told to its pages as `studio.handOff` as the desktop app tells its window. Held until a
 * page has spoken (its listeners are set by then). Nothing is granted: a page may name only the
 * folders of --folder, as for anything it types.
 */
export class WebHandOffs {
  private held: HandOff[] = [];
  private pages = 0;
  private readonly core: Core;
  constructor(core: Core) {
    this.core = core;
  }

  give(args: readonly string[], cwd: string): HandOff[] {
    const hs = handOffFromArgv(['mediadesk-web', ...args], { packed: true, cwd });
    if (this.pages) for (const h of hs) this.core.events.emit('studio.handOff', h);
    else this.held.push(...hs);
    return hs;
  }

  /** A page answered once: what is held goes to it (and any other page open). Returns when it is gone. */
  pageSpoke(): () => void {
    this.pages++;
    for (const h of this.held.splice(0)) this.core.events.emit('studio.handOff', h);
    return () => void this.pages--;
  }

  /** POST /hand-off {args, cwd}: a second `mediadesk web --open ARG...` on the data folder. */
  serve(app: FastifyInstance, access: WebAccess): void {
    app.post('/hand-off', async (req: FastifyRequest, reply) => {
      if (!access.holdsToken(req.headers[HAND_OFF_TOKEN_HEADER]))
        return reply.code(401).send({ message: 'missing or wrong token' });
      const body = handOffRequest.safeParse(req.body);
      if (!body.success) return reply.code(400).send({ message: 'expected {args: [...], cwd}' });
      return { handOffs: this.give(body.data.args, body.data.cwd) };
    });
  }
}
