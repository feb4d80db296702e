import { call, on } from './bridge.ts';
import { queue } from './queue.svelte.ts';

/**
 * The starred tools, kept in settings (`favouriteTools`) so every window, the web host and the CLI
 * share them; and the recently used tools, read from the batches the queue already holds.
 */
class ToolFavourites {
  ids = $state<string[]>([]);
  #started = false;

  start() {
    if (this.#started) return;
    this.#started = true;
    call('settings.get', {})
      .then((s) => (this.ids = s.favouriteTools))
      .catch(() => {});
    on('settings.changed', (s) => (this.ids = s.favouriteTools));
  }

  has(id: string): boolean {
    return this.ids.includes(id);
  }

  async toggle(id: string) {
    const next = this.has(id) ? this.ids.filter((x) => x !== id) : [...this.ids, id];
    this.ids = next;
    const saved = await call('settings.set', { favouriteTools: next });
    this.ids = saved.favouriteTools;
  }
}
export const favourites = new ToolFavourites();

/** The tools of the latest batches, newest first, each once. */
export function recentToolIds(limit = 5): string[] {
  const out: string[] = [];
  for (const b of queue.sorted) {
    if (!out.includes(b.tool)) out.push(b.tool);
    if (out.length >= limit) break;
  }
  return out;
}
