import { join } from 'node:path';
import type { Settings } from '../../../shared/settings.ts';
import type { ApiTarget } from '../api/client.ts';
import type { Clock } from '../clock.ts';
import { dbPaths } from '../paths.ts';
import { HotFolders, openHotFolderDb, type HotFolderDeps } from './service.ts';
import type { TeamServer } from '../team-server/connection.ts';
import { claimLeaseFrom, SharedClaims, SharedHotFolders } from './shared.ts';
import { HotFolderStore } from './store.ts';
import { guardJobsFrom, HotFolderWatcher, type FolderWatch, type WatchedEngine } from './watcher.ts';

/**
 * A data folder's hot folders: their records (hot-folders.db), the service behind their commands,
 * and the watcher, which watches only while this process holds the queue.
 */
export function openHotFolders(o: {
  home: string;
  engine: WatchedEngine & HotFolderDeps['engine'];
  target: () => Promise<ApiTarget>;
  settings: () => Settings;
  env: NodeJS.ProcessEnv;
  onProblem: (message: string) => void;
  clock?: Clock;
  watch?: FolderWatch;
  /** The team server, for shared hot folders (made after the hot folders, hence asked for). */
  team: () => TeamServer | null;
}) {
  const db = openHotFolderDb(dbPaths(o.home).hotFolders);
  const store = new HotFolderStore(db);
  const shared = new SharedHotFolders(store, new SharedClaims(o.team, claimLeaseFrom(o.env)));
  const service = new HotFolders({
    store,
    engine: o.engine,
    target: o.target,
    settings: o.settings,
    inbox: join(o.home, 'inbox'),
    teamServerSet: async () =>
      (await o
        .team()
        ?.configured()
        .catch(() => false)) ?? false,
  });
  const watcher = new HotFolderWatcher({
    store,
    engine: o.engine,
    onProblem: o.onProblem,
    guardJobs: guardJobsFrom(o.env),
    clock: o.clock,
    watch: o.watch,
    shared,
  });
  return { db, store, service, watcher, shared };
}
