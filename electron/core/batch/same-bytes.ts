import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';

const digest = (path: string) => new Promise<string>((resolve, reject) => {
  const h = createHash('sha256');
  createReadStream(path).on('error', reject).on('data', (d) => h.update(d)).on('end', () => resolve(h.digest('hex')));
});

/**
 * Whether two files hold the same bytes: one photo under two paths, as when the web host copies a
 * folder dropped a second time into a new inbox folder. Sizes first, so two different photos of
 * one name (two memory cards) cost a stat each; false when either cannot be read.
 */
export async function sameBytes(a: string, b: string): Promise<boolean> {
  const [sa, sb] = await Promise.all([stat(a).catch(() => null), stat(b).catch(() => null)]);
  if (!sa?.isFile() || !sb?.isFile() || sa.size !== sb.size) return false;
  try {
    const [da, db] = await Promise.all([digest(a), digest(b)]);
    return da === db;
  } catch {
    return false;
  }
}
