import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { findTool, TOOLS, type ToolEntry } from '../../../shared/catalogue/index.ts';
import { DeskError } from '../../../shared/contract/define.ts';
import {
  isSettleSeconds,
  SETTLE_SECONDS,
  SETTLE_SECONDS_RULE,
  type HotFileState,
  type HotFolderRecord,
} from '../../../shared/contract/hot-folders.ts';
import { isAbsolutePath, type Settings } from '../../../shared/settings.ts';
import type { ApiTarget } from '../api/client.ts';
import { openDatabase, type Db } from '../db/open.ts';
import { assertParams } from '../engine/params-check.ts';
import { batchFieldOf } from '../engine/request.ts';
import { assertOutputFolder } from '../output-folder.ts';
import { batchResultsFolder, canonicalPath } from '../paths.ts';
import { loopOf, outputLoop } from './loops.ts';
import { followJobs, type JobReader } from './follow.ts';
import { HOT_FOLDER_MIGRATIONS } from './migrations.ts';
import { HotFolderStore, type FileState, type HotFolderRow } from './store.ts';

/** hot-folders.db in the data folder: its own file, so its migrations are numbered apart from the queue's. */
export function openHotFolderDb(path: string): Db {
  return openDatabase(path, HOT_FOLDER_MIGRATIONS);
}

/** A file's recorded state as people read it: claimed counts as waiting, rejected as skipped. */
const SHOWN: Record<FileState, HotFileState> = {
  waiting: 'waiting',
  queuing: 'waiting',
  queued: 'queued',
  done: 'done',
  failed: 'failed',
  skipped: 'skipped',
  rejected: 'skipped',
};
export const shownState = (s: FileState): HotFileState => SHOWN[s];

export interface HotFolderDeps {
  store: HotFolderStore;
  engine: JobReader & { holdsQueue: boolean; otherHolds(): boolean };
  target: () => Promise<ApiTarget>;
  settings: () => Settings;
  /** The web host's folder of browser drops (see batchResultsFolder). */
  inbox?: string;
  /** Whether a team server is set: a new hot folder is shared when one is. */
  teamServerSet?: () => Promise<boolean>;
}

/** hotFolders.list / add / pause / resume / remove: checked here, whichever process watches. */
export class HotFolders {
  private readonly deps: HotFolderDeps;

  constructor(deps: HotFolderDeps) {
    this.deps = deps;
  }

  list(): HotFolderRecord[] {
    followJobs(this.deps.store, this.deps.engine);
    return this.deps.store.folders().map((row) => this.record(row));
  }

  async add(req: {
    folder: string;
    tool: string;
    params: Record<string, unknown>;
    outDir?: string;
    settleSeconds?: number;
    shared?: boolean;
  }): Promise<HotFolderRecord> {
    const { store } = this.deps;
    const settleSeconds = checkedSettle(req.settleSeconds ?? SETTLE_SECONDS.default);
    const folder = await watchedFolder(req.folder);
    const existing = store.folderAt(folder);
    if (existing)
      throw new DeskError(
        'conflict',
        `${folder} is already a hot folder (${toolTitle(existing.tool)}); remove it first to watch it with other settings`,
      );
    const tool = findTool(req.tool);
    if (!tool)
      throw new DeskError('invalid', `unknown tool "${req.tool}"; known tools: ${TOOLS.map((t) => t.id).join(', ')}`, [
        { field: 'tool', reason: 'is not a known tool' },
      ]);
    if (!batchFieldOf(tool))
      throw new DeskError('invalid', `${tool.title} takes no input files, so it cannot process a folder`, [
        { field: 'tool', reason: 'takes no input files' },
      ]);
    await assertParams(tool, req.params, true);
    const outDir = await this.outputFolder(req.outDir, tool, folder);
    const shared = req.shared ?? (await this.deps.teamServerSet?.()) ?? false;
    const id = randomUUID();
    store.insertFolder({
      shared,
      id,
      folder,
      tool: tool.id,
      params: req.params,
      outDir,
      state: 'active',
      settleSeconds,
      createdAt: Date.now(),
    });
    return this.record(store.folder(id)!);
  }

  setSettle(id: string, seconds: number): HotFolderRecord {
    this.deps.store.setSettleSeconds(this.row(id).id, checkedSettle(seconds));
    return this.record(this.row(id));
  }

