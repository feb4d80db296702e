import type { Migration } from '../db/open.ts';

/** The trainings' owner name in mediadesk.db's migration_ledger. */
export const TRAINING_LEDGER = 'lora-training';

/** Numbered and immutable once shipped: a change is a new entry at the end (docs/ARCHITECTURE.md, Migrations). */
export const TRAINING_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'lora_trainings: LoRA trainings queued, sent and followed to their new LoRA',
    up: (db) =>
      db.exec(`CREATE TABLE lora_trainings (
        id TEXT PRIMARY KEY,
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('style', 'character')),
        name TEXT NOT NULL,
        body TEXT NOT NULL,
        sources TEXT NOT NULL,
        state TEXT NOT NULL,
        backend TEXT,
        attempt_id TEXT,
        task_id TEXT,
        lora_id INTEGER,
        training_status TEXT,
        error TEXT,
        next_poll_at INTEGER,
        submitted_at INTEGER,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX lora_trainings_state ON lora_trainings (state)`),
  },
];
