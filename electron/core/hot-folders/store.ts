import type { Db } from '../db/open.ts';

export type HotFolderState = 'active' | 'paused';
/** A file's way through a hot folder: seen and growing, claimed for the queue, then its job's end or why it was not run. */
export type FileState = 'waiting' | 'queuing' | 'queued' | 'done' | 'failed' | 'skipped' | 'rejected';

export interface HotFolderRow {
  id: string;
  folder: string;
  tool: string;
  params: Record<string, unknown>;
  outDir: string;
  state: HotFolderState;
  /** A file is taken once it has kept its size and time this long. */
  settleSeconds: number;
  /** Each file is claimed on the team server before it is queued, so one machine of the team takes it. */
  shared: boolean;
  /** The folder's id on the team server (FOLDER_ID_FILE); null until first read. */
  teamKey: string | null;
  problem: string | null;
  createdAt: number;
}

export interface FileRow {
  folderId: string;
  path: string;
  size: number;
  mtimeMs: number;
  state: FileState;
  jobId: string | null;
  reason: string | null;
  output: string | null;
  updatedAt: number;
}

/** A file as one stat saw it: the same path with another size or time is another version of it. */
export interface FileVersion {
  path: string;
  size: number;
  mtimeMs: number;
}

/** Where a claimed file went: queued as a job, or not run and why. */
export type Outcome =
  { path: string; state: 'queued'; jobId: string } | { path: string; state: 'skipped' | 'rejected'; reason: string };

interface RawFolder {
  id: string;
  folder: string;
  tool: string;
  params: string;
  out_dir: string;
  state: HotFolderState;
  settle_seconds: number;
  shared: number;
  team_key: string | null;
  problem: string | null;
  created_at: number;
}

interface RawFile {
  folder_id: string;
  path: string;
  size: number;
  mtime_ms: number;
  state: FileState;
  job_id: string | null;
  reason: string | null;
  output: string | null;
  updated_at: number;
}

const folderOf = (r: RawFolder): HotFolderRow => ({
  id: r.id,
  folder: r.folder,
  tool: r.tool,
  params: JSON.parse(r.params) as Record<string, unknown>,
  outDir: r.out_dir,
  state: r.state,
  settleSeconds: r.settle_seconds,
  shared: r.shared === 1,
  teamKey: r.team_key,
  problem: r.problem,
  createdAt: r.created_at,
});

const fileOf = (r: RawFile): FileRow => ({
  folderId: r.folder_id,
  path: r.path,
  size: r.size,
  mtimeMs: r.mtime_ms,
  state: r.state,
  jobId: r.job_id,
  reason: r.reason,
  output: r.output,
  updatedAt: r.updated_at,
});

/**
 * The hot folders and the files each has seen. A file version moves on only by compare-and-set
 * (waiting -> queuing -> queued -> done), so two processes, or one restarted, never queue it twice.
 */
export class HotFolderStore {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  folders(): HotFolderRow[] {
    return (this.db.prepare('SELECT * FROM hot_folders ORDER BY created_at, folder').all() as RawFolder[]).map(
      folderOf,
    );
  }

  folder(id: string): HotFolderRow | null {
    const r = this.db.prepare('SELECT * FROM hot_folders WHERE id = ?').get(id) as RawFolder | undefined;
    return r ? folderOf(r) : null;
  }

  folderAt(folder: string): HotFolderRow | null {
    const r = this.db.prepare('SELECT * FROM hot_folders WHERE folder = ?').get(folder) as RawFolder | undefined;
    return r ? folderOf(r) : null;
  }

