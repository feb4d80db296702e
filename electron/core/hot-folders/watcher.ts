import type { FSWatcher } from 'chokidar';
import type { Stats } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { DeskError } from '../../../shared/contract/define.ts';
import { SETTLE_SECONDS } from '../../../shared/contract/hot-folders.ts';
import type { BatchStartResult } from '../../../shared/contract/jobs.ts';
import { isIgnoredName } from '../../../shared/validation/system-files.ts';
import type { StartRequest } from '../engine/planner.ts';
import { canonicalPath } from '../paths.ts';
import { realClock, type Clock, type ClockTimer } from '../clock.ts';
import { wholeNumberFromEnv } from '../env-number.ts';
import { followJobs, type JobReader } from './follow.ts';
import { carriesProvenance, looksLikeResult, loopOf } from './loops.ts';
import { isUnreachable, describe as describeTeamError } from '../team-server/connection.ts';
import { claimKeyOf, folderKeyOf, NoTeamServerError, type ClaimKey, type SharedHotFolders } from './shared.ts';
import type { FileVersion, HotFolderRow, HotFolderStore, Outcome } from './store.ts';

/** How often waiting files are looked at; a folder's own wait (settleSeconds, at least 1 s) says when one is taken. */
const TICK_MS = 250;
/** After the queue refused a folder's files (its output folder cannot be written), they are offered again this much later. */
const RETRY_MS = 30_000;
/** A hot folder's problems this watcher sets, and clears once they are over. */
const FOLDER_GONE =
  'is not there any more (moved, renamed or its drive unplugged); put it back or remove this hot folder';
const FILES_WAIT = 'its files wait: ';
const LOOP = 'not watched: ';
const MADE_HERE = 'MediaDesk made it (a result): a hot folder never processes results again';
/** A shared folder's files wait while the team server cannot say which machine takes each (docs/TEAM.md). */
const SHARED_WAIT = 'shared with the team, so its files wait: ';
/** How soon a shared folder's files are offered again after the team server could not be asked. */
const SHARED_RETRY_MS = 5000;
/**
 * The spend guard: a folder that queues more jobs than this from files named as MediaDesk names
 * results (files it did not see arrive from outside) is paused until a person resumes it.
 */
export const GUARD_JOBS = 20;

/** The guard's limit: MEDIADESK_HOT_FOLDER_GUARD when set to a whole number (tests), else GUARD_JOBS. */
export function guardJobsFrom(env: NodeJS.ProcessEnv = process.env): number {
  return wholeNumberFromEnv(env, 'MEDIADESK_HOT_FOLDER_GUARD') ?? GUARD_JOBS;
}

/** Loaded when a folder is first watched: a process that opens the core without watching never loads it. */
let chokidar: Promise<typeof import('chokidar')> | undefined;

/** Watches one folder: chokidar's `watch`, or a test's own. */
export type FolderWatch = typeof import('chokidar').watch;

export interface WatchedEngine extends JobReader {
  readonly holdsQueue: boolean;
  startBatch(req: StartRequest): Promise<BatchStartResult>;
  /** Whether a job or app run of this data folder wrote the file. */
  isResult(path: string): boolean;
}

/** What happened to a file, for a terminal's log (`mediadesk watch`). */
export interface FileEvent {
  folder: string;
  path: string;
  state: 'queued' | 'done' | 'failed' | 'skipped';
  reason: string | null;
  output: string | null;
}

interface Candidate {
  folderId: string;
  version: FileVersion;
  /** When its size and time were last seen to change. */
  since: number;
}

interface Watch {
  row: HotFolderRow;
  watcher: FSWatcher;
}

/**
 * Watches the active hot folders while this process holds the queue (so no folder is watched twice)
 * and queues each settled file through batches.start. A file is claimed before it is queued and its
 * job recorded after: a restart between the two queues it again, which Start resumes, never doubles.
 */
export class HotFolderWatcher {
  private readonly store: HotFolderStore;
  private readonly engine: WatchedEngine;
  private readonly watches = new Map<string, Watch>();
  private readonly candidates = new Map<string, Candidate>();
  private readonly queuing = new Map<string, Promise<void>>();
  private readonly retryAt = new Map<string, number>();
  private readonly listeners = new Set<(e: FileEvent) => void>();
  private readonly onProblem: (message: string) => void;
  private readonly guardJobs: number;
  private readonly clock: Clock;
  private timer: ClockTimer | null = null;
  private ticking: Promise<void> | null = null;
  private readonly shared: SharedHotFolders | null;
  private renewedAt = 0;
  private readonly watch: FolderWatch | null;

