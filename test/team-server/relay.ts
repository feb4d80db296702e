import { connect, createServer, type Socket } from 'node:net';

/**
 * A TCP relay in front of PostgreSQL: its answers arrive `delayMs` late (a slow line to the team
 * server), and once armed, the next COMMIT is passed on and the line dropped before its answer comes
 * back (the server committed; the client cannot know it).
 */
export async function pgRelay(pgPort: number, opts: { delayMs?: number } = {}) {
  let armed = false;
  let cuts = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(pgPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    let cutNext = false;
    client.on('data', (d) => {
      if (armed && d[0] === 0x51 && d.includes('COMMIT')) {
        armed = false;
        cutNext = true;
      }
      upstream.write(d);
    });
    upstream.on('data', (d) => {
      if (cutNext) {
        cuts++;
        client.destroy();
        upstream.destroy();
      } else if (opts.delayMs) setTimeout(() => client.writable && client.write(d), opts.delayMs);
      else client.write(d);
    });
    for (const s of [client, upstream]) {
      s.on('error', () => {});
      s.on('close', () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(s);
      });
    }
  });
  const port = await new Promise<number>((res) =>
    server.listen(0, '127.0.0.1', () => res((server.address() as { port: number }).port)),
  );
  return {
    /** `url` (a database on the PostgreSQL behind) reached through the relay. */
    through: (url: string) => url.replace(`:${pgPort}/`, `:${port}/`),
    cutNextCommit: () => void (armed = true),
    get cuts() {
      return cuts;
    },
    close: () =>
      new Promise<void>((res) => {
        for (const s of sockets) s.destroy();
        server.close(() => res());
      }),
  };
}