  insertFolder(row: Omit<HotFolderRow, 'problem' | 'teamKey' | 'shared'> & { shared?: boolean }): void {
    this.db
      .prepare(
        `INSERT INTO hot_folders (id, folder, tool, params, out_dir, state, settle_seconds, created_at, shared)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        row.id,
        row.folder,
        row.tool,
        JSON.stringify(row.params),
        row.outDir,
        row.state,
        row.settleSeconds,
        row.createdAt,
        row.shared ? 1 : 0,
      );
  }

  setShared(id: string, shared: boolean): void {
    this.db.prepare('UPDATE hot_folders SET shared = ? WHERE id = ?').run(shared ? 1 : 0, id);
  }

  setTeamKey(id: string, teamKey: string): void {
    this.db.prepare('UPDATE hot_folders SET team_key = ? WHERE id = ?').run(teamKey, id);
  }

  /** The shared hot folder's id and the file version a job was queued for; null for any other job. */
  sharedFileOfJob(jobId: string): { teamKey: string; version: FileVersion } | null {
    const r = this.db
      .prepare(
        `SELECT h.team_key, f.path, f.size, f.mtime_ms FROM hot_folder_files f
         JOIN hot_folders h ON h.id = f.folder_id WHERE f.job_id = ? AND h.shared = 1 AND h.team_key IS NOT NULL`,
      )
      .get(jobId) as { team_key: string; path: string; size: number; mtime_ms: number } | undefined;
    if (!r) return null;
    return { teamKey: r.team_key, version: { path: r.path, size: r.size, mtimeMs: r.mtime_ms } };
  }

  setSettleSeconds(id: string, seconds: number): void {
    this.db.prepare('UPDATE hot_folders SET settle_seconds = ? WHERE id = ?').run(seconds, id);
  }

  /** Paused or resumed by a person: the problem and the spend guard's count start again. */
  setState(id: string, state: HotFolderState): void {
    this.db.prepare('UPDATE hot_folders SET state = ?, problem = NULL, unsourced_jobs = 0 WHERE id = ?').run(state, id);
  }

  /** Stopped by the watcher, saying why (the count is kept until a person resumes it). */
  pauseWithProblem(id: string, problem: string): void {
    this.db.prepare("UPDATE hot_folders SET state = 'paused', problem = ? WHERE id = ?").run(problem, id);
  }

  /** The spend guard's count of a folder's jobs from files that look like MediaDesk's results. */
  unsourcedJobs(id: string): number {
    const r = this.db.prepare('SELECT unsourced_jobs AS n FROM hot_folders WHERE id = ?').get(id) as
      { n: number } | undefined;
    return r?.n ?? 0;
  }

  addUnsourcedJobs(id: string, n: number): void {
    if (n > 0) this.db.prepare('UPDATE hot_folders SET unsourced_jobs = unsourced_jobs + ? WHERE id = ?').run(n, id);
  }

  setProblem(id: string, problem: string | null): void {
    this.db.prepare('UPDATE hot_folders SET problem = ? WHERE id = ? AND problem IS NOT ?').run(problem, id, problem);
  }

  removeFolder(id: string): void {
    this.db.prepare('DELETE FROM hot_folders WHERE id = ?').run(id);
  }

  file(folderId: string, path: string): FileRow | null {
    const r = this.db.prepare('SELECT * FROM hot_folder_files WHERE folder_id = ? AND path = ?').get(folderId, path) as
      RawFile | undefined;
    return r ? fileOf(r) : null;
  }

  /**
   * Records a version of a file just seen; true when it still has to be queued. A version already
   * queued or finished stays as it is; another version (the file replaced) waits again.
   */
  seen(folderId: string, v: FileVersion): boolean {
    const now = Date.now();
    this.db
      .prepare(
        `INSERT INTO hot_folder_files (folder_id, path, size, mtime_ms, state, updated_at) VALUES (?, ?, ?, ?, 'waiting', ?)
         ON CONFLICT (folder_id, path) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms,
           state = CASE WHEN state = 'queuing' THEN 'queuing' ELSE 'waiting' END,
           job_id = NULL, reason = NULL, output = NULL, updated_at = excluded.updated_at
         WHERE size != excluded.size OR mtime_ms != excluded.mtime_ms`,
      )
      .run(folderId, v.path, v.size, v.mtimeMs, now);
    const row = this.file(folderId, v.path)!;
    return row.state === 'waiting' || row.state === 'queuing';
  }

  /** Claims settled versions for the queue (waiting or left queuing by a stopped process); returns those claimed. */
  claim(folderId: string, versions: readonly FileVersion[]): FileVersion[] {
    const update = this.db.prepare(
      `UPDATE hot_folder_files SET state = 'queuing', updated_at = ?
       WHERE folder_id = ? AND path = ? AND size = ? AND mtime_ms = ? AND state IN ('waiting', 'queuing')`,
    );
    return this.db.transaction(() =>
      versions.filter((v) => update.run(Date.now(), folderId, v.path, v.size, v.mtimeMs).changes === 1),
    )();
  }

  /** What the queue made of the claimed files, in one transaction. */
  settleClaims(folderId: string, outcomes: readonly Outcome[]): void {
    const update = this.db.prepare(
      `UPDATE hot_folder_files SET state = ?, job_id = ?, reason = ?, updated_at = ?
       WHERE folder_id = ? AND path = ? AND state = 'queuing'`,
    );
    this.db.transaction(() => {
      for (const o of outcomes)
        update.run(
          o.state,
          o.state === 'queued' ? o.jobId : null,
          o.state === 'queued' ? null : o.reason,
          Date.now(),
          folderId,
          o.path,
        );
    })();
  }

  /** Claimed files the queue could not take now (the folder has a problem): waiting again. */
  unclaim(folderId: string, paths: readonly string[]): void {
    const update = this.db.prepare(
      `UPDATE hot_folder_files SET state = 'waiting' WHERE folder_id = ? AND path = ? AND state = 'queuing'`,
    );
    this.db.transaction(() => paths.forEach((p) => update.run(folderId, p)))();
  }

  /** A file that went away before it was queued. */
  forget(folderId: string, path: string): void {
    this.db
      .prepare(`DELETE FROM hot_folder_files WHERE folder_id = ? AND path = ? AND state = 'waiting'`)
      .run(folderId, path);
  }

  /** Files whose job may still change: queued, and failed ones (a retry from the Queue). */
  followed(): FileRow[] {
    return (
      this.db
        .prepare(`SELECT * FROM hot_folder_files WHERE job_id IS NOT NULL AND state IN ('queued', 'failed')`)
        .all() as RawFile[]
    ).map(fileOf);
  }

  /** A job's end, recorded for the file it was queued for. */
  setJobOutcome(
    row: FileRow,
    state: 'queued' | 'done' | 'failed',
    reason: string | null,
    output: string | null,
  ): boolean {
    return (
      this.db
        .prepare(
          `UPDATE hot_folder_files SET state = ?, reason = ?, output = ?, updated_at = ?
           WHERE folder_id = ? AND path = ? AND job_id = ? AND state = ?`,
        )
        .run(state, reason, output, Date.now(), row.folderId, row.path, row.jobId, row.state).changes === 1
    );
  }

  counts(folderId: string): Record<FileState, number> {
    const counts: Record<FileState, number> = {
      waiting: 0,
      queuing: 0,
      queued: 0,
      done: 0,
      failed: 0,
      skipped: 0,
      rejected: 0,
    };
    const rows = this.db
      .prepare('SELECT state, COUNT(*) AS n FROM hot_folder_files WHERE folder_id = ? GROUP BY state')
      .all(folderId) as { state: FileState; n: number }[];
    for (const r of rows) counts[r.state] = r.n;
    return counts;
  }

  lastFile(folderId: string): FileRow | null {
    const r = this.db
      .prepare('SELECT * FROM hot_folder_files WHERE folder_id = ? ORDER BY updated_at DESC, rowid DESC LIMIT 1')
      .get(folderId) as RawFile | undefined;
    return r ? fileOf(r) : null;
  }

  /** Files of a folder still waiting or claimed, for a process that starts watching it. */
  pending(folderId: string): FileRow[] {
    return (
      this.db
        .prepare(`SELECT * FROM hot_folder_files WHERE folder_id = ? AND state IN ('waiting', 'queuing')`)
        .all(folderId) as RawFile[]
    ).map(fileOf);
  }
}
