import { createHash } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { writeWholeAsync } from './write-whole.ts';
import type { ApiClient } from './api/client.ts';
import type { Lora } from '../../shared/contract/media.ts';

interface LoraWire {
  id: number;
  name: string;
  description?: string;
  category?: string;
  type?: string;
  preview?: string;
  training?: Record<string, unknown>;
}

/**
 * Previews are fetched once into the data folder: the renderer's CSP allows no remote images,
 * and the gallery then works offline too.
 */
async function cachePreview(url: string, dir: string, key: string): Promise<string | null> {
  if (!/^https?:\/\//.test(url)) return null;
  const ext = (/\.(png|jpe?g|webp|gif)(\?|$)/i.exec(url)?.[1] ?? 'png').toLowerCase();
  const file = join(
    dir,
    `${createHash('sha256')
      .update(`${key}\u0000${new URL(url).pathname}`)
      .digest('hex')
      .slice(0, 24)}.${ext}`,
  );
  try {
    await stat(file);
    return file;
  } catch {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(15_000) });
      if (!res.ok || !(res.headers.get('content-type') ?? '').startsWith('image/')) return null;
      await mkdir(dir, { recursive: true });
      await writeWholeAsync(file, Buffer.from(await res.arrayBuffer()));
      return file;
    } catch {
      return null;
    }
  }
}

type Groups = { default?: LoraWire[]; customs?: LoraWire[] };

/**
 * The catalogue's groups, in either shape the description gives: its schema makes `data` an array
 * of `{default, customs}`, its example one such object.
 */
export function loraGroups(body: unknown): { default: LoraWire[]; customs: LoraWire[] } {
  const data = (body as { data?: unknown } | null)?.data;
  const groups = (Array.isArray(data) ? data : [data]).filter((g): g is Groups => !!g && typeof g === 'object');
  const all = (k: keyof Groups) => groups.flatMap((g) => (Array.isArray(g[k]) ? g[k] : []));
  return { default: all('default'), customs: all('customs') };
}

/** GET /v1/ai/loras → one flat list, each entry marked default or custom, previews cached locally. */
export async function listLoras(client: ApiClient, cacheDir: string): Promise<Lora[]> {
  const body = loraGroups(await client.get<unknown>('/v1/ai/loras'));
  const norm = async (l: LoraWire, custom: boolean): Promise<Lora> => ({
    id: l.id,
    name: l.name,
    description: l.description ?? '',
    category: l.category ?? '',
    type: l.type ?? '',
    preview: l.preview ?? '',
    // Keyed by entry and path, not host: the Sandbox's port changes every launch.
    previewPath: l.preview ? await cachePreview(l.preview, cacheDir, `${custom ? 'custom' : 'default'}-${l.id}`) : null,
    training: l.training,
    custom,
  });
  return Promise.all([...body.default.map((l) => norm(l, false)), ...body.customs.map((l) => norm(l, true))]);
}
