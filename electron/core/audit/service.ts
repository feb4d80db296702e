import {
  IMPORT_RUNNING,
  type AuditEventDetail,
  type AuditFacets,
  type AuditFilters,
  type AuditQueryResponse,
  type AuditSort,
  type AuditStatus,
  type AuditTimeline,
  type ImportDone,
  type ImportProgress,
  type ImportReport,
  type SyncDone,
  type SyncProgress,
  type SyncReport,
} from '../../../shared/contract/audit.ts';
import { DeskError } from '../../../shared/contract/define.ts';
import { oneAfterAnother, throttled } from '../../../shared/concurrency.ts';
import type { ApiTarget } from '../api/client.ts';
import type { EventBus } from '../events.ts';
import { APP_LOCK_WAIT, isBusy, whenWritable, type LockWait } from './busy.ts';
import { exportEvents } from './export.ts';
import { isDiskFull } from './disk-space.ts';
import { importFiles, importStream, restoreIndexes, type ImportOptions } from './import.ts';
import { AUDIT_DAILY_LIMIT, keyFingerprint, RequestLedger } from './ledger.ts';
import { eventDetail, facets, queryEvents, timeline, type QueryInput } from './query.ts';
import { AuditStore } from './store.ts';
import { RunningTask } from './running.ts';
import { runSync } from './sync.ts';
import { SyncStateRepo, type SyncState } from './sync-state.ts';
import { describe, isUnreachable } from '../team-server/connection.ts';
import type { TeamAuditArchive } from '../team-server/audit-archive.ts';
import { fillFromArchive, teamSync } from './team-sync.ts';

export interface AuditServiceOptions {
  /** `dbPaths(home).audit`. */
  dbPath: string;
  /** Where the API is and with which key; resolved by the host (keychain, env, Sandbox), never here. */
  target: () => Promise<ApiTarget>;
  /** Waits for a place in the service's rate windows before each request (ClientOptions.pace). */
  pace?: () => Promise<void>;
  clock?: () => Date;
  perPage?: number;
  dailyLimit?: number;
  /** Upper bound of one retry wait after a 5xx (tests keep it short). */
  maxBackoffMs?: number;
  onSyncProgress?: (p: SyncProgress) => void;
  /** A stop asked for the app's sync or import, at once (RunningTask.run's `stopping`), for every window to hear. */
  onSyncStopping?: () => void;
  onImportStopping?: () => void;
  /** The app's import (importTracked) as it goes, at most every PROGRESS_MS per file. */
  onImportProgress?: (p: ImportProgress) => void;
  /** The end of the app's sync (sync) and import (importTracked), for every window to hear. */
  onSyncDone?: (d: SyncDone) => void;
  onImportDone?: (d: ImportDone) => void;
  /**
   * How the sync's writes and a small import's batches wait while another process (the CLI, the
   * other host) holds the cache (busy.ts): the app's way, a short try then an async wait, by default.
   */
  lockWait?: LockWait;
  /**
   * The team's audit archive while a team server is set (null: none is): the sync takes its lease
   * or follows its holder, the cache is filled from it, and a search uses its full-text index.
   */
  team?: () => Promise<TeamAuditArchive | null>;
  /**
   * The app: between syncs, status (which a window polls) takes the team archive's new events into
   * the cache at most this often, so every admin's Audit screen sees them. Unset: only a sync does.
   */
  teamFillMs?: number;
}

/** The audit service's progress, stops and ends told as the core's events, for every window to hear. */
/** The audit service's hooks as events on the bus; `afterDone` runs after each sync or import (forwarding). */
export const auditEvents = (events: EventBus, afterDone: () => void = () => {}) =>
  ({
    onSyncProgress: (p) => events.emit('audit.syncProgress', p),
    onImportProgress: (p) => events.emit('audit.importProgress', p),
    onSyncStopping: () => events.emit('audit.syncStopping', {}),
    onImportStopping: () => events.emit('audit.importStopping', {}),
    onSyncDone: (d) => {
      events.emit('audit.syncDone', d);
      afterDone();
    },
    onImportDone: (d) => {
      events.emit('audit.importDone', d);
      afterDone();
    },
  }) satisfies Partial<AuditServiceOptions>;

