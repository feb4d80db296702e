import { join } from 'node:path';
import type { ResultKind } from '../../../shared/catalogue/index.ts';
import { keylessIdentity } from '../../../shared/contract/foundation.ts';
import { portableName } from '../../../shared/file-names.ts';
import type { AppRun } from '../../../shared/contract/team.ts';
import { openDatabase, type Db } from '../db/open.ts';
import { extensionOf, longestExt, metaPartPathOf, partPathOf, stemOf } from '../downloads/naming.ts';
import type { JobState } from '../../../shared/contract/jobs.ts';
import type { MetadataSettings } from '../../../shared/settings.ts';
import { canMove } from '../queue/states.ts';
import { sandboxGone } from '../queue/store.ts';
import { APPS_LEDGER, APPS_MIGRATIONS } from './migrations.ts';
import type { RunResult } from './wire.ts';

export interface AppRunRow {
  id: string;
  appId: string;
  appName: string;
  outputKind: string;
  cost: number | null;
  state: JobState;
  inputs: Record<string, unknown>;
  outDir: string;
  /** Backend.identity() of the server the run is for; null for runs queued before it was recorded. */
  backend: string | null;
  attemptId: string | null;
  attempts: number;
  runId: string | null;
  runStatus: string | null;
  /** As the server gave them (wire.ts RunResult): each with its kind when the server said which. */
  results: RunResult[] | null;
  expiresAt: number | null;
  outputs: string[];
  error: string | null;
  invalid: { field: string; reason: string }[] | null;
  nextPollAt: number | null;
  submittedAt: number | null;
  /** The queue owner whose built-in Sandbox has this run (migration 7); null on the live service. */
  sandboxOf: string | null;
  /** The local image each creation input was read from, by input id (apps migration 2; {} before). */
  sources: Record<string, string>;
  /** The metadata settings the run was queued with (apps migration 2); null before: the settings now. */
  metadata: MetadataSettings | null;
  createdAt: number;
  updatedAt: number;
}

/** Columns a move may set along with the state. */
export type RunPatch = Partial<
  Pick<
    AppRunRow,
    | 'backend'
    | 'attemptId'
    | 'attempts'
    | 'runId'
    | 'runStatus'
    | 'results'
    | 'expiresAt'
    | 'outputs'
    | 'error'
    | 'invalid'
    | 'nextPollAt'
    | 'submittedAt'
    | 'sandboxOf'
  >
>;

const COLUMNS: Record<keyof RunPatch, [string, boolean]> = {
  backend: ['backend', false],
  attemptId: ['attempt_id', false],
  attempts: ['attempts', false],
  runId: ['run_id', false],
  runStatus: ['run_status', false],
  results: ['results', true],
  expiresAt: ['expires_at', false],
  outputs: ['outputs', true],
  error: ['error', false],
  invalid: ['invalid', true],
  nextPollAt: ['next_poll_at', false],
  submittedAt: ['submitted_at', false],
  sandboxOf: ['sandbox_of', false],
};

interface Raw {
  id: string;
  app_id: string;
  app_name: string;
  output_kind: string;
  cost: number | null;
  state: JobState;
  inputs: string;
  out_dir: string;
  backend: string | null;
  attempt_id: string | null;
  attempts: number;
  run_id: string | null;
  run_status: string | null;
  results: string | null;
  expires_at: number | null;
  outputs: string;
  error: string | null;
  invalid: string | null;
  next_poll_at: number | null;
  submitted_at: number | null;
  sandbox_of: string | null;
  sources: string | null;
  metadata: string | null;
  created_at: number;
  updated_at: number;
}