  /** Its problem is cleared: a shared folder's wait for the team server is said again if it still waits. */
  setShared(id: string, shared: boolean): HotFolderRecord {
    this.deps.store.setShared(this.row(id).id, shared);
    this.deps.store.setProblem(id, null);
    return this.record(this.row(id));
  }

  pause(id: string): HotFolderRecord {
    this.deps.store.setState(this.row(id).id, 'paused');
    return this.record(this.row(id));
  }

  /** Refused while its results could feed a watched folder (a folder changed since it was added). */
  resume(id: string): HotFolderRecord {
    const row = this.row(id);
    const loop = loopOf(row, this.deps.store.folders());
    if (loop) throw new DeskError('invalid', `cannot resume ${row.folder}: ${loop}; remove one of the two hot folders`);
    this.deps.store.setState(row.id, 'active');
    return this.record(this.row(id));
  }

  remove(id: string): { ok: true } {
    this.deps.store.removeFolder(this.row(id).id);
    return { ok: true };
  }

  private row(id: string): HotFolderRow {
    const row = this.deps.store.folder(id);
    if (!row) throw new DeskError('not_found', 'that hot folder is not there any more: it was removed');
    return row;
  }

  /** The output folder as batches.start takes it, and never inside the watched folder, whose results would be queued again. */
  private async outputFolder(given: string | undefined, tool: ToolEntry, folder: string): Promise<string> {
    const raw =
      given ?? (await batchResultsFolder(this.deps.settings().outputDir, tool.title, [folder], this.deps.inbox));
    if (!isAbsolutePath(raw))
      throw new DeskError('invalid', `output folder: ${raw} is not a full path`, [
        { field: 'outDir', reason: 'must be a full path' },
      ]);
    const outDir = await canonicalPath(raw);
    const others = this.deps.store.folders();
    const loop = outputLoop(outDir, [folder, ...others.map((f) => f.folder)]);
    if (loop) {
      const reason = `${loop}; choose a folder outside every hot folder`;
      throw new DeskError('invalid', `output folder: ${outDir} ${reason}`, [{ field: 'outDir', reason }]);
    }
    const feeding = others.find((f) => outputLoop(f.outDir, [folder]));
    if (feeding) {
      const reason = `the hot folder ${feeding.folder} writes its results to ${feeding.outDir}, so they would be processed here again`;
      throw new DeskError('invalid', `folder: ${folder} cannot be watched: ${reason}`, [{ field: 'folder', reason }]);
    }
    assertOutputFolder(outDir);
    return outDir;
  }

  private record(row: HotFolderRow): HotFolderRecord {
    const { store, engine } = this.deps;
    const raw = store.counts(row.id);
    const counts = { waiting: 0, queued: 0, done: 0, failed: 0, skipped: 0 };
    for (const [state, n] of Object.entries(raw)) counts[shownState(state as FileState)] += n;
    const last = store.lastFile(row.id);
    return {
      id: row.id,
      folder: row.folder,
      tool: row.tool,
      params: row.params,
      outDir: row.outDir,
      state: row.state,
      settleSeconds: row.settleSeconds,
      shared: row.shared,
      watched: row.state === 'active' && (engine.holdsQueue || engine.otherHolds()),
      counts,
      lastFile: last && {
        path: last.path,
        state: shownState(last.state),
        reason: last.reason,
        output: last.output,
        at: last.updatedAt,
      },
      problem: row.problem,
      createdAt: row.createdAt,
    };
  }
}

const toolTitle = (id: string) => findTool(id)?.title ?? id;

function checkedSettle(seconds: number): number {
  if (isSettleSeconds(seconds)) return seconds;
  const reason = `must be ${SETTLE_SECONDS_RULE}`;
  throw new DeskError('invalid', `the wait before a file is taken ${reason}; got ${seconds}`, [
    { field: 'settleSeconds', reason },
  ]);
}

/** The folder to watch, as the file system names it; refused when it is not a folder there now. */
async function watchedFolder(given: string): Promise<string> {
  if (!isAbsolutePath(given))
    throw new DeskError('invalid', `folder: ${given} is not a full path`, [
      { field: 'folder', reason: 'must be a full path' },
    ]);
  const st = await stat(given).catch(() => null);
  if (!st)
    throw new DeskError('invalid', `folder: ${given} does not exist`, [{ field: 'folder', reason: 'does not exist' }]);
  if (!st.isDirectory())
    throw new DeskError('invalid', `folder: ${given} is a file, not a folder`, [
      { field: 'folder', reason: 'is a file, not a folder' },
    ]);
  return canonicalPath(given);
}
