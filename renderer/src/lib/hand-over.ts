import { desk } from './bridge.ts';
import { baseName } from './paths.ts';

/**
 * What to say once a command saved a file on the host. In the browser the host's disk may not be
 * the person's, so the file is downloaded too; under Electron it stays where it was saved, which
 * `savedText` says. `detail`: what the file holds ("120 rows"). Rejects when the download is refused.
 */
export async function handOver(path: string, savedText: string, detail = ''): Promise<string> {
  if (!desk.download) return savedText;
  await desk.download(path);
  return `Downloaded ${baseName(path)}${detail ? ` (${detail})` : ''}: find it in your browser's downloads.`;
}