  constructor(o: {
    store: HotFolderStore;
    engine: WatchedEngine;
    onProblem?: (message: string) => void;
    guardJobs?: number;
    /** The time a file's wait is measured on, and its ticks' timer; real time by default. */
    clock?: Clock;
    /** The team server's claims, for shared hot folders; without it their files wait. */
    shared?: SharedHotFolders | null;
    /** How a folder is watched: chokidar's `watch` by default. */
    watch?: FolderWatch;
  }) {
    this.watch = o.watch ?? null;
    this.shared = o.shared ?? null;
    this.store = o.store;
    this.engine = o.engine;
    this.onProblem = o.onProblem ?? (() => {});
    this.guardJobs = o.guardJobs ?? GUARD_JOBS;
    this.clock = o.clock ?? realClock;
  }

  onFile(listener: (e: FileEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The folders watched now (none while another process holds the queue). */
  get watching(): string[] {
    return [...this.watches.values()].map((w) => w.row.folder);
  }

  start(): void {
    if (this.timer) return;
    const next = () => (this.timer = this.clock.setTimeout(() => (next(), void this.tick()), TICK_MS));
    next();
    void this.tick();
  }

  /** Stops watching; a queue step in flight finishes first, so its files are recorded as queued. */
  async stop(): Promise<void> {
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    await this.ticking;
    await Promise.allSettled([...this.queuing.values()]);
    await this.closeAll();
  }

  private tick(): Promise<void> {
    if (this.ticking) return this.ticking;
    this.ticking = this.step()
      .catch((err) => this.onProblem(`hot folders: ${(err as Error).message}`))
      .finally(() => (this.ticking = null));
    return this.ticking;
  }

  private async step(): Promise<void> {
    if (!this.engine.holdsQueue) return this.closeAll();
    await this.syncWatches();
    await this.renewClaims();
    for (const c of followJobs(this.store, this.engine)) {
      const folder = this.watches.get(c.row.folderId)?.row.folder ?? dirname(c.row.path);
      if (c.state !== 'queued')
        this.emit({ folder, path: c.row.path, state: c.state, reason: c.reason, output: c.output });
    }
    await this.settle();
  }

  private emit(e: FileEvent): void {
    for (const l of this.listeners) l(e);
  }

  /** Watches each active folder that is there, and lets go of paused, removed and vanished ones. */
  private async syncWatches(): Promise<void> {
    const all = this.store.folders();
    const active = new Map(all.filter((f) => f.state === 'active').map((f) => [f.id, f]));
    // Checked on every step, not only when added: a folder added, moved or linked since may close a loop.
    for (const row of active.values()) {
      const loop = loopOf(row, all);
      if (loop) {
        this.store.setProblem(row.id, `${LOOP}${loop}; remove one of the two hot folders`);
        active.delete(row.id);
      } else if (row.problem?.startsWith(LOOP)) this.store.setProblem(row.id, (row.problem = null));
    }
    for (const [id, w] of this.watches) {
      const row = active.get(id);
      if (!row || row.outDir !== w.row.outDir || row.tool !== w.row.tool) await this.unwatch(id);
      else w.row = row;
    }
    for (const row of active.values()) {
      const there = (await stat(row.folder).catch(() => null))?.isDirectory();
      if (!there) {
        this.store.setProblem(row.id, `${row.folder} ${FOLDER_GONE}`);
        await this.unwatch(row.id);
        continue;
      }
      if (this.watches.has(row.id)) continue;
      if (row.problem?.endsWith(FOLDER_GONE)) this.store.setProblem(row.id, null);
      this.watchFolder(row, this.watch ?? (await (chokidar ??= import('chokidar'))).watch);
    }
  }

  private watchFolder(row: HotFolderRow, watch: FolderWatch): void {
    // depth 0: files placed directly in the folder. The first scan reports the files already there,
    // those that arrived while no process watched among them.
    const watcher = watch(row.folder, {
      depth: 0,
      ignoreInitial: false,
      alwaysStat: true,
      ignored: (path: string) => path !== row.folder && isIgnoredName(basename(path)),
    });
    const seen = (path: string, stats?: Stats) => {
      if (stats && stats.isFile() && dirname(path) === row.folder) this.seen(row.id, path, stats);
    };
    watcher.on('add', seen);
    watcher.on('change', seen);
    watcher.on('unlink', (path: string) => {
      this.candidates.delete(key(row.id, path));
      this.store.forget(row.id, path);
    });
    watcher.on('error', (err: unknown) => this.onProblem(`hot folder ${row.folder}: ${(err as Error).message}`));
    // chokidar reads the folder before it starts watching it: a file that lands in between is in neither,
    // and waits for the folder's next change. One more look once it watches takes it.
    watcher.once('ready', () => void this.lookAgain(row, watcher, seen));
    this.watches.set(row.id, { row, watcher });
    for (const file of this.store.pending(row.id))
      this.candidates.set(key(row.id, file.path), {
        folderId: row.id,
        version: { path: file.path, size: file.size, mtimeMs: file.mtimeMs },
        since: this.clock.now(),
      });
  }

  private async lookAgain(row: HotFolderRow, watcher: FSWatcher, seen: (path: string, stats?: Stats) => void) {
    // A folder gone meanwhile: the next step says so.
    for (const name of await readdir(row.folder).catch(() => [])) {
      if (isIgnoredName(name)) continue;
      const path = join(row.folder, name);
      const stats = await stat(path).catch(() => undefined);
      // Unwatched (paused, removed) while it looked: nothing more is taken.
      if (this.watches.get(row.id)?.watcher !== watcher) return;
      seen(path, stats);
    }
  }

  private seen(folderId: string, path: string, stats: Stats): void {
    const version = { path, size: stats.size, mtimeMs: Math.trunc(stats.mtimeMs) };
    if (!this.store.seen(folderId, version)) return;
    const k = key(folderId, path);
    const known = this.candidates.get(k);
    if (known && sameVersion(known.version, version)) return;
    this.candidates.set(k, { folderId, version, since: this.clock.now() });
  }

  private async unwatch(id: string): Promise<void> {
    const w = this.watches.get(id);
    if (!w) return;
    this.watches.delete(id);
    for (const [k, c] of this.candidates) if (c.folderId === id) this.candidates.delete(k);
    await w.watcher.close();
  }

  private async closeAll(): Promise<void> {
    await Promise.all([...this.watches.keys()].map((id) => this.unwatch(id)));
  }

  /** Stats each waiting file; those unchanged for their folder's settleSeconds are queued, one batch per folder. */
  private async settle(): Promise<void> {
    const now = this.clock.now();
    const ready = new Map<string, FileVersion[]>();
    for (const [k, c] of [...this.candidates]) {
      if (this.queuing.has(c.folderId) || (this.retryAt.get(c.folderId) ?? 0) > now) continue;
      const st = await stat(c.version.path).catch(() => null);
      if (!st?.isFile()) {
        this.candidates.delete(k);
        this.store.forget(c.folderId, c.version.path);
        continue;
      }
      const version = { path: c.version.path, size: st.size, mtimeMs: Math.trunc(st.mtimeMs) };
      if (!sameVersion(version, c.version)) {
        this.candidates.set(k, { ...c, version, since: now });
        this.store.seen(c.folderId, version);
        continue;
      }
      // An empty file is a copy that has not begun: it waits for its bytes.
      const settleMs = (this.watches.get(c.folderId)?.row.settleSeconds ?? SETTLE_SECONDS.default) * 1000;
      if (version.size === 0 || now - c.since < settleMs) continue;
      ready.set(c.folderId, [...(ready.get(c.folderId) ?? []), version]);
    }
    for (const [folderId, versions] of ready) {
      const w = this.watches.get(folderId);
      if (!w) continue;
      const step = this.queue(w.row, versions).finally(() => this.queuing.delete(folderId));
      this.queuing.set(folderId, step);
    }
  }

  /** Keeps this process's claims on shared folders' files alive while their jobs wait in the queue. */
  private async renewClaims(): Promise<void> {
    const claims = this.shared?.claims;
    if (!claims || this.clock.now() - this.renewedAt < claims.leaseMs / 3) return;
    if (![...this.watches.values()].some((w) => w.row.shared)) return;
    this.renewedAt = this.clock.now();
    // Unrenewed, a claim may be taken over; its create is then not sent here (SharedHotFolders.beforeCreate).
    await claims.renew().catch(() => {});
  }

  /**
   * Of a shared folder's files claimed here, those the team server gives this process; files another
   * machine settled are recorded as skipped, those it still holds wait. Null: none may go now.
   */
  private async claimForTeam(
    row: HotFolderRow,
    claimed: FileVersion[],
  ): Promise<{ mine: FileVersion[]; keys: Map<string, ClaimKey> } | null> {
    const wait = (why: string) => {
      this.store.unclaim(
        row.id,
        claimed.map((v) => v.path),
      );
      this.store.setProblem(row.id, `${SHARED_WAIT}${why}`);
      this.retryAt.set(row.id, this.clock.now() + SHARED_RETRY_MS);
      for (const v of claimed) this.candidates.set(key(row.id, v.path), { folderId: row.id, version: v, since: 0 });
      return null;
    };
    if (!this.shared) return wait('this process does not reach the team server');
    let keys: ClaimKey[];
    let answers;
    try {
      let teamKey = row.teamKey;
      if (!teamKey) this.store.setTeamKey(row.id, (teamKey = row.teamKey = await folderKeyOf(row.folder)));
      keys = claimed.map((v) => claimKeyOf(teamKey!, v));
      answers = await this.shared.claims.claim(keys);
    } catch (err) {
      if (err instanceof NoTeamServerError) return wait(`${err.message}; or stop sharing it to process it here alone`);
      if (isUnreachable(err)) return wait(`the team server cannot be reached (${describeTeamError(err)})`);
      return wait((err as Error).message);
    }
    if (row.problem?.startsWith(SHARED_WAIT)) this.store.setProblem(row.id, (row.problem = null));
    const mine: FileVersion[] = [];
    const elsewhere: Outcome[] = [];
    const held: FileVersion[] = [];
    claimed.forEach((v, i) => {
      const a = answers[i];
      if (a.mine) mine.push(v);
      else if (a.settled)
        elsewhere.push({ path: v.path, state: 'rejected', reason: `taken by ${a.by} (a shared hot folder)` });
      else held.push(v);
    });
    if (elsewhere.length) this.record(row, elsewhere);
    if (held.length) {
      // Held by a machine that is still there: asked again once its lease may have ended.
      this.store.unclaim(
        row.id,
        held.map((v) => v.path),
      );
      const later = this.clock.now() + this.shared.claims.leaseMs / 2;
      for (const v of held) this.candidates.set(key(row.id, v.path), { folderId: row.id, version: v, since: later });
    }
    return { mine, keys: new Map(mine.map((v) => [v.path, keys[claimed.indexOf(v)]])) };
  }

  /** Shared files this process will not send (not to be run, or given back): settled or released on the team server. */
  private async endClaims(keys: Map<string, ClaimKey>, paths: readonly string[], how: 'settle' | 'release') {
    const mine = paths.map((p) => keys.get(p)).filter((k): k is ClaimKey => !!k);
    if (!mine.length || !this.shared) return;
    await this.shared.claims[how](mine).catch((err) => this.onProblem(`shared hot folder: ${(err as Error).message}`));
  }

  private async queue(row: HotFolderRow, versions: FileVersion[]): Promise<void> {
    let claimed = this.store.claim(row.id, versions);
    for (const v of versions) this.candidates.delete(key(row.id, v.path));
    let teamKeys = new Map<string, ClaimKey>();
    if (claimed.length && row.shared) {
      const team = await this.claimForTeam(row, claimed);
      [claimed, teamKeys] = team ? [team.mine, team.keys] : [[], teamKeys];
    }
    if (!claimed.length) return;
    // batches.start names inputs as the file system does (links resolved): map them back.
    const byCanonical = new Map<string, string>();
    const ours: Outcome[] = [];
    for (const v of claimed) {
      const canonical = await canonicalPath(v.path);
      if (this.engine.isResult(canonical) || (await carriesProvenance(v.path)))
        ours.push({ path: v.path, state: 'rejected', reason: MADE_HERE });
      else byCanonical.set(canonical, v.path);
    }
    if (ours.length) {
      this.record(row, ours);
      await this.endClaims(
        teamKeys,
        ours.map((o) => o.path),
        'settle',
      );
    }
    if (!byCanonical.size) return;
    const unsourced = [...byCanonical.values()].filter(looksLikeResult).length;
    if (unsourced && this.store.unsourcedJobs(row.id) + unsourced > this.guardJobs) {
      this.store.unclaim(row.id, [...byCanonical.values()]);
      await this.endClaims(teamKeys, [...byCanonical.values()], 'release');
      this.store.pauseWithProblem(
        row.id,
        `paused by the spend guard: it would queue more than ${this.guardJobs} jobs from files named as MediaDesk names its results, ` +
          'which it did not see arrive from outside (does something copy results back into it?); resume it once that is fixed',
      );
      this.onProblem(`hot folder ${row.folder}: paused by the spend guard`);
      // Watched afresh when resumed, which offers its waiting files again.
      await this.unwatch(row.id);
      return;
    }
    let started: BatchStartResult;
    // Until the jobs are recorded with their files, the engine's gate finds a shared file by its job's path.
    const queued = this.shared?.queuingNow(
      new Map([...byCanonical].filter(([, p]) => teamKeys.has(p)).map(([c, p]) => [c, teamKeys.get(p)!])),
    );
    try {
      started = await this.engine.startBatch({
        tool: row.tool,
        inputs: [...byCanonical.keys()],
        params: row.params,
        outDir: row.outDir,
      });
    } catch (err) {
      const taken = new Set(byCanonical.values());
      const waiting = claimed.filter((v) => taken.has(v.path));
      this.store.unclaim(
        row.id,
        waiting.map((v) => v.path),
      );
      queued?.();
      await this.endClaims(
        teamKeys,
        waiting.map((v) => v.path),
        'release',
      );
      const message = err instanceof DeskError ? err.describe() : (err as Error).message;
      this.store.setProblem(row.id, `${FILES_WAIT}${message}`);
      this.retryAt.set(row.id, this.clock.now() + RETRY_MS);
      for (const v of waiting) this.candidates.set(key(row.id, v.path), { folderId: row.id, version: v, since: 0 });
      return;
    }
    this.retryAt.delete(row.id);
    if (row.problem?.startsWith(FILES_WAIT)) this.store.setProblem(row.id, null);
    const outcomes = new Map<string, Outcome>();
    const local = (path: string | null) => (path === null ? undefined : (byCanonical.get(path) ?? path));
    for (const job of this.engine.jobRows(started.jobIds)) {
      const path = local(job.inputPath);
      if (path) outcomes.set(path, { path, state: 'queued', jobId: job.id });
    }
    for (const s of started.skipped)
      outcomes.set(local(s.path)!, { path: local(s.path)!, state: 'skipped', reason: s.reason });
    for (const r of started.rejected)
      outcomes.set(local(r.path)!, { path: local(r.path)!, state: 'rejected', reason: r.reason });
    for (const v of byCanonical.values())
      if (!outcomes.has(v))
        outcomes.set(v, { path: v, state: 'rejected', reason: 'the queue did not take it; add it again' });
    this.record(row, [...outcomes.values()]);
    queued?.();
    await this.endClaims(
      teamKeys,
      [...outcomes.values()].filter((o) => o.state !== 'queued').map((o) => o.path),
      'settle',
    );
    this.store.addUnsourcedJobs(
      row.id,
      [...outcomes.values()].filter((o) => o.state === 'queued' && looksLikeResult(o.path)).length,
    );
  }

  /** Records what became of claimed files and tells the listeners. */
  private record(row: HotFolderRow, outcomes: readonly Outcome[]): void {
    this.store.settleClaims(row.id, outcomes);
    for (const o of outcomes)
      this.emit({
        folder: row.folder,
        path: o.path,
        state: o.state === 'rejected' ? 'skipped' : o.state,
        reason: o.state === 'queued' ? null : o.reason,
        output: null,
      });
  }
}

const key = (folderId: string, path: string) => `${folderId}\u0000${path}`;
const sameVersion = (a: FileVersion, b: FileVersion) => a.size === b.size && a.mtimeMs === b.mtimeMs;