/** A batch can take a few ms: without a floor a fast import would send the app hundreds of events a second. */
const PROGRESS_MS = 100;

/** What a window shows of a file going in apart from its counts: which file, whether rows are held back or being added, what it waits for. */
// The first progress of a file or of a step (rows held back, their adding, a wait) goes at once (throttled).
function stepOf(p: ImportProgress): string {
  let held = '';
  if (p.held) held = p.held.adding ? 'adding' : 'held';
  return `${p.file}:${held}:${p.waiting ?? ''}`;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The audit cache: sync, import, the viewer's queries and export, over one audit.db. */
export class AuditService {
  readonly store: AuditStore;
  private readonly opts: AuditServiceOptions;
  private readonly lockWait: LockWait;
  private readonly ledger: RequestLedger;
  private readonly syncState: SyncStateRepo;
  private running: Promise<SyncReport> | null = null;
  private filling: Promise<void> | null = null;
  private lastFill = 0;
  /** The imports asked for so far, one after another: each load assumes it is this connection's only one. */
  private readonly imports = oneAfterAnother();
  /** The app's sync, which cancelSync stops, and its import (importTracked), which cancelImport stops. */
  private readonly syncTask = new RunningTask<SyncProgress, SyncReport>();
  private readonly importTask = new RunningTask<ImportProgress, ImportReport[]>();

  constructor(opts: AuditServiceOptions) {
    this.opts = opts;
    this.lockWait = opts.lockWait ?? APP_LOCK_WAIT;
    this.store = new AuditStore(opts.dbPath);
    this.ledger = new RequestLedger(this.store.db, opts.dailyLimit ?? AUDIT_DAILY_LIMIT);
    this.syncState = new SyncStateRepo(this.store.db);
  }

  private now(): Date {
    return this.opts.clock?.() ?? new Date();
  }

  /** One sync at a time: a second caller shares the walk already running (and the first caller's `signal`). */
  sync(request: { signal?: AbortSignal } = {}): Promise<SyncReport> {
    const { onSyncProgress, onSyncStopping, onSyncDone } = this.opts;
    this.running ??= this.syncTask
      .run(
        ({ signal, progress }) =>
          this.told('sync', async () => {
            const onProgress = (p: SyncProgress) => {
              progress(p);
              onSyncProgress?.(p);
            };
            const runLocal = (extra: Pick<Parameters<typeof runSync>[0], 'beforePage' | 'signal'>) =>
              runSync({
                target: this.opts.target,
                pace: this.opts.pace,
                store: this.store,
                ledger: this.ledger,
                state: this.syncState,
                clock: this.opts.clock,
                perPage: this.opts.perPage,
                maxBackoffMs: this.opts.maxBackoffMs,
                signal,
                lockWait: this.lockWait,
                onProgress,
                ...extra,
              });
            const archive = await this.teamArchive();
            if (!archive) return runLocal({});
            return teamSync({
              archive,
              store: this.store,
              state: this.syncState,
              lockWait: this.lockWait,
              signal,
              onProgress,
              fingerprint: async () => keyFingerprint((await this.opts.target()).apiKey),
              runLocal,
            });
          }),
        {
          outer: request.signal,
          stopping: onSyncStopping,
          ended: (e) => onSyncDone?.({ report: e.result, error: e.error }),
        },
      )
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  /** Takes the team archive's new events in, unawaited, when teamFillMs has passed and no sync runs. */
  private fillInBackground(): void {
    const every = this.opts.teamFillMs;
    if (!every || this.filling || this.running || Date.now() - this.lastFill < every) return;
    this.lastFill = Date.now();
    this.filling = (async () => {
      const archive = await this.teamArchive();
      if (archive) await fillFromArchive({ archive, store: this.store, lockWait: this.lockWait });
    })()
      // The next sync says why the server cannot be used; a poll has no one to tell.
      .catch(() => {})
      .finally(() => (this.filling = null));
  }

  /** The team archive when a team server is set; a setting that cannot be read counts as none. */
  private async teamArchive(): Promise<TeamAuditArchive | null> {
    return (await this.opts.team?.().catch(() => null)) ?? null;
  }

  /**
   * Stops the app's sync after the page in hand (a wait to retry ends at once); its report says
   * stopped and the walk's place stays for the next sync. False when none runs.
   */
  cancelSync(): boolean {
    return this.syncTask.stop();
  }

  async status(): Promise<AuditStatus> {
    this.fillInBackground();
    const now = this.now();
    let fp: string | null = null;
    try {
      fp = keyFingerprint((await this.opts.target()).apiKey);
    } catch {
      // No key resolvable right now: show what the last sync left.
    }
    const s: SyncState | null = fp ? this.syncState.load(fp) : this.syncState.latest();
    // Polled every few seconds by a window showing the cache: counted only when it changed, and
    // not while a load has it half filled (each count could scan it); running.import says one runs.
    const c = this.store.counts({ unlessLoading: true });
    const budget = s
      ? this.ledger.usage(s.fingerprint, now)
      : { day: now.toISOString().slice(0, 10), used: 0, limit: this.ledger.limit, left: this.ledger.limit };
    const retry = s?.retryAfterUntil && s.retryAfterUntil > now.getTime() ? s.retryAfterUntil : null;
    return {
      events: c.events,
      oldest: iso(c.oldest),
      newest: iso(c.newest),
      lastSyncAt: iso(s?.lastSyncAt ?? null),
      // The key in use may not be the one that synced (another Sandbox identity, a key changed since).
      lastSuccessAt: iso(s?.lastSuccessAt ?? this.syncState.latestSuccess()),
      resumable: (s?.windows.length ?? 0) > 0,
      lastError: s?.lastError
        ? { kind: s.lastError.kind, message: s.lastError.message, at: new Date(s.lastError.at).toISOString() }
        : null,
      retryAfter: iso(retry),
      budget,
      running: { sync: this.syncTask.snapshot(), import: this.importTask.snapshot() },
      elsewhere: this.store.elsewhere(),
    };
  }

  import(paths: readonly string[], opts?: ImportOptions): Promise<ImportReport[]> {
    return this.queuedImport(() => importFiles(this.store, paths, { lockWait: this.lockWait, ...opts }));
  }

  /**
   * The app's import (audit.import): one at a time, since its Stop names no import, and a second
   * one queued behind a long one would look stuck. Progress goes to `onImportProgress`.
   */
  importTracked(paths: readonly string[]): Promise<ImportReport[]> {
    if (this.importTask.busy) return Promise.reject(new DeskError('conflict', IMPORT_RUNNING));
    const { onImportProgress, onImportStopping, onImportDone } = this.opts;
    const emit = onImportProgress && throttled(onImportProgress, PROGRESS_MS, stepOf);
    return this.importTask.run(
      ({ signal, progress }) =>
        this.import(paths, {
          signal,
          onProgress: (p) => {
            progress(p);
            emit?.(p);
          },
        }),
      {
        stopping: onImportStopping,
        ended: (e) => onImportDone?.({ paths: [...paths], reports: e.result ?? [], error: e.error }),
      },
    );
  }

  /** Stops the app's import after the batch in hand (see ImportOptions.signal); false when none runs. */
  cancelImport(): boolean {
    return this.importTask.stop();
  }

  /** An export piped in (`audit import -`), in turn with the imports of files. */
  async importStream(input: AsyncIterable<string>, opts?: ImportOptions): Promise<ImportReport> {
    return (
      await this.queuedImport(async () => [await importStream(this.store, input, { lockWait: this.lockWait, ...opts })])
    )[0];
  }

  private queuedImport(load: () => Promise<ImportReport[]>): Promise<ImportReport[]> {
    return this.imports.run(() =>
      this.told('import', async () => {
        // Indexes an earlier load here could not build (the disk was full, the cache stayed locked) are built first.
        await restoreIndexes(this.store, (step) =>
          whenWritable(this.store, step, {
            wait: this.lockWait,
            afterwards: 'nothing was imported; importing again builds them first',
          }),
        );
        const reports = await load();
        // Fresh statistics after a bulk load keep the planner choosing the filter indexes. They can
        // wait for the next import when the disk is full (the reports say so).
        // Nor while another process holds the cache: this thread would wait for it.
        try {
          this.store.tryWrite(() => this.store.db.pragma('optimize'), this.lockWait.attemptMs);
        } catch (err) {
          if (!isDiskFull(err) && !isBusy(err)) throw err;
        }
        return reports;
      }),
    );
  }

  /** Runs `task` recorded in the cache as this process's import or sync, which other processes' status tells (elsewhere). */
  private async told<T>(kind: 'import' | 'sync', task: () => Promise<T>): Promise<T> {
    // A note for other processes, not worth a wait: while another holds the cache it is left out.
    const end = this.store.tryWrite(() => this.store.beginActivity(kind), this.lockWait.attemptMs);
    try {
      return await task();
    } finally {
      this.store.tryWrite(end, this.lockWait.attemptMs);
    }
  }

  query(q: QueryInput): AuditQueryResponse {
    return queryEvents(this.store.db, q);
  }

  /**
   * A query whose search words are looked up in the team archive's full-text index when a team
   * server is set and answers (the rows still come from this cache, filled from the archive); this
   * cache's own index otherwise. The answer says which.
   */
  async querySearched(q: QueryInput): Promise<AuditQueryResponse> {
    const search = q.filters.search;
    const archive = search ? await this.teamArchive() : null;
    if (!search || !archive) return this.query(q);
    let found: Awaited<ReturnType<TeamAuditArchive['search']>>;
    try {
      found = await archive.search(search);
    } catch (err) {
      const why = isUnreachable(err) ? 'cannot be reached' : 'could not be used';
      const note = `the team server ${why} (${describe(err)}): searched this machine's cache`;
      return { ...this.query(q), searchedIn: { where: 'local', note } };
    }
    if (!found) return { ...this.query(q), searchedIn: { where: 'local', note: null } };
    const db = this.store.db;
    db.exec('CREATE TEMP TABLE IF NOT EXISTS team_matches (event_id TEXT PRIMARY KEY)');
    const put = db.prepare('INSERT OR IGNORE INTO temp.team_matches (event_id) VALUES (?)');
    const res = db.transaction(() => {
      db.exec('DELETE FROM temp.team_matches');
      for (const id of found.ids) put.run(id);
      return queryEvents(db, { ...q, filters: { ...q.filters, search: undefined }, inTable: 'temp.team_matches' });
    })();
    const note = found.capped ? `the first ${found.ids.length} matches of the team archive` : null;
    return { ...res, searchedIn: { where: 'team', note } };
  }

  event(eventId: string): AuditEventDetail | null {
    return eventDetail(this.store.db, eventId);
  }

  facets(filters: AuditFilters, limit = 50): AuditFacets {
    return facets(this.store.db, filters, limit);
  }

  timeline(filters: AuditFilters, bucket: 'hour' | 'day'): AuditTimeline {
    return timeline(this.store.db, filters, bucket);
  }

  export(request: {
    format: 'csv' | 'ndjson';
    path: string;
    filters: AuditFilters;
    sort: AuditSort;
  }): Promise<{ path: string; rows: number }> {
    return exportEvents(this.opts.dbPath, request);
  }

  async close(): Promise<void> {
    await this.running?.catch(() => {});
    await this.filling;
    await this.imports.idle();
    this.store.close();
  }
}
