import type { FastifyInstance } from 'fastify';

/**
 * Listens on 127.0.0.1 at the first of `ports` it may (0: any free port), one in use or forbidden
 * passed over; the last one's failure is thrown. Returns the origin, 127.0.0.1 by number.
 */
export async function listenOnFirstFree(app: FastifyInstance, ports: readonly number[]): Promise<string> {
  const tried = ports.length ? ports : [0];
  const listen = async (port: number) =>
    (await app.listen({ host: '127.0.0.1', port })).replace('localhost', '127.0.0.1');
  for (const port of tried.slice(0, -1)) {
    try {
      return await listen(port);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'EADDRINUSE' && code !== 'EACCES') throw e;
    }
  }
  return listen(tried[tried.length - 1]!);
}
