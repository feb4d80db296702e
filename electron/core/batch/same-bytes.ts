import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { MadeFrom } from '../queue/store.ts';

/**
 * SHA-256 (hex) of bytes in memory: what a job records of the input it sends. WebCrypto hashes on
 * libuv's thread pool: a 20 MB photo held the event loop (the app's main process) ~50 ms through
 * createHash, per job sent.
 */
export const sha256Of = async (bytes: Buffer): Promise<string> =>
  Buffer.from(await globalThis.crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>)).toString('hex');

/** SHA-256 (hex) of a file, read once as a stream. */
export const fileDigest = (path: string) =>
  new Promise<string>((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(path)
      .on('error', reject)
      .on('data', (d) => h.update(d))
      .on('end', () => resolve(h.digest('hex')));
  });

/**
 * Whether `path` is the photo an earlier job made its result from: the same path, or the same bytes
 * elsewhere. Cheapest facts first: sizes, then the recorded SHA-256 (else both files are read);
 * false when a file cannot be read. `digestOfPath` lets a caller read one path once.
 */
export async function samePhoto(
  earlier: MadeFrom,
  path: string,
  digestOfPath: () => Promise<string> = () => fileDigest(path),
): Promise<boolean> {
  if (earlier.input === path) return true;
  const st = await stat(path).catch(() => null);
  if (!st?.isFile()) return false;
  try {
    if (earlier.size !== null && earlier.sha256 !== null)
      return st.size === earlier.size && (await digestOfPath()) === earlier.sha256;
    const before = await stat(earlier.input).catch(() => null);
    if (!before?.isFile() || before.size !== st.size) return false;
    const [a, b] = await Promise.all([fileDigest(earlier.input), digestOfPath()]);
    return a === b;
  } catch {
    return false;
  }
}
