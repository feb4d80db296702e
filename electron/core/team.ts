import { join } from 'node:path';
import type { HandlerMap } from '../../shared/contract/define.ts';
import type { teamCommands } from '../../shared/contract/team.ts';
import type { Settings } from '../../shared/settings.ts';
import { otherResultsFolder, type RESULT_FOLDERS } from '../../shared/results-folder.ts';
import type { ApiClient, ApiTarget } from './api/client.ts';
import { AnalyticsService } from './analytics/service.ts';
import { AppsService } from './apps/service.ts';
import type { SandboxOwners } from './apps/runner.ts';
import { toAppRun, type AppRunStore } from './apps/store.ts';
import { CreationsService } from './creations/service.ts';
import type { Db } from './db/open.ts';
import type { EventBus } from './events.ts';
import type { Pacer } from './limits/pacer.ts';
import type { Clock } from './clock.ts';
import type { ResultMetadata } from './metadata/result-metadata.ts';
import type { InputConfine } from './apps/creation-input.ts';

export interface TeamDeps {
  home: string;
  client: ApiClient;
  target: () => Promise<ApiTarget>;
  /** openAppRunStore: the app runs' own connection to mediadesk.db. */
  appRuns: AppRunStore;
  /** openAnalyticsDb: the usage ledger and cache's own connection to mediadesk.db. */
  analyticsDb: Db;
  /** Whether this process holds the queue (the engine's lease). */
  lease: () => boolean;
  /** Backend.identity(): the server app runs are queued for and driven on. */
  backend: () => Promise<string>;
  /** Backend.builtInSandboxUrl(): runs the built-in Sandbox lost with its process are queued again. */
  builtInSandboxUrl?: () => Promise<string | null>;
  /** Engine.sandboxOwners: runs on the built-in Sandbox whose process has ended show as queued again. */
  sandboxOwners?: SandboxOwners;
  settings: () => Settings;
  events?: EventBus;
  addMediaRoots?: (roots: () => string[]) => void;
  /** Folders results are written to, which the renderer may have opened (shell.openFolder). */
  addOutputFolders?: (folders: () => string[]) => void;
  poll?: { firstMs: number; minMs: number; maxMs: number };
  /** The app runner's time (RunnerOptions.clock); real time by default. */
  clock?: Clock;
  /** The engine's pacer: app runs and their polls are paced with the tool jobs. */
  pacer?: Pacer | null;
  /** Whose path rules written files keep (process.platform): tests pass win32. */
  platform?: string;
  /** The engine's (Engine.resultMetadata): app results and creations get their provenance with it. */
  metadata?: ResultMetadata;
  /** Where exports and saved creations go; without it, their folders in the output folder. */
  savedDir?: (what: 'exports' | 'creations') => string;
  /** A page's core: an app run's local files must be ones the person gave (PathPolicy.checkInput). */
  confine?: InputConfine;
}

/**
 * Where results go when the user named no folder: their folder in the output folder (the core hands
 * in Settings with its default applied, ~/MediaDesk), else, for services built without it, in the
 * data folder.
 */
export const defaultOutDir = (home: string, s: Settings, what: keyof typeof RESULT_FOLDERS, appName?: string) =>
  otherResultsFolder(s.outputDir || join(home, 'outputs'), what, appName);

/** The apps, analytics and creations services over one core. */
export function teamServices(deps: TeamDeps) {
  let emitTimer: NodeJS.Timeout | null = null;
  let cursor = Date.now();
  const store = deps.appRuns;
  // Throttled: a burst of state changes becomes one event with the rows changed since the last.
  const onChange = () => {
    if (!deps.events || emitTimer) return;
    emitTimer = setTimeout(() => {
      emitTimer = null;
      if (!store.db.open) return;
      const rows = store.changedSince(cursor);
      if (!rows.length) return;
      cursor = Math.max(...rows.map((r) => r.updatedAt));
      deps.events!.emit('apps.changed', { runs: rows.map(toAppRun) });
    }, 200);
    emitTimer.unref?.();
  };
  const apps = new AppsService({
    client: deps.client,
    store,
    lease: deps.lease,
    backend: deps.backend,
    builtInSandboxUrl: deps.builtInSandboxUrl,
    sandboxOwners: deps.sandboxOwners,
    defaultOutDir: (appName) => defaultOutDir(deps.home, deps.settings(), 'apps', appName),
    onChange,
    poll: deps.poll,
    pacer: deps.pacer,
    platform: deps.platform,
    metadata: deps.metadata,
    metadataSettings: deps.settings,
    confine: deps.confine,
    clock: deps.clock,
  });
  const analytics = new AnalyticsService({ client: deps.client, db: deps.analyticsDb, target: deps.target });
  const creations = new CreationsService(
    deps.client,
    join(deps.home, 'cache', 'creations'),
    deps.platform,
    deps.metadata ? { metadata: deps.metadata, settings: deps.settings } : null,
  );
  deps.addMediaRoots?.(() => store.outDirs());
  deps.addOutputFolders?.(() => store.outDirs());
  apps.runner.start();
  return { apps, analytics, creations };
}

export type TeamServices = ReturnType<typeof teamServices>;

/** The renderer's commands of this area; one spread line in createCore wires them. */
export function teamHandlers(
  deps: TeamDeps,
  services: TeamServices = teamServices(deps),
): HandlerMap<typeof teamCommands> {
  // Where the app saves a file for the person (SAVED_FILES_RULE); the core's hosts choose it, a request never does.
  const saved = (what: 'exports' | 'creations') =>
    deps.savedDir ? deps.savedDir(what) : defaultOutDir(deps.home, deps.settings(), what);
  return {
    'apps.list': async () => ({ apps: await services.apps.list() }),
    'apps.mine': async () => ({ flows: await services.apps.mine() }),
    'apps.get': ({ id }) => services.apps.get(id),
    'apps.check': ({ appId, inputs }) => services.apps.check(appId, inputs),
    'apps.run': (req) => services.apps.run(req),
    'apps.runs': ({ limit }) => ({ runs: services.apps.runs(limit) }),
    'apps.cancel': ({ id }) => services.apps.cancel(id),
    'apps.retry': async ({ id, confirmedCost }) => services.apps.retry(id, await deps.backend(), confirmedCost),
    'usage.query': ({ refresh, ...q }) => services.analytics.query(q, refresh),
    'usage.breakdown': ({ by, ...q }) => services.analytics.breakdown(q, by),
    'usage.budget': () => services.analytics.budget(),
    'team.directory': () => services.analytics.directory(),
    'team.export': ({ what, usage }) => services.analytics.exportCsv(what, saved('exports'), usage),
    'creations.list': (q) => services.creations.list(q),
    'creations.download': async ({ id }) => ({ path: await services.creations.download(id, saved('creations')) }),
  };
}
