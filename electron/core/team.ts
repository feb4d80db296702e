import { join } from 'node:path';
import type { HandlerMap } from '../../shared/contract/define.ts';
import type { teamCommands } from '../../shared/contract/team.ts';
import type { Settings } from '../../shared/settings.ts';
import type { ApiClient, ApiTarget } from './api/client.ts';
import { AnalyticsService } from './analytics/service.ts';
import { AppsService } from './apps/service.ts';
import type { SandboxOwners } from './apps/runner.ts';
import { toAppRun, type AppRunStore } from './apps/store.ts';
import { CreationsService } from './creations/service.ts';
import type { Db } from './db/open.ts';
import type { EventBus } from './events.ts';

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
  poll?: { firstMs: number; minMs: number; maxMs: number };
  /** Whose path rules written files keep (process.platform): tests pass win32. */
  platform?: string;
}

/**
 * Where results go when the user named no folder: a subfolder of the output folder (the core hands
 * in Settings with its default applied, ~/MediaDesk), else, for services built without it, one in
 * the data folder.
 */
export const defaultOutDir = (home: string, s: Settings, sub: string) =>
  s.outputDir ? join(s.outputDir, sub) : join(home, 'outputs', sub);

/** The apps, analytics and creations services over one core. */
export function teamServices(d: TeamDeps) {
  let emitTimer: NodeJS.Timeout | null = null;
  let cursor = Date.now();
  const store = d.appRuns;
  // Throttled: a burst of state changes becomes one event with the rows changed since the last.
  const onChange = () => {
    if (!d.events || emitTimer) return;
    emitTimer = setTimeout(() => {
      emitTimer = null;
      if (!store.db.open) return;
      const rows = store.changedSince(cursor);
      if (!rows.length) return;
      cursor = Math.max(...rows.map((r) => r.updatedAt));
      d.events!.emit('apps.changed', { runs: rows.map(toAppRun) });
    }, 200);
    emitTimer.unref?.();
  };
  const apps = new AppsService({
    client: d.client,
    store,
    lease: d.lease,
    backend: d.backend,
    builtInSandboxUrl: d.builtInSandboxUrl,
    sandboxOwners: d.sandboxOwners,
    defaultOutDir: () => defaultOutDir(d.home, d.settings(), 'apps'),
    onChange,
    poll: d.poll,
    platform: d.platform,
  });
  const analytics = new AnalyticsService({ client: d.client, db: d.analyticsDb, target: d.target });
  const creations = new CreationsService(d.client, join(d.home, 'cache', 'creations'), d.platform);
  d.addMediaRoots?.(() => store.outDirs());
  apps.runner.start();
  return { apps, analytics, creations };
}

export type TeamServices = ReturnType<typeof teamServices>;

/** The renderer's commands of this area; one spread line in createCore wires them. */
export function teamHandlers(d: TeamDeps, s: TeamServices = teamServices(d)): HandlerMap<typeof teamCommands> {
  const out = () => defaultOutDir(d.home, d.settings(), 'creations');
  return {
    'apps.list': async () => ({ apps: await s.apps.list() }),
    'apps.get': ({ id }) => s.apps.get(id),
    'apps.check': ({ appId, inputs }) => s.apps.check(appId, inputs),
    'apps.run': (req) => s.apps.run(req),
    'apps.runs': ({ limit }) => ({ runs: s.apps.runs(limit) }),
    'apps.cancel': ({ id }) => s.apps.cancel(id),
    'apps.retry': async ({ id, confirmedCost }) => s.apps.retry(id, await d.backend(), confirmedCost),
    'usage.query': ({ refresh, ...q }) => s.analytics.query(q, refresh),
    'usage.breakdown': ({ by, ...q }) => s.analytics.breakdown(q, by),
    'usage.budget': () => s.analytics.budget(),
    'team.directory': () => s.analytics.directory(),
    'team.export': ({ what, usage, outDir }) =>
      s.analytics.exportCsv(what, outDir ?? defaultOutDir(d.home, d.settings(), 'exports'), usage),
    'creations.list': (q) => s.creations.list(q),
    'creations.download': async ({ id, outDir }) => ({ path: await s.creations.download(id, outDir ?? out()) }),
  };
}
