import { join } from 'node:path';
import { Backend, type RunningSandboxLike } from './backend.ts';
import { createCoreDispatch, type AllHandlers } from './dispatch.ts';
import { foundationHandlers } from './foundation-handlers.ts';
import { applyOverrides, mergeHandlers } from './merge-handlers.ts';
import { EventBus } from './events.ts';
import { ApiClient, optionalReadMs } from './api/client.ts';
import { mediaHandlers } from './media/handlers.ts';
import { openEngine } from './engine/open.ts';
import { pollFromEnv } from './engine/poll-policy.ts';
import { engineHandlers } from './engine/handlers.ts';
import { limitsHandlers } from './limits/handlers.ts';
import { AuditService, auditEvents } from './audit/service.ts';
import { auditHandlers } from './audit/handlers.ts';
import { forwardHandlers } from './audit/forward/handlers.ts';
import { AuditForwarder } from './audit/forward/service.ts';
import { openAnalyticsDb } from './analytics/store.ts';
import { openAppRunStore } from './apps/store.ts';
import { hotFolderHandlers } from './hot-folders/handlers.ts';
import { openHotFolders } from './hot-folders/open.ts';
import type { FolderWatch } from './hot-folders/watcher.ts';
import { Notices } from './notices/index.ts';
import { ToldFile } from './notices/told.ts';
import { presetHandlers } from './presets/handlers.ts';
import { PresetStore } from './presets/store.ts';
import { dbPaths, withDefaultOutputDir } from './paths.ts';
import { fileAccess } from './file-access.ts';
import { SavedFiles } from './saved-files.ts';
import { CachedSecretStore, openSecretStore, SinkSecrets, type SecretStore } from './secrets.ts';
import { defaultOutDir, teamHandlers, teamServices } from './team.ts';
import { openTrainingStore } from './lora-training/store.ts';
import { LoraTrainer } from './lora-training/service.ts';
import { loraTrainingHandlers } from './lora-training/handlers.ts';
import { reportHandlers } from './queue/batch-report.ts';
import { openSettingsFile, SettingsService, type JsonFileStore } from './settings.ts';
import type { Settings } from '../../shared/settings.ts';
import { openLog, type AppLog } from './log/index.ts';
import { BatchEstimator } from './limits/estimate.ts';
import { PriceBook, pricesHandlers } from './limits/prices.ts';
import { keysKnownTo } from './log/keys.ts';
import { logAppRunFailures, logEngineErrors, logJobFailures } from './log/job-failures.ts';
import { APP_VERSION } from './app-version.ts';
import { pacingRates } from './limits/pacer.ts';
import { supportHandlers } from './problem-report.ts';
import type { Clock } from './clock.ts';
import { openTeamServer } from './team-server/index.ts';
import { TEAM_PASSWORD_ACCOUNT } from './team-server/config.ts';

export interface CoreOptions {
  home: string;
  host: 'electron' | 'web' | 'cli';
  env?: NodeJS.ProcessEnv;
  /** The settings file every host opens (`openSettingsFile`). */
  settingsFile?: JsonFileStore;
  secrets?: SecretStore;
  /** The team server's password (tests); default the OS keychain's entry beside the key. */
  teamSecrets?: SecretStore;
  startSandbox: () => Promise<RunningSandboxLike>;
  /** Whether this process drives the queue (the CLI's run, jobs and watch start the core's engine themselves). */
  runQueue?: boolean;
  /** Over Settings for the queue alone: the CLI's flags (`--concurrency`, `run --metadata`). */
  queueSettings?: Partial<Settings>;
  /** The commands the host serves itself (Electron's shell.openPath, its open dialog): each must be a contract command. */
  overrides?: Partial<AllHandlers>;
  /** The desktop app opens its log before the core; otherwise the core opens logs/<host>.log. */
  log?: AppLog;
  /** The time hot folders' waits and workflow-app runs' polls are on (tests pass a TestClock); real time by default. */
  clocks?: { hotFolders?: Clock; appRuns?: Clock };
  /** How hot folders are watched: chokidar's watch unless a test gives its own (one that misses a file). */
  watchFolder?: FolderWatch;
}

