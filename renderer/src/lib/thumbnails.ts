import { call, desk } from './bridge.ts';

/** Thumbnail URLs by size and path, shared by every Thumb; a failed one is forgotten so the next asks again. */
const cache = new Map<string, Promise<string>>();

export function thumbnailUrl(path: string, size: number): Promise<string> {
  const key = `${size}\u0000${path}`;
  let url = cache.get(key);
  if (!url) {
    url = call('media.thumbnail', { path, size }).then((r) => desk.mediaUrl(r.path));
    cache.set(key, url);
    url.catch(() => cache.delete(key));
  }
  return url;
}
