/* eslint-disable max-lines -- Over 500 lines: every statement on the jobs, batches and lease tables, so each compare-and-set reads beside the others. */
import type { Statement } from 'better-sqlite3';
import { hostname } from 'node:os';
import { sep } from 'node:path';
// Zod-free modules only: `mediadesk jobs list` reads the store without building the contract's schemas.
import { TOOLS } from '../../../shared/catalogue/tools.ts';
import { GENERATED_CATALOGUE, generatedIdOf } from '../../../shared/catalogue/generated.ts';
import { keylessIdentity } from '../../../shared/contract/backend-identity.ts';
import { sameFileKey } from '../../../shared/file-names.ts';
import type { BatchRecord, JobRecord } from '../../../shared/contract/jobs.ts';
import type { InvalidParam } from '../api/client.ts';
import type { MetadataSettings } from '../../../shared/settings.ts';
import type { Db } from '../db/open.ts';
import { ACTIVE_STATES, JOB_STATES, SETTLED_STATES, type JobState } from '../../../shared/contract/job-states.ts';
import { canMove, REQUEUE_FRESH } from './states.ts';

/** Settings frozen into each job when it is queued, so a later settings change never alters it. */
export interface JobSnapshot {
  namingTemplate: string;
  slugs: Record<string, string>;
  /** Absent in jobs queued before these settings: their defaults. */
  metadata?: MetadataSettings;
}

/** A result item as the API gave it (api-notes: strings or `{url, content_type}`). */
export type GeneratedItem = string | { url: string; content_type?: string };

export interface JobRow {
  id: string;
  seq: number;
  batchId: string;
  tool: string;
  state: JobState;
  inputPath: string | null;
  relDir: string;
  outDir: string;
  params: Record<string, unknown>;
  snapshot: JobSnapshot;
  attemptId: string | null;
  attempts: number;
  taskId: string | null;
  generated: GeneratedItem[] | null;
  expiresAt: number | null;
  planned: string[] | null;
  outputs: string[];
  error: string | null;
  invalid: InvalidParam[];
  nextPollAt: number | null;
  submittedAt: number | null;
  /** The queue owner whose built-in Sandbox has this job's task (migration 6); null on the live service. */
  sandboxOf: string | null;
  /** Tasks accepted (so charged) before a Retry sent the job anew (migration 10). */
  earlierCharges: EarlierCharge[];
  createdAt: number;
  updatedAt: number;
}

/** A task the service accepted for a job, then replaced by the user's Retry: paid all the same. */
export interface EarlierCharge {
  taskId: string;
  /** When it was accepted (ms since the epoch): the day the service charged it. */
  at: number;
}

/** Columns a state change may also set; JSON columns are (de)serialised here and nowhere else. */
export interface JobPatch {
  attemptId?: string | null;
  attempts?: number;
  taskId?: string | null;
  generated?: GeneratedItem[] | null;
  expiresAt?: number | null;
  planned?: string[] | null;
  outputs?: string[];
  error?: string | null;
  invalid?: InvalidParam[] | null;
  nextPollAt?: number | null;
  submittedAt?: number | null;
  /** The input as sent: its size and SHA-256 (hex). */
  inputSize?: number | null;
  inputSha256?: string | null;
  sandboxOf?: string | null;
  earlierCharges?: EarlierCharge[];
}

const COLUMN: Record<keyof JobPatch, { col: string; json: boolean }> = {
  attemptId: { col: 'attempt_id', json: false },
  attempts: { col: 'attempts', json: false },
  taskId: { col: 'task_id', json: false },
  generated: { col: 'generated', json: true },
  expiresAt: { col: 'expires_at', json: false },
  planned: { col: 'planned', json: true },
  outputs: { col: 'outputs', json: true },
  error: { col: 'error', json: false },
  invalid: { col: 'invalid', json: true },
  nextPollAt: { col: 'next_poll_at', json: false },
  submittedAt: { col: 'submitted_at', json: false },
  inputSize: { col: 'input_size', json: false },
  inputSha256: { col: 'input_sha256', json: false },
  sandboxOf: { col: 'sandbox_of', json: false },
  earlierCharges: { col: 'earlier_charges', json: true },
};

/** A patch value as its column holds it: JSON columns hold text, and null stays NULL. */
function columnValue(key: keyof JobPatch, value: unknown): unknown {
  if (!COLUMN[key].json || value === null) return value;
  return JSON.stringify(value);
}

interface RawJob {
  id: string;
  seq: number;
  batch_id: string;
  tool: string;
  state: string;
  input_path: string | null;
  rel_dir: string;
  out_dir: string;
  params: string;
  snapshot: string;
  attempt_id: string | null;
  attempts: number;
  task_id: string | null;
  generated: string | null;
  expires_at: number | null;
  planned: string | null;
  outputs: string;
  error: string | null;
  invalid: string | null;
  next_poll_at: number | null;
  submitted_at: number | null;
  sandbox_of: string | null;
  earlier_charges: string | null;
  created_at: number;
  updated_at: number;
}

