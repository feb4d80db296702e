import { DEFAULT_SLUGS } from '../shared/catalogue/index.ts';
import { DEFAULT_SETTINGS } from '../shared/settings.ts';
import { openEngine, type OpenEngineOptions } from '../electron/core/engine/open.ts';

/**
 * An engine over `home` against a child Sandbox at `url`, as the app runs it: batches tagged with
 * their backend, asked at each tick (migration 4), and quick polls for zero-latency tasks.
 */
export const benchEngine = (home: string, url: string, o: Partial<OpenEngineOptions>) =>
  openEngine({
    home,
    target: async () => ({ baseUrl: url, apiKey: 'sandbox-owner' }),
    slugs: () => ({ ...DEFAULT_SLUGS }),
    identity: async () => `live ${url}`,
    settings: () => DEFAULT_SETTINGS,
    poll: { firstMs: 20, minMs: 20 },
    ...o,
  });
