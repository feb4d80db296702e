import { openDatabase, type Db } from '../db/open.ts';
import { TRAINING_LEDGER, TRAINING_MIGRATIONS } from './migrations.ts';
import type { LoraKind, LoraTraining, TRAINING_STATES } from '../../../shared/contract/loras.ts';

export type TrainingState = (typeof TRAINING_STATES)[number];

export interface TrainingRow {
  id: string;
  kind: LoraKind;
  name: string;
  /** The request's fields but `images` (filled from the uploads when sent). */
  body: Record<string, unknown>;
  /** The local images, in the order sent. */
  sources: string[];
  state: TrainingState;
  backend: string | null;
  attemptId: string | null;
  taskId: string | null;
  loraId: number | null;
  trainingStatus: string | null;
  error: string | null;
  nextPollAt: number | null;
  submittedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

type Patch = Partial<
  Pick<
    TrainingRow,
    'backend' | 'attemptId' | 'taskId' | 'loraId' | 'trainingStatus' | 'error' | 'nextPollAt' | 'submittedAt'
  >
>;
const COLUMNS: Record<keyof Patch, string> = {
  backend: 'backend',
  attemptId: 'attempt_id',
  taskId: 'task_id',
  loraId: 'lora_id',
  trainingStatus: 'training_status',
  error: 'error',
  nextPollAt: 'next_poll_at',
  submittedAt: 'submitted_at',
};

const SELECT = `SELECT id, kind, name, body, sources, state, backend, attempt_id AS attemptId, task_id AS taskId,
  lora_id AS loraId, training_status AS trainingStatus, error, next_poll_at AS nextPollAt,
  submitted_at AS submittedAt, created_at AS createdAt, updated_at AS updatedAt FROM lora_trainings`;

const read = (r: Record<string, unknown>): TrainingRow =>
  ({ ...r, body: JSON.parse(String(r.body)), sources: JSON.parse(String(r.sources)) }) as TrainingRow;

export const toTraining = (r: TrainingRow): LoraTraining => ({
  id: r.id,
  kind: r.kind,
  name: r.name,
  state: r.state,
  images: r.sources.length,
  taskId: r.taskId,
  loraId: r.loraId,
  trainingStatus: r.trainingStatus,
  error: r.error,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

export function openTrainingStore(path: string): TrainingStore {
  return new TrainingStore(openDatabase(path, TRAINING_MIGRATIONS, { ledger: TRAINING_LEDGER }));
}

/** LoRA trainings in mediadesk.db; every state change a compare-and-set, so a kill leaves the truth on disk. */
export class TrainingStore {
  readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  insert(r: Pick<TrainingRow, 'id' | 'kind' | 'name' | 'body' | 'sources' | 'backend'>, now = Date.now()): TrainingRow {
    this.db
      .prepare(
        `INSERT INTO lora_trainings (id, seq, kind, name, body, sources, state, backend, created_at, updated_at)
         VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM lora_trainings), ?, ?, ?, ?, 'queued', ?, ?, ?)`,
      )
      .run(r.id, r.kind, r.name, JSON.stringify(r.body), JSON.stringify(r.sources), r.backend, now, now);
    return this.get(r.id)!;
  }

  get(id: string): TrainingRow | null {
    const r = this.db.prepare(`${SELECT} WHERE id = ?`).get(id) as Record<string, unknown> | undefined;
    return r ? read(r) : null;
  }

  list(limit = 50): TrainingRow[] {
    return (this.db.prepare(`${SELECT} ORDER BY seq DESC LIMIT ?`).all(limit) as Record<string, unknown>[]).map(read);
  }

  inState(state: TrainingState): TrainingRow[] {
    return (this.db.prepare(`${SELECT} WHERE state = ? ORDER BY seq`).all(state) as Record<string, unknown>[]).map(
      read,
    );
  }

  /** A training of this name not ended badly: a second one would be refused by the service, or pay twice. */
  openNamed(kind: LoraKind, name: string): TrainingRow | null {
    const r = this.db
      .prepare(`${SELECT} WHERE kind = ? AND name = ? AND state NOT IN ('failed') ORDER BY seq DESC LIMIT 1`)
      .get(kind, name) as Record<string, unknown> | undefined;
    return r ? read(r) : null;
  }

  /** Moves `id` from `from` to `to` with the patch, only if it is still in `from`; false when another won. */
  move(id: string, from: TrainingState, to: TrainingState, patch: Patch = {}, now = Date.now()): boolean {
    const keys = Object.keys(patch) as (keyof Patch)[];
    const sets = ['state = ?', 'updated_at = ?', ...keys.map((k) => `${COLUMNS[k]} = ?`)].join(', ');
    const info = this.db
      .prepare(`UPDATE lora_trainings SET ${sets} WHERE id = ? AND state = ?`)
      .run(to, now, ...keys.map((k) => patch[k] ?? null), id, from);
    return info.changes === 1;
  }

  close(): void {
    this.db.close();
  }
}