const VERSION = APP_VERSION;

/** The web host's folder (in the data folder) of files saved for the browser to download. */
export const HAND_OVER = 'hand-over';
export { NOT_RECORDED } from './file-access.ts';

export type Core = Awaited<ReturnType<typeof createCore>>;

/** Builds every core service once; each host (Electron, web, CLI) wraps the same object. */
// eslint-disable-next-line max-lines-per-function -- the composition root: each service is built once here, in dependency order
export async function createCore(opts: CoreOptions) {
  const env = opts.env ?? process.env;
  const log = opts.log ?? openLog({ home: opts.home, name: opts.host });
  log.addSecret(env.MEDIADESK_API_KEY);
  const settings = new SettingsService(opts.settingsFile ?? openSettingsFile(opts.home));
  // The Sandbox's demo key is sent like any key: a server echoing it must not write it to the log either.
  log.addSecret(settings.get().sandboxKey);
  const secrets = new CachedSecretStore(keysKnownTo(log, opts.secrets ?? (await openSecretStore())));
  const backend = new Backend({ settings, secrets, env: opts.env, startSandbox: opts.startSandbox });
  const events = new EventBus();

  const rates = pacingRates(env);
  // Usage, creations, flows, members: every request counts with the queue's in the rate windows.
  const pace = rates ? () => engine.pacer.gate() : undefined;
  const client = new ApiClient(() => backend.target(), { pace });
  const effectiveSettings = () => withDefaultOutputDir(settings.get(), env);
  const engine = openEngine({
    home: opts.home,
    target: () => backend.target(),
    identity: () => backend.identity(),
    builtInSandboxUrl: () => backend.builtInSandboxUrl(),
    slugs: () => backend.slugs(),
    settings: opts.queueSettings ? () => ({ ...effectiveSettings(), ...opts.queueSettings }) : effectiveSettings,
    rates,
    // A shared hot folder's file is sent only once the team server says this process has it.
    beforeCreate: (job) => hot.shared.beforeCreate(job),
    poll: pollFromEnv(env),
    warn: (m) => log.warn(m),
    error: logEngineErrors(log),
  });
  engine.on('jobs.changed', (e) => events.emit('jobs.changed', e));
  logJobFailures(engine, log);
  logAppRunFailures(events, log);
  const audit = new AuditService({
    dbPath: dbPaths(opts.home).audit,
    target: () => backend.target(),
    pace,
    ...auditEvents(events, () => forwarder.afterSync()),
    team: () => teamServer!.auditArchive(),
    teamFillMs: 15_000,
  });
  const forwarder = new AuditForwarder({
    db: audit.store.db,
    settings: () => settings.get(),
    saveSinks: (auditSinks) => settings.set({ auditSinks }),
    secrets: new SinkSecrets(opts.env ?? process.env),
    onSecret: (s) => log.addSecret(s),
  });

  // Follows a change that is already made (a key stored or removed, a setting saved): a status
  // that cannot be read now (the Sandbox failed to start) must not report that change as failed,
  // nor reject unhandled; whoever shows the status reads it again and says why it cannot.
  const announceBackend = () =>
    backend.status().then(
      (s) => events.emit('backend.changed', s),
      () => {},
    );
  settings.on('changed', (s) => {
    log.addSecret(s.sandboxKey);
    events.emit('settings.changed', s);
    void announceBackend();
  });

  // After openEngine: the queue's migrations made the tables these take over.
  const appRuns = openAppRunStore(dbPaths(opts.home).jobs);
  const analyticsDb = openAnalyticsDb(dbPaths(opts.home).jobs);
  const hot = openHotFolders({
    home: opts.home,
    engine,
    target: () => backend.target(),
    settings: effectiveSettings,
    env,
    onProblem: (m) => log.warn(m),
    clock: opts.clocks?.hotFolders,
    watch: opts.watchFolder,
    team: () => teamServer?.server ?? null,
  });
  const files = fileAccess({
    home: opts.home,
    host: opts.host,
    env,
    outputDir: () => effectiveSettings().outputDir,
    queue: engine.store,
    hotFolders: () => hot.store.folders(),
  });
  const teamDeps = {
    home: opts.home,
    client,
    target: () => backend.target(),
    appRuns,
    analyticsDb,
    lease: () => engine.holdsQueue,
    backend: () => backend.identity(),
    builtInSandboxUrl: () => backend.builtInSandboxUrl(),
    sandboxOwners: engine.sandboxOwners,
    pacer: engine.pacer,
    metadata: engine.resultMetadata,
    settings: effectiveSettings,
    events,
    addMediaRoots: files.addMediaRoots,
    addOutputFolders: files.addOutputFolders,
    confine: (field: string, path: string) => files.pathPolicy?.checkInput(field, path),
    clock: opts.clocks?.appRuns,
  };
  const team = teamServices(teamDeps);
  const prices = new PriceBook(engine.store.db);
  const trainings = openTrainingStore(dbPaths(opts.home).jobs);
  let trainingsTold: NodeJS.Timeout | null = null;
  const trainer = new LoraTrainer({
    store: trainings,
    client,
    lease: () => engine.holdsQueue,
    backend: () => backend.identity(),
    priceOf: (tool) => prices.priceOf(tool),
    poll: pollFromEnv(env),
    // Throttled as apps.changed is: a burst of moves is one event.
    onChange: () =>
      (trainingsTold ??= setTimeout(() => {
        trainingsTold = null;
        if (trainings.db.open) events.emit('loras.changed', { trainings: trainer.list() });
      }, 200)).unref(),
  });
  trainer.start();
  let teamPassword: Promise<SecretStore> | null = null;
  // eslint-disable-next-line prefer-const -- asked for by the hot folders, which are made first
  let teamServer: ReturnType<typeof openTeamServer> | undefined;
  teamServer = openTeamServer({
    home: opts.home,
    env: opts.env ?? process.env,
    settings,
    password: () =>
      (teamPassword ??= opts.teamSecrets
        ? Promise.resolve(opts.teamSecrets)
        : openSecretStore(undefined, TEAM_PASSWORD_ACCOUNT)),
    pacer: engine.pacer,
    priceOf: (tool) => prices.priceOf(tool).effective,
  });
  // Before the queue starts: with a team server set, its first create is paced with the team's.
  await teamServer.apply();
  settings.on('changed', () => void teamServer.apply().catch((err) => log.warn(`team server: ${String(err)}`)));
  const estimator = new BatchEstimator({ prices, pacer: engine.pacer, team: teamServer.today });
  // The hosts a person watches tell them when work ends; the CLI says it in the terminal.
  const notices =
    opts.host === 'cli'
      ? null
      : new Notices({
          events,
          told: new ToldFile(join(opts.home, 'notices-told.json')),
          hotFolders: () => hot.service.list(),
          enabled: () => settings.get().notifications,
          batches: () => engine.listBatches(500, 0),
          onProblem: (m) => log.warn(m),
        });
  const presets = new PresetStore(opts.home);
  /** Where a file saved at the person's request goes (SAVED_FILES_RULE): the browser downloads it from the data folder. */
  const savedDir = (what: 'exports' | 'creations') =>
    opts.host === 'web' ? join(opts.home, HAND_OVER) : defaultOutDir(opts.home, effectiveSettings(), what);

  const handlers = applyOverrides(
    mergeHandlers(
      foundationHandlers({
        version: VERSION,
        host: opts.host,
        home: opts.home,
        env,
        settings,
        outputDir: () => effectiveSettings().outputDir,
        secrets,
        backend,
        announceBackend,
        pace,
        media: files.media,
        openable: files.openable,
        openableFolder: files.openableFolder,
      }),
      mediaHandlers(client, join(opts.home, 'cache', 'loras')),
      loraTrainingHandlers(trainer),
      engineHandlers(engine, {
        estimator,
        appOf: (id) => team.apps.get(id),
        onCheckProgress: (p) => events.emit('batches.checkProgress', p),
      }),
      limitsHandlers(engine.pacer, engine.store, (ids) => team.apps.titlesOf(ids)),
      pricesHandlers(prices),
      teamServer.handlers,
      teamHandlers({ ...teamDeps, savedDir }, team),
      reportHandlers({
        store: engine.store,
        prices,
        usage: (q, refresh) => team.analytics.query(q, refresh, { deadlineMs: optionalReadMs(env) }),
        exportDir: () => savedDir('exports'),
        teamSpend: teamServer.spend,
      }),
      auditHandlers(audit, () => savedDir('exports')),
      forwardHandlers(forwarder),
      hotFolderHandlers(hot.service),
      presetHandlers(presets, () => savedDir('exports')),
      supportHandlers({
        home: opts.home,
        host: opts.host,
        settings: effectiveSettings,
        // A keychain that cannot be read now leaves the key-shaped rule, which every line passes too.
        secrets: async () => [await secrets.get().catch(() => null), env.MEDIADESK_API_KEY],
        saveDir: () => savedDir('exports'),
      }),
    ),
    opts.overrides,
  );

  const savedFiles = new SavedFiles();
  const dispatch = createCoreDispatch(handlers, {
    checkPaths: files.pathPolicy ? (name, payload) => files.pathPolicy!.check(name, payload) : undefined,
    savedFiles,
    log,
  });
  if (opts.runQueue !== false) {
    engine.start();
    hot.watcher.start();
  }
  log.info(
    `MediaDesk ${VERSION} (${opts.host}) on ${process.platform}-${process.arch}, Node ${process.versions.node}; data folder ${opts.home}`,
  );
  return {
    settings,
    secrets,
    backend,
    events,
    handlers,
    dispatch,
    client,
    media: files.media,
    /** Files saved at the person's request, which the web host may send as browser downloads. */
    savedFiles,
    /** Holds a page's paths to PATH_FIELDS; null in the CLI. Electron's main grants the files the person chose. */
    pathPolicy: files.pathPolicy,
    openable: files.openable,
    openableFolder: files.openableFolder,
    draggable: files.draggable,
    /** What to tell the person when work ends, and the progress of what runs; null in the CLI. */
    notices,
    addMediaRoots: files.addMediaRoots,
    engine,
    /** The cost of a batch before Start (batches.estimate; the CLI's run stores it with its batch). */
    estimator,
    /** LoRA trainings: the CLI follows one to its new LoRA. */
    trainer,
    /** Workflow-app runs: the CLI follows one run to its results. */
    apps: team.apps,
    /** The hot folders' records, for the CLI's `watch`, which runs its own watcher over this engine. */
    hotFolderStore: hot.store,
    /** The shared hot folders' claims on the team server, for the CLI's `watch`. */
    hotFolderShared: hot.shared,
    audit,
    log,
    /** The team server (PostgreSQL) and its shared pacing; not connected until first used. */
    teamServer: teamServer.server,
    /** The team's audit archive while a team server is set (the CLI's audit sync takes its lease). */
    teamAuditArchive: teamServer.auditArchive,
    async close() {
      log.info('closing');
      notices?.stop();
      // First, while the database is open: a run POST in flight must store its run id, or the
      // next process finds it `submitting` and cannot tell whether it was paid.
      await team.apps.runner.stop();
      await trainer.stop();
      // A read still waiting (a price, a report's charges) is let go: it must not keep the process alive.
      client.abortReads();
      // Before the queue closes: a file being queued is recorded with its job.
      await hot.watcher.stop();
      await engine.close();
      hot.db.close();
      await audit.close();
      appRuns.close();
      trainings.close();
      analyticsDb.close();
      await teamServer.close();
      await backend.close();
    },
  };
}
