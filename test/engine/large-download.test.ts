import { createHash } from 'node:crypto';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { downloadToPart, TransientDownloadError } from '../../electron/core/downloads/download.ts';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { cleanup, control, tmp } from './helpers.ts';

/** Large plain-HTTP bodies take the bare-socket path of downloadToPart (32 MB and up). */
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

describe('large downloads', () => {
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
});
