import { createHash } from 'node:crypto';
import { createReadStream, existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { downloadToPart, TransientDownloadError } from '../../electron/core/downloads/download.ts';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { cleanup, control, tmp } from './helpers.ts';

/** downloadToPart; large plain-HTTP bodies (32 MB and up) take its bare-socket path, small ones node:http. */
let sb: RunningSandbox;
let dir: string;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, taskDurationMs: 0 });
  dir = tmp('large-dl');
});
afterAll(async () => {
  await sb.close();
  cleanup(dir);
});

const SIZE = 48 * 1024 * 1024 + 12345;
const sha = async (p: string) => {
  const h = createHash('sha256');
  for await (const c of createReadStream(p)) h.update(c as Buffer);
  return h.digest('hex');
};
const shaOf = async (url: string) => createHash('sha256').update(Buffer.from(await (await fetch(url)).arrayBuffer())).digest('hex');

describe('downloads into a part file', () => {
  it('streams a large body byte for byte, counting progress', async () => {
    const { url } = await control(sb.url, 'blobs', { bytes: SIZE });
    const part = join(dir, 'whole.part');
    let progress = 0;
    const r = await downloadToPart(url, part, { onBytes: (n) => (progress += n) });
    expect(r).toMatchObject({ bytes: SIZE, resumed: false, contentType: 'application/octet-stream' });
    expect(progress).toBe(SIZE);
    expect(statSync(part).size).toBe(SIZE);
    expect(await sha(part)).toBe(await shaOf(url));
  });

  it('keeps what a truncated transfer delivered and resumes it with a range to the exact bytes', async () => {
    const { url } = await control(sb.url, 'blobs', { bytes: SIZE });
    const part = join(dir, 'resumed.part');
    await control(sb.url, 'faults', { truncateDownloads: true });
    await expect(downloadToPart(url, part)).rejects.toBeInstanceOf(TransientDownloadError);
    const kept = statSync(part).size;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(SIZE);
    await control(sb.url, 'reset', {});
    const r = await downloadToPart(url, part);
    expect(r).toMatchObject({ bytes: SIZE, resumed: true });
    expect(await sha(part)).toBe(await shaOf(url));
  });

  it('reports an expired link as such, writing nothing', async () => {
    const { url } = await control(sb.url, 'blobs', { bytes: SIZE });
    await control(sb.url, 'faults', { expireResultUrls: true });
    const part = join(dir, 'expired.part');
    await expect(downloadToPart(url, part)).rejects.toMatchObject({ name: 'ExpiredUrlError', status: 410 });
    expect(existsSync(part)).toBe(false);
    await control(sb.url, 'reset', {});
  });

  it('stops on abort without resolving', async () => {
    const { url } = await control(sb.url, 'blobs', { bytes: SIZE });
    await control(sb.url, 'faults', { slowDownloadBytesPerSec: 4 * 1024 * 1024 });
    const ac = new AbortController();
    const p = downloadToPart(url, join(dir, 'aborted.part'), { signal: ac.signal });
    setTimeout(() => ac.abort(), 300);
    await expect(p).rejects.toBeTruthy();
    await control(sb.url, 'reset', {});
  });

  it('a part file the file system refuses fails at once with the reason, not as a transfer to repeat', async () => {
    // Small bodies take node:http, large ones the bare socket: both classify the same way.
    for (const bytes of [1000, SIZE]) {
      const { url } = await control(sb.url, 'blobs', { bytes });
      const tooLong = join(dir, `${'n'.repeat(300)}.part`);
      const blocker = join(dir, `a-file-${bytes}`);
      writeFileSync(blocker, 'not a folder');
      for (const [part, code] of [[tooLong, 'ENAMETOOLONG'], [join(blocker, 'x.part'), 'ENOTDIR']] as const) {
        const err = await downloadToPart(url, part).then(() => null, (e: unknown) => e as Error & { cause?: { code?: string } });
        expect(err, `${bytes} bytes into ${code}`).not.toBeNull();
        expect(err).not.toBeInstanceOf(TransientDownloadError);
        // In words with the folder, not Node's "ENAMETOOLONG: name too long, open '…'".
        expect(err!.message).toBe(code === 'ENAMETOOLONG' ? `cannot write the result file into ${dir}: the file name is too long for the disk (ENAMETOOLONG)` : `cannot write the result file into ${blocker}: part of its path is a file, not a folder (ENOTDIR)`);
        expect(err!.cause?.code).toBe(code);
      }
    }
  });

  it('a dropped connection stays transient: repeating the transfer can help', async () => {
    const { url } = await control(sb.url, 'blobs', { bytes: 1000 });
    await control(sb.url, 'faults', { truncateDownloads: true });
    await expect(downloadToPart(url, join(dir, 'small-truncated.part'))).rejects.toBeInstanceOf(TransientDownloadError);
    await control(sb.url, 'reset', {});
  });
});
