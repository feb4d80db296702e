/**
 * A tiny file server for URL probing tests: serves one folder over http://127.0.0.1 with (or,
 * with `ranges: false`, without) Range support, and counts the body bytes it sends, so a test can
 * assert that probing read far less than the file.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export interface FileServer {
  url: string;
  /** Body bytes sent per path since the last reset. */
  served: Map<string, number>;
  requests: string[];
  reset(): void;
  close(): Promise<void>;
}

export async function serveFolder(dir: string, opts: { ranges?: boolean } = {}): Promise<FileServer> {
  const ranges = opts.ranges ?? true;
  const served = new Map<string, number>();
  const requests: string[] = [];
  const server: Server = createServer(async (req, res) => {
    const name = decodeURIComponent((req.url ?? '/').slice(1).split('?')[0]);
    requests.push(`${req.headers.range ?? 'no-range'} ${name}`);
    let size: number;
    try {
      size = (await stat(join(dir, name))).size;
    } catch {
      res.writeHead(404).end('not found');
      return;
    }
    let start = 0;
    let end = size - 1;
    const m = ranges ? /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '') : null;
    if (m) {
      start = Number(m[1]);
      end = m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
      if (start >= size) {
        res.writeHead(416, { 'Content-Range': `bytes */${size}` }).end();
        return;
      }
      res.writeHead(206, {
        'Content-Range': `bytes ${start}-${end}/${size}`,
        'Content-Length': end - start + 1,
        'Accept-Ranges': 'bytes',
      });
    } else {
      res.writeHead(200, { 'Content-Length': size });
    }
    const stream = createReadStream(join(dir, name), { start, end });
    stream.on('data', (chunk) => served.set(name, (served.get(name) ?? 0) + chunk.length));
    res.on('close', () => stream.destroy());
    stream.pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    requests,
    reset: () => {
      served.clear();
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
