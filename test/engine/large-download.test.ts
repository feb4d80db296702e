import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { downloadToPart, TransientDownloadError } from '../../electron/core/downloads/download.ts';
import { control, sandboxAndFolder } from './helpers.ts';

/** downloadToPart; large plain-HTTP bodies (32 MB and up) take its bare-socket path, small ones node:http. */
const at = sandboxAndFolder('large-dl', 0);

const SIZE = 48 * 1024 * 1024 + 12345;
/** Just past the size at which plain-HTTP bodies take the bare socket. */
const RAW_SIZE = 33 * 1024 * 1024;
const sha = async (p: string) => {
  const h = createHash('sha256');
  for await (const c of createReadStream(p)) h.update(c as Buffer);
  return h.digest('hex');
};
const shaOf = async (url: string) =>
  createHash('sha256')
    .update(Buffer.from(await (await fetch(url)).arrayBuffer()))
    .digest('hex');

describe('downloads into a part file', () => {
  it('streams a large body byte for byte, counting progress', async () => {
    const { url } = await control(at.url, 'blobs', { bytes: SIZE });
    const part = join(at.dir, 'whole.part');
    let progress = 0;
    const r = await downloadToPart(url, part, { onBytes: (n) => (progress += n) });
    expect(r).toMatchObject({ bytes: SIZE, resumed: false, contentType: 'application/octet-stream' });
    expect(progress).toBe(SIZE);
    expect(statSync(part).size).toBe(SIZE);
    expect(await sha(part)).toBe(await shaOf(url));
  });

  it('keeps what a truncated transfer delivered and resumes it with a range to the exact bytes', async () => {
    const { url } = await control(at.url, 'blobs', { bytes: SIZE });
    const part = join(at.dir, 'resumed.part');
    await control(at.url, 'faults', { truncateDownloads: true });
    await expect(downloadToPart(url, part)).rejects.toBeInstanceOf(TransientDownloadError);
    const kept = statSync(part).size;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(SIZE);
    await control(at.url, 'reset', {});
    const r = await downloadToPart(url, part);
    expect(r).toMatchObject({ bytes: SIZE, resumed: true });
    expect(await sha(part)).toBe(await shaOf(url));
  });

  it('reports an expired link as such, writing nothing', async () => {
    const { url } = await control(at.url, 'blobs', { bytes: SIZE });
    await control(at.url, 'faults', { expireResultUrls: true });
    const part = join(at.dir, 'expired.part');
    await expect(downloadToPart(url, part)).rejects.toMatchObject({ name: 'ExpiredUrlError', status: 410 });
    expect(existsSync(part)).toBe(false);
    await control(at.url, 'reset', {});
  });

  it('stops on abort without resolving', async () => {
    const { url } = await control(at.url, 'blobs', { bytes: SIZE });
    await control(at.url, 'faults', { slowDownloadBytesPerSec: 4 * 1024 * 1024 });
    const ac = new AbortController();
    const p = downloadToPart(url, join(at.dir, 'aborted.part'), { signal: ac.signal });
    setTimeout(() => ac.abort(), 300);
    await expect(p).rejects.toBeTruthy();
    await control(at.url, 'reset', {});
  });

  it('a part file the file system refuses fails at once with the reason, not as a transfer to repeat', async () => {
    // Small bodies take node:http, large ones the bare socket: both classify the same way.
    for (const bytes of [1000, SIZE]) {
      const { url } = await control(at.url, 'blobs', { bytes });
      const tooLong = join(at.dir, `${'n'.repeat(300)}.part`);
      const blocker = join(at.dir, `a-file-${bytes}`);
      writeFileSync(blocker, 'not a folder');
      for (const [part, code] of [
        [tooLong, 'ENAMETOOLONG'],
        [join(blocker, 'x.part'), 'ENOTDIR'],
      ] as const) {
        const err = await downloadToPart(url, part).then(
          () => null,
          (e: unknown) => e as Error & { cause?: { code?: string } },
        );
        expect(err, `${bytes} bytes into ${code}`).not.toBeNull();
        expect(err).not.toBeInstanceOf(TransientDownloadError);
        // In words with the folder, not Node's "ENAMETOOLONG: name too long, open '…'".
        expect(err!.message).toBe(
          code === 'ENAMETOOLONG'
            ? `cannot write the result file into ${at.dir}: the file name is too long for the disk (ENAMETOOLONG)`
            : `cannot write the result file into ${blocker}: part of its path is a file, not a folder (ENOTDIR)`,
        );
        expect(err!.cause?.code).toBe(code);
      }
    }
  });

  it('a dropped connection stays transient: repeating the transfer can help', async () => {
    const { url } = await control(at.url, 'blobs', { bytes: 1000 });
    await control(at.url, 'faults', { truncateDownloads: true });
    await expect(downloadToPart(url, join(at.dir, 'small-truncated.part'))).rejects.toBeInstanceOf(
      TransientDownloadError,
    );
    await control(at.url, 'reset', {});
  });

  /**
   * Not the Sandbox (it always states the length): a result server of the kind the bare socket
   * meets, whose answers vary (a CDN's edges, a proxy): the first states the length, later ones
   * come in chunks; `cut`: those chunks end, properly terminated, halfway.
   */
  async function unmeasuredServer(file: Buffer, cut = false): Promise<{ url: string; close: () => Promise<unknown> }> {
    let answers = 0;
    const server: Server = createServer((_req, res) => {
      const first = answers++ === 0;
      res.writeHead(200, { 'content-type': 'video/mp4', ...(first ? { 'content-length': file.length } : {}) });
      res.end(!first && cut ? file.subarray(0, file.length / 2) : file);
    });
    await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/result.mp4`,
      close: () => new Promise((res) => server.close(res)),
    };
  }
  const fileOf = (size: number) => {
    const file = Buffer.alloc(size);
    for (let i = 0; i < file.length; i += 4096) file.writeUInt32BE(i, i);
    return file;
  };

  it('a large file sent without its length to the bare socket (in chunks this time) is still downloaded whole', async () => {
    const file = fileOf(RAW_SIZE);
    const server = await unmeasuredServer(file);
    try {
      const part = join(at.dir, 'unmeasured.part');
      const r = await downloadToPart(server.url, part);
      expect(r).toMatchObject({ bytes: file.length, resumed: false, contentType: 'video/mp4' });
      expect(readFileSync(part).equals(file)).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('such a file that stops short of the length stated a moment before is a cut transfer, not a result', async () => {
    const server = await unmeasuredServer(fileOf(RAW_SIZE), true);
    try {
      await expect(downloadToPart(server.url, join(at.dir, 'unmeasured-cut.part'))).rejects.toThrow(
        `the file stopped at ${RAW_SIZE / 2} of ${RAW_SIZE} bytes`,
      );
    } finally {
      await server.close();
    }
  });
});