const parseJson = <T>(s: string | null, fallback: T): T => (s === null ? fallback : (JSON.parse(s) as T));

function toRow(r: RawJob): JobRow {
  return {
    id: r.id,
    seq: r.seq,
    batchId: r.batch_id,
    tool: r.tool,
    state: r.state as JobState,
    inputPath: r.input_path,
    relDir: r.rel_dir,
    outDir: r.out_dir,
    params: JSON.parse(r.params),
    snapshot: JSON.parse(r.snapshot),
    attemptId: r.attempt_id,
    attempts: r.attempts,
    taskId: r.task_id,
    generated: parseJson(r.generated, null),
    expiresAt: r.expires_at,
    planned: parseJson(r.planned, null),
    outputs: JSON.parse(r.outputs),
    error: r.error,
    invalid: parseJson(r.invalid, []),
    nextPollAt: r.next_poll_at,
    submittedAt: r.submitted_at,
    sandboxOf: r.sandbox_of,
    earlierCharges: parseJson(r.earlier_charges, []),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Tools whose results are text (image-to-prompt): a job's text is its generated items. */
// From the zod-free parts of the catalogue: `mediadesk jobs list` loads this module.
const CURATED_IDS = new Set(TOOLS.map((t) => t.id));
const TEXT_TOOLS = new Set([
  ...TOOLS.filter((t) => t.result === 'text').map((t) => t.id),
  ...GENERATED_CATALOGUE.tools.filter((op) => op.result === 'text').map((op) => generatedIdOf(op, CURATED_IDS)),
]);

/** The public shape of a job (contract), derived from a row. */
export function toJobRecord(j: JobRow): JobRecord {
  const text =
    j.generated && TEXT_TOOLS.has(j.tool)
      ? j.generated.map((g) => (typeof g === 'string' ? g : g.url)).join('\n')
      : null;
  return {
    id: j.id,
    batchId: j.batchId,
    tool: j.tool,
    state: j.state,
    input: j.inputPath,
    relDir: j.relDir,
    outDir: j.outDir,
    params: j.params,
    taskId: j.taskId,
    attempts: j.attempts,
    error: j.error,
    invalid: j.invalid,
    outputs: j.outputs,
    text,
    resultsExpireAt: j.expiresAt,
    createdAt: j.createdAt,
    updatedAt: j.updatedAt,
  };
}

export interface NewJob {
  id: string;
  inputPath: string | null;
  relDir: string;
  params: Record<string, unknown>;
}

export interface NewBatch {
  id: string;
  tool: string;
  outDir: string;
  params: Record<string, unknown>;
  roots: string[];
  snapshot: JobSnapshot;
  /** Backend.identity() of the server the batch is for; null when the caller does not tell (benchmarks). */
  backend?: string | null;
  jobs: NewJob[];
  /** The price told before Start (core/limits/estimate.ts): stored as credits for the jobs inserted. */
  estimate?: { creditsEach: number | null; basis: string };
  budget?: { credits?: number; jobs?: number };
  /** The project its creates count against (a team budget per project); absent: none. */
  project?: string | null;
}

/** The input a finished job made its results from; size and SHA-256 of the bytes sent, when recorded. */
export interface MadeFrom {
  input: string;
  size: number | null;
  sha256: string | null;
}

/** A result's input and the job's parameters (settingsKey): made with other settings, it is not "already done". */
export type MadeWith = MadeFrom & { settings: string };

/** Parameters in one spelling whatever their order, to compare the settings of two runs. */
export const settingsKey = (params: unknown): string =>
  JSON.stringify(params, (_, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b, 'en')))
      : v,
  );

export interface DoneOutputs {
  byInput: Map<string, string[]>;
  byOutput: Map<string, MadeWith>;
  /** byOutput by sameFileKey: a file found at a name in another case is that output on macOS and Windows. */
  byOutputKey: Map<string, MadeWith>;
}

export interface Lease {
  owner: string;
  pid: number;
  host: string;
  heartbeat: number;
}

/** States of a job whose create was sent (or may have been): what a budget counts as spent. */
const SENT = "task_id IS NOT NULL OR state IN ('submitting', 'running', 'downloading', 'done', 'needs_attention')";

/** A batch's budget as BatchBudgets weighs it. */
export interface BudgetRow {
  credits: number | null;
  jobs: number | null;
  estimate: number | null;
  budgetHold: string | null;
  total: number;
}

/** Inputs of unfinished jobs are not queued again: those jobs are resumed instead. */
const OPEN_STATES: readonly JobState[] = ['queued', 'submitting', 'running', 'downloading', 'needs_attention'];

export class JobStore {
  readonly db: Db;
  private readonly now: () => number;
  private readonly stmts = new Map<string, Statement>();
  private readonly idsJsonOf = new WeakMap<readonly string[], { length: number; json: string }>();

  constructor(db: Db, now: () => number = Date.now) {
    this.db = db;
    this.now = now;
  }