const fromRaw = (r: Raw): AppRunRow => ({
  id: r.id,
  appId: r.app_id,
  appName: r.app_name,
  outputKind: r.output_kind,
  cost: r.cost,
  state: r.state,
  inputs: JSON.parse(r.inputs),
  outDir: r.out_dir,
  backend: r.backend,
  attemptId: r.attempt_id,
  attempts: r.attempts,
  runId: r.run_id,
  runStatus: r.run_status,
  results: r.results ? JSON.parse(r.results) : null,
  expiresAt: r.expires_at,
  outputs: JSON.parse(r.outputs),
  error: r.error,
  invalid: r.invalid ? JSON.parse(r.invalid) : null,
  nextPollAt: r.next_poll_at,
  submittedAt: r.submitted_at,
  sandboxOf: r.sandbox_of,
  sources: r.sources ? JSON.parse(r.sources) : {},
  metadata: r.metadata ? JSON.parse(r.metadata) : null,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** A run sent anew: nothing of the earlier attempt is kept (Retry, or the built-in Sandbox lost it: REQUEUE_FRESH). */
export const RUN_REQUEUE_FRESH = {
  error: null,
  invalid: null,
  runId: null,
  runStatus: null,
  results: null,
  outputs: [] as string[],
  nextPollAt: null,
  sandboxOf: null,
};

const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '') || 'app';
const kindOf = (k: string): ResultKind => (k === 'video' || k === 'audio' ? k : 'image');

/**
 * The name a run's results start with: by the one naming rule (stemOf), the local image a creation
 * input was read from, else the first text input (a brief, a prompt), then the app's name as a
 * tool's results carry the tool's (`product_product-shot-studio`); with neither, the app's name.
 */
export function appStem(r: Pick<AppRunRow, 'id' | 'appName' | 'inputs' | 'sources'>): string {
  const text = Object.entries(r.inputs).find(
    ([id, v]) => typeof v === 'string' && !(id in r.sources) && !/^(https?|data):/i.test(v),
  )?.[1];
  const stem = stemOf(Object.values(r.sources)[0] ?? null, r.id, text, { fallback: '' });
  return stem ? `${stem}_${slug(r.appName)}` : slug(r.appName);
}

/**
 * Where a run's results go, in order (before a collision suffix): `<stem>.<ext>`, later ones `_2`,
 * `_3`, as a tool's results are named. Downloads write each through its runParts, and only those
 * are ever removed as a run's parts, never a user's file beside them.
 */
export function plannedOutputs(
  r: Pick<AppRunRow, 'id' | 'appName' | 'outDir' | 'outputKind' | 'results' | 'inputs' | 'sources'>,
): string[] {
  const stem = appStem(r);
  return (r.results ?? []).map((res, i) =>
    outputPath(r.outDir, stem, i + 1, extensionOf(res.url, res.contentType, kindOf(res.kind ?? r.outputKind))),
  );
}

const outputPath = (outDir: string, stem: string, n: number, ext: string) =>
  join(outDir, portableName(`${stem}${n > 1 ? `_${n}` : ''}.${ext}`, `app-${n}.${ext}`));

/**
 * A result's part file and metadata copy, tagged with the run (its server id once known): two runs
 * with the same input name their results alike, and must not write into one part. A retry is sent
 * anew with a new run id, so its earlier parts are never resumed.
 */
export function runParts(r: Pick<AppRunRow, 'id' | 'runId'>, final: string): { part: string; twin: string } {
  const tag = (r.runId ?? r.id).slice(0, 8).replace(/[^A-Za-z0-9_-]/g, '_');
  return { part: partPathOf(`${final}.${tag}`), twin: metaPartPathOf(`${final}.${tag}`) };
}

/**
 * The longest path plannedOutputs can give a run of this app with this stem in `outDir` (up to 99
 * results, the kind's longest extension): what the path rules are checked on before the run is
 * paid for, with RUN_PART_ROOM more for its part files.
 */
export const longestOutput = (outDir: string, stem: string, outputKind: string) =>
  outputPath(outDir, stem, 99, longestExt(kindOf(outputKind)));

/** What runParts adds to a result's path beyond `.part`: the run's tag. */
export const RUN_PART_ROOM = '.xxxxxxxx'.length;

/** States a user may retry a run from. */
export const RETRYABLE: readonly AppRun['state'][] = ['failed', 'canceled', 'needs_attention'];

/**
 * What a retry does with a run: fetch its results again (paid, results known), poll it again
 * (submitted, then canceled here), or send it anew, which is a new paid run.
 */
export function retryPlan(r: Pick<AppRunRow, 'state' | 'runId' | 'results'>): 'download' | 'poll' | 'submit' {
  if (r.runId && r.results?.length) return 'download';
  if (r.runId && r.state === 'canceled') return 'poll';
  return 'submit';
}

export const toAppRun = (r: AppRunRow): AppRun => ({
  id: r.id,
  appId: r.appId,
  appName: r.appName,
  state: r.state,
  runStatus: r.runStatus,
  runId: r.runId,
  cost: r.cost,
  // Creation values may be whole images (base64): the record shows a short stand-in.
  inputs: Object.fromEntries(
    Object.entries(r.inputs).map(([k, v]) => [
      k,
      typeof v === 'string' && v.length > 200 ? `${v.slice(0, 40)}… (${v.length} characters)` : v,
    ]),
  ),
  outDir: r.outDir,
  backend: r.backend,
  outputs: r.outputs,
  error: r.error,
  invalid: r.invalid ?? [],
  resultsExpireAt: r.expiresAt,
  attempts: r.attempts,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
  retry: RETRYABLE.includes(r.state) ? retryPlan(r) : null,
});

/** The apps' own connection to mediadesk.db (`dbPaths(home).jobs`), its migrations applied; opened after the queue's. */
export function openAppRunStore(path: string): AppRunStore {
  return new AppRunStore(openDatabase(path, APPS_MIGRATIONS, { ledger: APPS_LEDGER }));
}

/**
 * App runs in mediadesk.db beside the tool jobs. Every state change is a compare-and-set on the
 * stored state (the queue's state machine), so a cancel racing a poll, or two processes, cannot
 * both win, and what is on disk is always the truth after a kill.
 */
export class AppRunStore {
  readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  insert(r: {
    id: string;
    appId: string;
    appName: string;
    outputKind: string;
    cost: number | null;
    inputs: Record<string, unknown>;
    outDir: string;
    backend: string;
    sources?: Record<string, string>;
    metadata?: MetadataSettings;
  }): AppRunRow {
    const now = Date.now();
    const seq = (this.db.prepare('SELECT COALESCE(MAX(seq), 0) + 1 AS n FROM app_runs').get() as { n: number }).n;
    this.db
      .prepare(
        `INSERT INTO app_runs (id, seq, app_id, app_name, output_kind, cost, state, inputs, out_dir, backend, sources, metadata, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        r.id,
        seq,
        r.appId,
        r.appName,
        r.outputKind,
        r.cost,
        JSON.stringify(r.inputs),
        r.outDir,
        r.backend,
        JSON.stringify(r.sources ?? {}),
        r.metadata ? JSON.stringify(r.metadata) : null,
        now,
        now,
      );
    return this.get(r.id)!;
  }

  get(id: string): AppRunRow | null {
    const r = this.db.prepare('SELECT * FROM app_runs WHERE id = ?').get(id) as Raw | undefined;
    return r ? fromRaw(r) : null;
  }

  /** Up to two run ids starting with `prefix` (the CLI shows the first 8 characters): one is a match. */
  idsStartingWith(prefix: string): string[] {
    if (!/^[0-9a-f-]{4,36}$/i.test(prefix)) return [];
    return (
      this.db
        .prepare("SELECT id FROM app_runs WHERE id LIKE ? || '%' ORDER BY seq DESC LIMIT 2")
        .all(prefix.toLowerCase()) as { id: string }[]
    ).map((r) => r.id);
  }

  inState(state: JobState, limit = 1000): AppRunRow[] {
    return (
      this.db.prepare('SELECT * FROM app_runs WHERE state = ? ORDER BY seq LIMIT ?').all(state, limit) as Raw[]
    ).map(fromRaw);
  }

  /** The name each of these apps' newest run was queued under, by app id. */
  appNames(appIds: readonly string[]): Map<string, string> {
    if (!appIds.length) return new Map();
    const rows = this.db
      .prepare(
        `SELECT app_id, app_name FROM app_runs WHERE app_id IN (${appIds.map(() => '?').join(',')}) ORDER BY seq`,
      )
      .all(...appIds) as { app_id: string; app_name: string }[];
    return new Map(rows.map((r) => [r.app_id, r.app_name]));
  }

  list(limit: number): AppRunRow[] {
    return (this.db.prepare('SELECT * FROM app_runs ORDER BY seq DESC LIMIT ?').all(limit) as Raw[]).map(fromRaw);
  }

  /**
   * The newest pending run (not settled, needing attention, or paid with only its download failed) of
   * this app, inputs, folder and backend: followed instead of queuing another, a re-run after Ctrl-C
   * never pays twice. Never one of another backend, where its run id means nothing.
   */
  unfinished(appId: string, outDir: string, inputs: Record<string, unknown>, backend: string): AppRunRow | null {
    const r = this.db
      .prepare(
        `SELECT * FROM app_runs WHERE app_id = ? AND out_dir = ? AND inputs = ? AND backend = ?
      AND (state IN ('queued', 'submitting', 'running', 'downloading', 'needs_attention') OR (state = 'failed' AND run_id IS NOT NULL AND results IS NOT NULL))
      ORDER BY seq DESC LIMIT 1`,
      )
      .get(appId, outDir, JSON.stringify(inputs), backend) as Raw | undefined;
    return r ? fromRaw(r) : null;
  }

  /** Runs queued before backends were recorded become `backend`'s: see QueueStore.adoptUnowned. */
  adoptUnowned(backend: string): number {
    return this.db
      .prepare('UPDATE app_runs SET backend = ? WHERE backend IS NULL OR backend = ?')
      .run(backend, keylessIdentity(backend)).changes;
  }

  /** Runs that have results and are not done: the only ones whose downloads can have left parts. */
  withResultsNotDone(): AppRunRow[] {
    return (
      this.db
        .prepare("SELECT * FROM app_runs WHERE results IS NOT NULL AND state != 'done' ORDER BY seq")
        .all() as Raw[]
    ).map(fromRaw);
  }

  changedSince(ms: number): AppRunRow[] {
    return (
      this.db.prepare('SELECT * FROM app_runs WHERE updated_at >= ? ORDER BY updated_at LIMIT 200').all(ms) as Raw[]
    ).map(fromRaw);
  }

  /** Folders the renderer may show media from (run outputs). */
  outDirs(): string[] {
    return (this.db.prepare('SELECT DISTINCT out_dir AS d FROM app_runs').all() as { d: string }[]).map((r) => r.d);
  }

  /**
   * The Sandbox-gone rule of tool jobs (JobStore.requeueGoneSandbox) for app runs: a run in flight
   * on a built-in Sandbox other than `holder`'s (JobStore.liveHolder) ended with that Sandbox's
   * process, so it is queued again, with `message`. Live-service runs are never touched.
   */
  requeueGoneSandbox(message: string, holder: string | null): AppRunRow[] {
    const gone = sandboxGone({ state: 'state', backend: 'backend', sandboxOf: 'sandbox_of' });
    const sql = `SELECT * FROM app_runs WHERE ${gone.where} ORDER BY seq`;
    // Read first: the write lock is taken only when there is something to move, which is rare.
    if (this.db.prepare(`${sql} LIMIT 1`).get(...gone.args(holder)) === undefined) return [];
    return this.db
      .transaction(() =>
        (this.db.prepare(sql).all(...gone.args(holder)) as Raw[])
          .map(fromRaw)
          .filter((r) => this.move(r.id, r.state, 'queued', { ...RUN_REQUEUE_FRESH, error: message })),
      )
      .immediate();
  }

  /** Records the run id the service gave, whatever the run's state (a cancel may have moved it meanwhile). */
  setRunId(id: string, runId: string): void {
    this.db.prepare('UPDATE app_runs SET run_id = ? WHERE id = ?').run(runId, id);
  }

  /** Moves `from` → `to` only if the row is still in `from`; returns whether it did. */
  move(id: string, from: JobState, to: JobState, patch: RunPatch = {}): boolean {
    if (from !== to && !canMove(from, to)) throw new Error(`an app run cannot go from ${from} to ${to}`);
    const sets = ['state = ?', 'updated_at = ?'];
    const args: unknown[] = [to, Date.now()];
    for (const [k, v] of Object.entries(patch) as [keyof RunPatch, unknown][]) {
      const [col, json] = COLUMNS[k];
      sets.push(`${col} = ?`);
      args.push(json && v !== null && v !== undefined ? JSON.stringify(v) : (v ?? null));
    }
    return (
      this.db.prepare(`UPDATE app_runs SET ${sets.join(', ')} WHERE id = ? AND state = ?`).run(...args, id, from)
        .changes === 1
    );
  }
}
