import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ResultKind } from '../../shared/official/index.ts';
import { rngFrom, seedOf, uuidFrom, type Rng } from './rng.ts';

export const STATUSES = ['CREATED', 'IN_PROGRESS', 'COMPLETED', 'FAILED'] as const;
export type TaskStatus = (typeof STATUSES)[number];

/**
 * A task is a timestamp plus a fate: its status is a pure function of the clock, so 10,000 tasks
 * cost 10,000 small records and no timers. Results are rendered only when downloaded.
 */
export interface Task {
  id: string;
  /** Catalogue tool id, or `app:<sqid>` for workflow-app runs. */
  toolId: string;
  /** The collection path it is listed under (tools of one family share it). */
  listPath: string;
  /**
   * Every list and by-id prefix that covers its create path (a family's list and a per-resolution
   * one, a shared by-id such as kling-elements); absent: `listPath` alone.
   */
  pollPaths?: string[];
  key: string;
  userId: number;
  createdAt: number;
  durationMs: number;
  fails: boolean;
  /** Validated parameters, media inputs replaced by stored-input references. */
  params: Record<string, unknown>;
  /** The body's fields as sent, before the Sandbox applied defaults (media as in `params`); tools only. */
  sent?: Record<string, unknown>;
  resultCount: number;
  /** A create the catalogue does not name: its first image input (a stored input's id), which its images are drawn from. */
  inputImage?: string;
  /** Result text for image-to-prompt, computed at create time from the image. */
  text?: string;
  webhookUrl?: string;
  /** What the task's `generated` holds: for tools as the reference records it, for app runs the app's output. */
  resultKind: ResultKind;
  /** App runs only: how a run that does not fail ends (faults.appRunEnding when it was created). */
  appEnding?: 'completed_with_errors' | 'cancelled';
  /** Result URL lifetime; defaults to the tool's (24 h). */
  ttlHours?: number;
  /**
   * Tools only: what the create was charged, under the tool name the credit usage reports (its path
   * under /v1/ai/). Charged once accepted, whether the task then completes or fails.
   */
  charge?: { tool: string; credits: number };
  /** Highest status index reached, so a clock that steps back never moves a task backwards. */
  reached: number;
}

/** A charged create, as the credit usage reads it. */
export type Charged = Pick<Task, 'key' | 'userId' | 'createdAt'> & { charge: NonNullable<Task['charge']> };

/** CREATED for the first fifth of the duration, IN_PROGRESS until it ends, then the fate. */
export function statusAt(task: Task, nowMs: number): TaskStatus {
  const elapsed = nowMs - task.createdAt;
  let idx: number;
  if (elapsed >= task.durationMs) idx = task.fails ? 3 : 2;
  else if (elapsed >= task.durationMs / 5) idx = 1;
  else idx = 0;
  if (idx < task.reached) idx = task.reached;
  task.reached = idx;
  return STATUSES[idx];
}

/** The lists a task appears in and the by-id prefixes that find it. */
export const pollPathsOf = (task: Task): readonly string[] => task.pollPaths ?? [task.listPath];

export const isFinal = (s: TaskStatus) => s === 'COMPLETED' || s === 'FAILED';

export class TaskStore {
  private byId = new Map<string, Task>();
  /** `${key}\u0000${listPath}` -> tasks in creation order (lists read it backwards). */
  private byList = new Map<string, Task[]>();
  /** Per key, every task (recent creations). */
  private byKey = new Map<string, Task[]>();
  /** Charges of creates that answered at once (no task): the credit usage counts them beside the tasks'. */
  private instant: Charged[] = [];
  private readonly rng: Rng;
  private readonly journal: string | undefined;

  /**
   * `journal`: a file the tasks are appended to and read back from, so a Sandbox started again (each
   * CLI command starts one) still lists the creations made before, as the service would.
   */
  constructor(seed: number, journal?: string) {
    const earlier = journal ? readJournal(journal) : [];
    // New ids must not repeat the ones read back: the sequence goes on from another seed.
    this.rng = rngFrom(earlier.length ? seedOf(seed, 'tasks', earlier.length) : seedOf(seed, 'tasks'));
    for (const t of earlier) if (!this.byId.has(t.id)) this.add(t);
    this.journal = journal;
  }

  get size(): number {
    return this.byId.size;
  }

  newId(): string {
    return uuidFrom(this.rng);
  }

  add(task: Task): Task {
    this.byId.set(task.id, task);
    for (const path of pollPathsOf(task)) {
      const listKey = `${task.key}\u0000${path}`;
      (this.byList.get(listKey) ?? this.byList.set(listKey, []).get(listKey)!).push(task);
    }
    (this.byKey.get(task.key) ?? this.byKey.set(task.key, []).get(task.key)!).push(task);
    if (this.journal) appendFileSync(this.journal, JSON.stringify(task) + '\n');
    return task;
  }

  get(id: string): Task | undefined {
    return this.byId.get(id);
  }

  /** The caller's newest tasks under one collection path, newest first, at most `limit` (no full copy). */
  newest(key: string, listPath: string, limit: number): Task[] {
    const all = this.byList.get(`${key}\u0000${listPath}`) ?? [];
    return all.slice(Math.max(0, all.length - limit)).reverse();
  }

  /** Ends every task still under way at `nowMs` (its status moves on; it never goes back). */
  finishAll(nowMs: number): number {
    let n = 0;
    for (const t of this.byId.values()) {
      if (nowMs - t.createdAt >= t.durationMs) continue;
      t.durationMs = Math.max(0, nowMs - t.createdAt);
      n++;
    }
    return n;
  }

  /** A create that answered its result at once, charged as a task is. */
  chargeInstant(c: Charged): void {
    this.instant.push(c);
  }

  /** Everything charged: every task with a charge, then the creates that answered at once. */
  *charged(): IterableIterator<Charged> {
    for (const t of this.byId.values()) if (t.charge) yield t as Charged;
    yield* this.instant;
  }

  /** Forgets every task (a reset between tests sharing one Sandbox); the journal file is left alone. */
  clear(): void {
    this.byId.clear();
    this.byList.clear();
    this.byKey.clear();
    this.instant = [];
  }

  /** Every task, in creation order. */
  all(): IterableIterator<Task> {
    return this.byId.values();
  }

  ofKey(key: string): Task[] {
    return [...(this.byKey.get(key) ?? [])].reverse();
  }
}

/** How many tasks a journal keeps: the newest, rewritten at start, so a long-used Sandbox's file stays small. */
export const JOURNAL_KEEPS = 5000;

/** The tasks a journal holds; a line cut short by a crash is skipped. Makes the file's folder if needed. */
function readJournal(path: string): Task[] {
  mkdirSync(dirname(path), { recursive: true });
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const out: Task[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      const t = JSON.parse(line) as Task;
      if (typeof t?.id === 'string' && typeof t.key === 'string' && typeof t.createdAt === 'number') out.push(t);
    } catch {
      // A partial last line.
    }
  }
  if (out.length <= JOURNAL_KEEPS) return out;
  const kept = out.slice(-JOURNAL_KEEPS);
  writeFileSync(path, kept.map((t) => JSON.stringify(t) + '\n').join(''));
  return kept;
}