  private stmt(sql: string): Statement {
    let s = this.stmts.get(sql);
    if (!s) this.stmts.set(sql, (s = this.db.prepare(sql)));
    return s;
  }

  // ---- batches ---------------------------------------------------------------------------

  /**
   * Inserts the batch and its jobs under the write lock: an input that got an unfinished job
   * meanwhile (the same folder started twice at once) is returned as resumed, not inserted again,
   * and a batch left with no job of its own is not inserted at all.
   */
  insertBatch(b: NewBatch): { inserted: NewJob[]; resumed: string[] } {
    const now = this.now();
    return this.db
      .transaction(() => {
        const inserted: NewJob[] = [];
        const resumed: string[] = [];
        // One read for the whole batch: a query per job left kilobytes of garbage per job (bench/queue-memory.ts).
        const open = this.openJobsIn(b.tool, b.outDir, b.backend ?? null);
        for (const j of b.jobs) {
          const openId = j.inputPath === null ? undefined : open.get(j.inputPath);
          if (openId) resumed.push(openId);
          else inserted.push(j);
        }
        if (inserted.length === 0) return { inserted, resumed };
        const each = b.estimate?.creditsEach;
        this.stmt(
          `INSERT INTO batches (id, tool, out_dir, params, roots, backend, created_at, estimate_credits, estimate_basis, budget_credits, budget_jobs, project)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          b.id,
          b.tool,
          b.outDir,
          JSON.stringify(b.params),
          JSON.stringify(b.roots),
          b.backend ?? null,
          now,
          each === undefined || each === null ? null : each * inserted.length,
          b.estimate?.basis ?? null,
          b.budget?.credits ?? null,
          b.budget?.jobs ?? null,
          b.project ?? null,
        );
        const seq0 = (this.stmt('SELECT COALESCE(MAX(seq), 0) AS m FROM jobs').get() as { m: number }).m;
        const ins = this
          .stmt(`INSERT INTO jobs (id, seq, batch_id, tool, state, input_path, rel_dir, out_dir, params, snapshot, created_at, updated_at)
        VALUES (?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?)`);
        const snap = JSON.stringify(b.snapshot);
        // The jobs of a batch share one params object: written once, not once per job.
        const paramsJson = new Map<Record<string, unknown>, string>();
        const paramsOf = (p: Record<string, unknown>) =>
          paramsJson.get(p) ?? paramsJson.set(p, JSON.stringify(p)).get(p)!;
        inserted.forEach((j, i) =>
          ins.run(
            j.id,
            seq0 + i + 1,
            b.id,
            b.tool,
            j.inputPath,
            j.relDir,
            b.outDir,
            paramsOf(j.params),
            snap,
            now,
            now,
          ),
        );
        return { inserted, resumed };
      })
      .immediate();
  }

  /** Folders the user pointed batches at (inputs) or wrote results to: the renderer may show media there. */
  mediaRoots(): string[] {
    const rows = this.stmt('SELECT out_dir AS outDir, roots FROM batches').all() as { outDir: string; roots: string }[];
    return [...new Set(rows.flatMap((r) => [r.outDir, ...(JSON.parse(r.roots) as string[])]))];
  }

  batch(id: string): BatchRecord | null {
    const b = this.stmt('SELECT * FROM batches WHERE id = ?').get(id) as
      | {
          id: string;
          tool: string;
          out_dir: string;
          params: string;
          backend: string | null;
          created_at: number;
          estimate_credits: number | null;
          estimate_basis: string | null;
          budget_credits: number | null;
          budget_jobs: number | null;
          held_by: string | null;
          project: string | null;
        }
      | undefined;
    if (!b) return null;
    const counts = Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as Record<JobState, number>;
    for (const r of this.stmt('SELECT state, COUNT(*) AS n FROM jobs WHERE batch_id = ? GROUP BY state').all(id) as {
      state: JobState;
      n: number;
    }[])
      counts[r.state] = r.n;
    const total = Object.values(counts).reduce((a, n) => a + n, 0);
    const settled = SETTLED_STATES.reduce((a, s) => a + counts[s], 0);
    return {
      id: b.id,
      tool: b.tool,
      outDir: b.out_dir,
      params: JSON.parse(b.params),
      backend: b.backend,
      createdAt: b.created_at,
      total,
      counts,
      progress: total ? settled / total : 1,
      finished: settled === total,
      estimate: b.estimate_basis === null ? null : { credits: b.estimate_credits, basis: b.estimate_basis },
      budget:
        b.budget_credits === null && b.budget_jobs === null ? null : { credits: b.budget_credits, jobs: b.budget_jobs },
      budgetHold: b.held_by,
      project: b.project,
    };
  }

  /** The project a batch's creates count against; null when it has none. */
  projectOf(batchId: string): string | null {
    return (this.stmt('SELECT project FROM batches WHERE id = ?').pluck().get(batchId) as string | null) ?? null;
  }

  /** Batches of a project that still have queued jobs: left out of the submitter's picks while its budget holds. */
  queuedBatchesOfProject(project: string): string[] {
    return this.stmt(
      `SELECT id FROM batches WHERE project = ? AND EXISTS (SELECT 1 FROM jobs WHERE batch_id = batches.id AND state = 'queued')`,
    )
      .pluck()
      .all(project) as string[];
  }

  /** The price learned after Start (startEstimated): credits for the batch's jobs; an estimate already there stays. */
  setEstimate(batchId: string, creditsEach: number | null, basis: string): void {
    if (!this.db.open) return;
    this.stmt(
      `UPDATE batches SET estimate_credits = ? * (SELECT COUNT(*) FROM jobs WHERE batch_id = ?), estimate_basis = ?
        WHERE id = ? AND estimate_basis IS NULL`,
    ).run(creditsEach, batchId, basis, batchId);
  }

  /** The backend a batch was started on (Backend.identity), without counting its jobs. */
  backendOf(batchId: string): string | null {
    return (
      (this.stmt('SELECT backend FROM batches WHERE id = ?').get(batchId) as { backend: string | null } | undefined)
        ?.backend ?? null
    );
  }

  batches(limit: number, offset: number): BatchRecord[] {
    const ids = this.stmt('SELECT id FROM batches ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?').all(
      limit,
      offset,
    ) as { id: string }[];
    return ids.map((r) => this.batch(r.id)!);
  }

  // ---- budgets (core/limits/budget.ts decides; these read and write) ----------------------

  /** Batches held by their budget: their queued jobs are left out of the submitter's picks. */
  budgetHeldBatches(): string[] {
    return this.stmt(
      'SELECT id FROM batches WHERE held_by IS NOT NULL AND (budget_credits IS NOT NULL OR budget_jobs IS NOT NULL)',
    )
      .pluck()
      .all() as string[];
  }

  /** A batch's budget and hold; its job count is read only when it has a budget (a COUNT per create slowed every batch). */
  budgetOf(batchId: string): BudgetRow | undefined {
    return this.stmt(
      `SELECT budget_credits AS credits, budget_jobs AS jobs, estimate_credits AS estimate, held_by AS budgetHold,
              CASE WHEN budget_credits IS NULL AND budget_jobs IS NULL THEN 0
                   ELSE (SELECT COUNT(*) FROM jobs WHERE batch_id = batches.id) END AS total
         FROM batches WHERE id = ?`,
    ).get(batchId) as BudgetRow | undefined;
  }

  /** The batch's jobs whose create was sent (or may have been), with `preparing` (picked, still queued on disk). */
  sentCount(batchId: string, preparing: readonly string[]): number {
    return this.stmt(
      `SELECT COUNT(*) FROM jobs WHERE batch_id = ? AND (${SENT} OR id IN (SELECT value FROM json_each(?)))`,
    )
      .pluck()
      .get(batchId, JSON.stringify(preparing)) as number;
  }

  /** Holds a batch with why (null lets it go). */
  setBudgetHold(batchId: string, budgetHold: string | null): void {
    this.stmt('UPDATE batches SET held_by = ? WHERE id = ?').run(budgetHold, batchId);
    this.touchBatch(batchId);
  }

  /** Sets or removes (nulls) a batch's budget and lifts its hold. */
  setBudget(batchId: string, credits: number | null, jobs: number | null): void {
    this.stmt('UPDATE batches SET budget_credits = ?, budget_jobs = ?, held_by = NULL WHERE id = ?').run(
      credits,
      jobs,
      batchId,
    );
    this.touchBatch(batchId);
  }

  /** A job's updated_at moved, so jobs.changed carries the batch and the Queue hears of the hold. */
  private touchBatch(batchId: string): void {
    this.stmt(
      "UPDATE jobs SET updated_at = ? WHERE id = (SELECT id FROM jobs WHERE batch_id = ? AND state = 'queued' ORDER BY seq LIMIT 1)",
    ).run(Date.now(), batchId);
  }

  // ---- jobs ------------------------------------------------------------------------------

  get(id: string): JobRow | null {
    const r = this.stmt('SELECT * FROM jobs WHERE id = ?').get(id) as RawJob | undefined;
    return r ? toRow(r) : null;
  }

  /** A job by its id or an unambiguous prefix of it (the CLI prints 8 characters). */
  resolveId(idOrPrefix: string): string | null {
    if (!/^[0-9a-f-]{4,36}$/i.test(idOrPrefix)) return null;
    const rows = this.stmt("SELECT id FROM jobs WHERE id LIKE ? || '%' LIMIT 2").all(idOrPrefix.toLowerCase()) as {
      id: string;
    }[];
    return rows.length === 1 ? rows[0].id : null;
  }

  /** A batch by its id or a prefix of it: its id, or why not (none, or more than one starts so). */
  resolveBatchId(idOrPrefix: string): { id: string } | { none: true } | { ambiguous: true } {
    if (!/^[0-9a-f-]{1,36}$/i.test(idOrPrefix)) return { none: true };
    const rows = this.stmt("SELECT id FROM batches WHERE id LIKE ? || '%' LIMIT 2").all(idOrPrefix.toLowerCase()) as {
      id: string;
    }[];
    if (rows.length === 1) return { id: rows[0].id };
    return rows.length ? { ambiguous: true } : { none: true };
  }

  /**
   * The unfinished jobs of earlier runs of a tool into an output folder, by input (the newest of
   * each), on `backend` (a batch of another backend is not followed: its jobs do not move here).
   * Null backend: any.
   */
  openJobsIn(tool: string, outDir: string, backend: string | null = null): Map<string, string> {
    const rows = this.stmt(
      `SELECT j.input_path AS inputPath, j.id FROM jobs j JOIN batches b ON b.id = j.batch_id
      WHERE j.tool = ? AND j.out_dir = ? AND j.input_path IS NOT NULL
      AND j.state IN (${OPEN_STATES.map(() => '?').join(',')}) AND (? IS NULL OR b.backend IS NULL OR b.backend = ?) ORDER BY j.seq`,
    ).all(tool, outDir, ...OPEN_STATES, backend, backend) as { inputPath: string; id: string }[];
    // The newest open job of each input wins.
    return new Map(rows.map((r) => [r.inputPath, r.id]));
  }

  /**
   * Whether a job other than `except` has planned an output at `path` (its part file is that job's),
   * by a name macOS and Windows take as the same file: in another case (ASCII, as SQLite's lower()
   * folds) or the other Unicode form. Else the other job's paused part would be resumed as ours.
   */
  plannedBy(path: string, except: string): boolean {
    const forms = [path, path.normalize('NFC'), path.normalize('NFD')].map((p) => JSON.stringify(p));
    return (
      this.stmt(
        "SELECT 1 FROM jobs WHERE id != ? AND state != 'done' AND planned IS NOT NULL AND (instr(lower(planned), lower(?)) > 0 OR instr(lower(planned), lower(?)) > 0 OR instr(lower(planned), lower(?)) > 0) LIMIT 1",
      ).get(except, ...forms) !== undefined
    );
  }

  /** Every batch's output folder. */
  batchOutDirs(): string[] {
    return (this.stmt('SELECT DISTINCT out_dir AS outDir FROM batches').all() as { outDir: string }[]).map(
      (r) => r.outDir,
    );
  }

  /** Results of finished jobs of a tool into an output folder, both ways: what each input made, and who made each file. */
  doneOutputs(tool: string, outDir: string): DoneOutputs {
    const rows = this.stmt(
      "SELECT input_path AS input, outputs, input_size AS size, input_sha256 AS sha256, params FROM jobs WHERE tool = ? AND out_dir = ? AND state = 'done' AND input_path IS NOT NULL ORDER BY seq",
    ).all(tool, outDir) as {
      input: string;
      outputs: string;
      size: number | null;
      sha256: string | null;
      params: string;
    }[];
    const byInput = new Map<string, string[]>();
    const byOutput = new Map<string, MadeWith>();
    for (const r of rows) {
      const outs = JSON.parse(r.outputs) as string[];
      byInput.set(r.input, [...(byInput.get(r.input) ?? []), ...outs]);
      const settings = settingsKey(JSON.parse(r.params));
      for (const output of outs) byOutput.set(output, { input: r.input, size: r.size, sha256: r.sha256, settings });
    }
    return {
      byInput,
      byOutput,
      byOutputKey: new Map([...byOutput].map(([output, from]) => [sameFileKey(output), from])),
    };
  }

  /** Whether a job or an app run of this data folder wrote `path` (a hot folder never takes its own results). */
  isResult(path: string): boolean {
    // result_paths (queue migration 12) holds every path in jobs' and app runs' outputs.
    return this.stmt('SELECT 1 FROM result_paths WHERE path = ? LIMIT 1').get(path) !== undefined;
  }

  /** Whether a job was queued with `path` as its input (given by the person when the batch started); jobs_input_path (migration 12). */
  isInput(path: string): boolean {
    return this.stmt('SELECT 1 FROM jobs WHERE input_path = ? LIMIT 1').get(path) !== undefined;
  }

  /** Files finished jobs wrote into folders strictly inside `root` (not `root` itself), each with the tool that made it. */
  resultsInside(root: string): Map<string, string> {
    const prefix = root.endsWith(sep) ? root : root + sep;
    // Lengths counted by SQLite (characters), not by JS (UTF-16 units): an emoji in a path is one to SQLite, two to JS.
    const rows = this.stmt(
      "SELECT tool, outputs FROM jobs WHERE state = 'done' AND substr(out_dir, 1, length(?)) = ? AND length(out_dir) > length(?)",
    ).all(prefix, prefix, prefix) as { tool: string; outputs: string }[];
    return new Map(rows.flatMap((r) => (JSON.parse(r.outputs) as string[]).map((output) => [output, r.tool] as const)));
  }

  list(q: { batchId?: string; state?: JobState; limit: number; offset: number }): { jobs: JobRow[]; total: number } {
    const where: string[] = [];
    const args: unknown[] = [];
    if (q.batchId) {
      where.push('batch_id = ?');
      args.push(q.batchId);
    }
    if (q.state) {
      where.push('state = ?');
      args.push(q.state);
    }
    const w = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const total = (this.stmt(`SELECT COUNT(*) AS n FROM jobs ${w}`).get(...args) as { n: number }).n;
    const rows = this.stmt(`SELECT * FROM jobs ${w} ORDER BY seq LIMIT ? OFFSET ?`).all(
      ...args,
      q.limit,
      q.offset,
    ) as RawJob[];
    return { jobs: rows.map(toRow), total };
  }

  /** list, in the contract's shape (jobs.list). */
  listRecords(q: { batchId?: string; state?: JobState; limit: number; offset: number }): {
    jobs: JobRecord[];
    total: number;
  } {
    const found = this.list(q);
    return { jobs: found.jobs.map(toJobRecord), total: found.total };
  }

  /** `skipBatches`: batches whose jobs are held (BatchBudgets.heldIds), left out so they do not hide the others. */
  inState(state: JobState, limit = 1_000_000, skipBatches: readonly string[] = []): JobRow[] {
    if (skipBatches.length)
      return (
        this.stmt(
          'SELECT * FROM jobs WHERE state = ? AND batch_id NOT IN (SELECT value FROM json_each(?)) ORDER BY seq LIMIT ?',
        ).all(state, JSON.stringify(skipBatches), limit) as RawJob[]
      ).map(toRow);
    return (this.stmt('SELECT * FROM jobs WHERE state = ? ORDER BY seq LIMIT ?').all(state, limit) as RawJob[]).map(
      toRow,
    );
  }

  /**
   * Batches from before backends (or keys) were recorded become `backend`'s, the one in use when the
   * queue is first held after the upgrade: left unowned they would run on any backend, and a demo
   * batch could be paid for on the live service.
   */
  adoptUnowned(backend: string): number {
    // Also those recorded before the key was part of an identity: the same server's, now this key's.
    return this.stmt('UPDATE batches SET backend = ? WHERE backend IS NULL OR backend = ?').run(
      backend,
      keylessIdentity(backend),
    ).changes;
  }

  /**
   * Jobs in `state` whose batch is for `backend` (or from before backends were recorded), in
   * order. Null backend: all, as inState. Walks jobs_state in seq order and stops at `limit`, so a
   * queue with nothing of another backend costs what inState costs.
   */
  inStateFor(
    state: JobState,
    backend: string | null,
    limit = 1_000_000,
    exceptTools: readonly string[] = [],
    skipBatches: readonly string[] = [],
  ): JobRow[] {
    if (backend === null && exceptTools.length === 0) return this.inState(state, limit, skipBatches);
    return (
      this.stmt(
        `SELECT j.* FROM jobs j JOIN batches b ON b.id = j.batch_id WHERE j.state = ?
         AND (? IS NULL OR b.backend IS NULL OR b.backend = ?)
         AND j.tool NOT IN (SELECT value FROM json_each(?))
         AND b.id NOT IN (SELECT value FROM json_each(?)) ORDER BY j.seq LIMIT ?`,
      ).all(state, backend, backend, JSON.stringify(exceptTools), JSON.stringify(skipBatches), limit) as RawJob[]
    ).map(toRow);
  }

  /** Queued jobs per tool (of batches for `backend`, or any when null). */
  queuedByTool(backend: string | null): Map<string, number> {
    const rows = this.stmt(
      `SELECT j.tool, COUNT(*) AS n FROM jobs j JOIN batches b ON b.id = j.batch_id WHERE j.state = 'queued'
       AND (? IS NULL OR b.backend IS NULL OR b.backend = ?) GROUP BY j.tool`,
    ).all(backend, backend) as { tool: string; n: number }[];
    return new Map(rows.map((r) => [r.tool, r.n]));
  }

  /**
   * Says why a tool's queued jobs wait (`error`), or takes back what was said (`error` null, `was`
   * the words to take back); only rows whose words change are written, so the Queue hears it once.
   */
  /** As noteQueuedOfTool, for the queued jobs of a project's batches (its team budget holds them). */
  noteQueuedOfProject(project: string, backend: string | null, error: string | null, was: string | null = null): void {
    this.stmt(
      `UPDATE jobs SET error = ?, updated_at = ? WHERE state = 'queued'
       AND (? IS NULL OR error IS ?) AND error IS NOT ?
       AND batch_id IN (SELECT id FROM batches WHERE project = ? AND (? IS NULL OR backend IS NULL OR backend = ?))`,
    ).run(error, this.now(), was, was, error, project, backend, backend);
  }

  noteQueuedOfTool(tool: string, backend: string | null, error: string | null, was: string | null = null): void {
    this.stmt(
      `UPDATE jobs SET error = ?, updated_at = ? WHERE state = 'queued' AND tool = ?
       AND (? IS NULL OR error IS ?) AND error IS NOT ?
       AND batch_id IN (SELECT id FROM batches WHERE ? IS NULL OR backend IS NULL OR backend = ?)`,
    ).run(error, this.now(), tool, was, was, error, backend, backend);
  }

  /**
   * How many of `ids` are in each state, counted by SQLite: a row per state (and per distinct error
   * of the queued ones), not an object per job. The CLI's progress reads it every 200 ms; a row per
   * job made 6 MB of garbage per read at 50,000 and RSS grew by 90 MB between collections (bench/queue-memory.ts).
   */
  stateCounts(ids: readonly string[]): { state: JobState; error: string | null; n: number }[] {
    return this.stmt(
      `SELECT state, CASE WHEN state = 'queued' THEN error END AS error, COUNT(*) AS n FROM jobs
       WHERE id IN (SELECT value FROM json_each(?)) GROUP BY 1, 2`,
    ).all(this.idsJson(ids)) as { state: JobState; error: string | null; n: number }[];
  }

  /** Jobs changed at or after `since` (ms), oldest first: what jobs.changed tells. */
  changedSince(since: number, limit: number): { id: string; u: number }[] {
    return this.stmt('SELECT id, updated_at AS u FROM jobs WHERE updated_at >= ? ORDER BY updated_at LIMIT ?').all(
      since,
      limit,
    ) as { id: string; u: number }[];
  }

  /** Planned outputs of jobs not done: the `.part` files a crash may have left. */
  unfinishedPlans(): { id: string; state: JobState; planned: string[]; outputs: string[] }[] {
    const rows = this.stmt(
      "SELECT id, state, planned, outputs FROM jobs WHERE planned IS NOT NULL AND state != 'done'",
    ).all() as { id: string; state: JobState; planned: string; outputs: string }[];
    return rows.map((r) => ({ ...r, planned: JSON.parse(r.planned), outputs: JSON.parse(r.outputs) }));
  }

  /** Planned outputs of jobs done since `since` (ms). */
  plansDoneSince(since: number): string[][] {
    const rows = this.stmt(
      "SELECT planned FROM jobs WHERE planned IS NOT NULL AND state = 'done' AND updated_at > ?",
    ).all(since) as { planned: string }[];
    return rows.map((r) => JSON.parse(r.planned) as string[]);
  }

  /**
   * Jobs by id through one cached statement (the ids as a JSON array): a statement prepared per
   * chunk of ids left about 11 MB of native memory per read of 50,000 (bench/queue-memory.ts).
   */
  byIds(ids: readonly string[]): JobRow[] {
    return (
      this.stmt('SELECT * FROM jobs WHERE id IN (SELECT value FROM json_each(?))').all(this.idsJson(ids)) as RawJob[]
    ).map(toRow);
  }

  /** The JSON of an id list read again and again (a batch's progress): made once per list, not per read. */
  private idsJson(ids: readonly string[]): string {
    const known = this.idsJsonOf.get(ids);
    if (known?.length === ids.length) return known.json;
    const json = JSON.stringify(ids);
    this.idsJsonOf.set(ids, { length: ids.length, json });
    return json;
  }

  counts(): Record<JobState, number> {
    const counts = Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as Record<JobState, number>;
    for (const r of this.stmt('SELECT state, COUNT(*) AS n FROM jobs GROUP BY state').all() as {
      state: JobState;
      n: number;
    }[])
      counts[r.state] = r.n;
    return counts;
  }

  /** Jobs holding a concurrency slot, per tool. */
  activeByTool(): Map<string, number> {
    const rows = this.stmt(
      "SELECT tool, COUNT(*) AS n FROM jobs WHERE state IN ('submitting', 'running', 'downloading') GROUP BY tool",
    ).all() as { tool: string; n: number }[];
    return new Map(rows.map((r) => [r.tool, r.n]));
  }

  /**
   * Moves a job only if it is still in one of `from` (compare-and-set): a cancel from another
   * process or a concurrent step simply makes the loser's move return false.
   */
  move(id: string, from: JobState | readonly JobState[], to: JobState, patch: JobPatch = {}): boolean {
    const froms = (typeof from === 'string' ? [from] : from).filter((f) => canMove(f, to));
    if (froms.length === 0) return false;
    const keys = Object.keys(patch) as (keyof JobPatch)[];
    const sets = ['state = ?', 'updated_at = ?', ...keys.map((k) => `${COLUMN[k].col} = ?`)];
    const sql = `UPDATE jobs SET ${sets.join(', ')} WHERE id = ? AND state IN (${froms.map(() => '?').join(',')})`;
    const values = keys.map((k) => columnValue(k, patch[k]));
    return this.stmt(sql).run(to, this.now(), ...values, id, ...froms).changes === 1;
  }

  /** Updates columns without a state change, only while the job is still in `state`. */
  patch(id: string, state: JobState, patch: JobPatch): boolean {
    const keys = Object.keys(patch) as (keyof JobPatch)[];
    if (keys.length === 0) return true;
    const sql = `UPDATE jobs SET updated_at = ?, ${keys.map((k) => `${COLUMN[k].col} = ?`).join(', ')} WHERE id = ? AND state = ?`;
    const values = keys.map((k) => columnValue(k, patch[k]));
    return this.stmt(sql).run(this.now(), ...values, id, state).changes === 1;
  }

  /**
   * Many updates in one transaction (one commit per tick, not per task). `immediate` takes the
   * write lock at BEGIN, so a batch of writes never fails half-way on a lock upgrade.
   */
  transaction<T>(fn: () => T, immediate = false): T {
    const tx = this.db.transaction(fn);
    return immediate && !this.db.inTransaction ? tx.immediate() : tx();
  }

  // ---- queue flags and lease ---------------------------------------------------------------

  flag(key: string): string | null {
    const r = this.stmt('SELECT value FROM queue_flags WHERE key = ?').get(key) as { value: string } | undefined;
    return r?.value ?? null;
  }

  setFlag(key: string, value: string | null): void {
    if (value === null) this.stmt('DELETE FROM queue_flags WHERE key = ?').run(key);
    else
      this.stmt(
        'INSERT INTO queue_flags (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
      ).run(key, value);
  }

  lease(): Lease | null {
    return (
      (this.stmt('SELECT owner, pid, host, heartbeat FROM queue_lease WHERE id = 1').get() as Lease | undefined) ?? null
    );
  }

  /**
   * Takes the queue if it is free, ours, stale, or held by a dead process on this machine (a
   * SIGKILLed CLI must not block its own restart for the stale period).
   */
  tryLease(owner: string, staleMs: number): boolean {
    const host = hostname();
    return this.db
      .transaction(() => {
        const cur = this.lease();
        const now = this.now();
        const free =
          !cur || cur.owner === owner || now - cur.heartbeat > staleMs || (cur.host === host && !processAlive(cur.pid));
        if (!free) return false;
        this.stmt(
          'INSERT INTO queue_lease (id, owner, pid, host, heartbeat) VALUES (1, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET owner = excluded.owner, pid = excluded.pid, host = excluded.host, heartbeat = excluded.heartbeat',
        ).run(owner, process.pid, host, now);
        return true;
      })
      .immediate();
  }

  releaseLease(owner: string): void {
    this.stmt('DELETE FROM queue_lease WHERE id = 1 AND owner = ?').run(owner);
  }

  /**
   * The queue owner whose built-in Sandbox may still hold tasks: the holder of the queue while its
   * process lives, null when none does. On this machine the process itself is asked (a Sandbox
   * binds 127.0.0.1, so its tasks live in a process here); elsewhere, its heartbeat.
   */
  liveHolder(staleMs: number): string | null {
    const cur = this.lease();
    if (!cur) return null;
    const alive = cur.host === hostname() ? processAlive(cur.pid) : this.now() - cur.heartbeat <= staleMs;
    return alive ? cur.owner : null;
  }

  /**
   * Applied by every reader of job states: an active job on a built-in Sandbox that is not the live
   * holder's is queued again (REQUEUE_FRESH) with `message`, as that Sandbox ended with its process.
   * Live-service jobs are never touched. Returns the rows as they were (parts are the caller's).
   */
  requeueGoneSandbox(message: string, staleMs: number): JobRow[] {
    // Read first: the write lock is taken only when there is something to move, which is rare.
    if (!this.hasGoneSandbox(staleMs)) return [];
    return this.transaction(() => {
      const rows = (this.stmt(GONE_SQL).all(...GONE.args(this.liveHolder(staleMs))) as RawJob[]).map(toRow);
      return rows.filter((j) => this.move(j.id, j.state, 'queued', { ...REQUEUE_FRESH, error: message }));
    }, true);
  }

  /** Whether requeueGoneSandbox would move a job (a read, no lock). */
  hasGoneSandbox(staleMs: number): boolean {
    return this.stmt(`${GONE_SQL} LIMIT 1`).get(...GONE.args(this.liveHolder(staleMs))) !== undefined;
  }
}

/**
 * The condition of the Sandbox-gone rule (JobStore.requeueGoneSandbox) over one table's columns,
 * shared by tool jobs and app runs: in flight on the built-in Sandbox, and not on the Sandbox of
 * `holder` (JobStore.liveHolder). `args` binds it.
 */
export function sandboxGone(col: { state: string; backend: string; sandboxOf: string }) {
  return {
    where: `${col.state} IN (${ACTIVE_STATES.map(() => '?').join(',')}) AND ${col.backend} = 'sandbox' AND (${col.sandboxOf} IS NULL OR ${col.sandboxOf} IS NOT ?)`,
    args: (holder: string | null) => [...ACTIVE_STATES, holder],
  };
}

const GONE = sandboxGone({ state: 'j.state', backend: 'b.backend', sandboxOf: 'j.sandbox_of' });
const GONE_SQL = `SELECT j.* FROM jobs j JOIN batches b ON b.id = j.batch_id WHERE ${GONE.where} ORDER BY j.seq`;

function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
