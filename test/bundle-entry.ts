import { entryUrl } from '../bin/launch.js';

const loaded = new Map<string, Promise<unknown>>();

/**
 * Entry `name` of the node bundle (`source` where there is none), imported once a process as
 * `bin/mediadesk.js` and `bin/web.js` import theirs: in a Playwright worker, which compiles every
 * TypeScript module with Babel, the sources cost ~3 CPU-s each time a worker loads the host or the CLI.
 */
export function bundleEntry<T>(name: 'cli' | 'embed', source: URL): Promise<T> {
  let entry = loaded.get(name);
  if (!entry) {
    entry = entryUrl(name, source.href).then((url) => import(url));
    loaded.set(name, entry);
  }
  return entry as Promise<T>;
}
