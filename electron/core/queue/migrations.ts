import type { Migration } from '../db/open.ts';

/**
 * The queue's schema in mediadesk.db. Numbered and immutable once shipped: change the schema by
 * appending a migration, never by editing one (every user's file must converge).
 */
export const QUEUE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'batches, jobs, queue lease and flags',
    up: (db) => {
      db.exec(`
        CREATE TABLE batches (
          id          TEXT PRIMARY KEY,
          tool        TEXT NOT NULL,
          out_dir     TEXT NOT NULL,
          params      TEXT NOT NULL,           -- JSON: the user's parameters, without inputs
          roots       TEXT NOT NULL,           -- JSON: the files or folders the user chose
          created_at  INTEGER NOT NULL
        );
        CREATE TABLE jobs (
          id            TEXT PRIMARY KEY,
          seq           INTEGER NOT NULL,       -- submission order across batches
          batch_id      TEXT NOT NULL REFERENCES batches(id),
          tool          TEXT NOT NULL,
          state         TEXT NOT NULL,
          input_path    TEXT,                   -- absolute local file, null for prompt-only jobs
          rel_dir       TEXT NOT NULL DEFAULT '',
          out_dir       TEXT NOT NULL,
          params        TEXT NOT NULL,           -- JSON
          snapshot      TEXT NOT NULL,           -- JSON: settings in force when the job was queued
          attempt_id    TEXT,                   -- persisted before each create is sent
          attempts      INTEGER NOT NULL DEFAULT 0,
          task_id       TEXT,
          generated     TEXT,                   -- JSON array of result items from the API
          expires_at    INTEGER,                -- when result URLs stop working (ms)
          planned       TEXT,                   -- JSON: output paths reserved for each result
          outputs       TEXT NOT NULL DEFAULT '[]', -- JSON: files finished and renamed
          error         TEXT,
          invalid       TEXT,                   -- JSON InvalidParam[]
          next_poll_at  INTEGER,
          submitted_at  INTEGER,
          created_at    INTEGER NOT NULL,
          updated_at    INTEGER NOT NULL
        );
        CREATE INDEX jobs_state ON jobs(state, seq);
        CREATE INDEX jobs_batch ON jobs(batch_id, state);
        CREATE INDEX jobs_input ON jobs(tool, input_path, out_dir);
        CREATE INDEX jobs_updated ON jobs(updated_at);
        CREATE TABLE queue_lease (
          id         INTEGER PRIMARY KEY CHECK (id = 1),
          owner      TEXT NOT NULL,
          pid        INTEGER NOT NULL,
          host       TEXT NOT NULL,
          heartbeat  INTEGER NOT NULL
        );
        CREATE TABLE queue_flags (
          key   TEXT PRIMARY KEY,
          value TEXT NOT NULL
        );
      `);
    },
  },
];
