import type { Migration } from '../db/open.ts';

/**
 * hot-folders.db: the hot folders and every file each one has seen, in a file of their own (the
 * queue's migrations are numbered apart). Numbered and immutable once shipped (ARCHITECTURE.md).
 */
export const HOT_FOLDER_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'hot_folders and hot_folder_files',
    up: (db) => {
      db.exec(`
        CREATE TABLE hot_folders (
          id TEXT PRIMARY KEY,
          folder TEXT NOT NULL UNIQUE,
          tool TEXT NOT NULL,
          params TEXT NOT NULL,
          out_dir TEXT NOT NULL,
          state TEXT NOT NULL CHECK (state IN ('active', 'paused')),
          problem TEXT,
          created_at INTEGER NOT NULL
        );
        CREATE TABLE hot_folder_files (
          folder_id TEXT NOT NULL REFERENCES hot_folders (id) ON DELETE CASCADE,
          path TEXT NOT NULL,
          size INTEGER NOT NULL,
          mtime_ms INTEGER NOT NULL,
          state TEXT NOT NULL CHECK (state IN ('waiting', 'queuing', 'queued', 'done', 'failed', 'skipped', 'rejected')),
          job_id TEXT,
          reason TEXT,
          output TEXT,
          updated_at INTEGER NOT NULL,
          PRIMARY KEY (folder_id, path)
        );
        CREATE INDEX hot_folder_files_state ON hot_folder_files (folder_id, state);
        CREATE INDEX hot_folder_files_updated ON hot_folder_files (folder_id, updated_at);
      `);
    },
  },
  {
    version: 2,
    name: 'hot_folders.settle_seconds',
    // Bounds live in code (SETTLE_SECONDS), not a CHECK: widening them later needs no table rebuild.
    up: (db) => {
      db.exec('ALTER TABLE hot_folders ADD COLUMN settle_seconds INTEGER NOT NULL DEFAULT 2');
    },
  },
  {
    version: 3,
    name: 'hot_folders.unsourced_jobs',
    // The spend guard's count: jobs queued from files that look like MediaDesk's own results.
    up: (db) => {
      db.exec('ALTER TABLE hot_folders ADD COLUMN unsourced_jobs INTEGER NOT NULL DEFAULT 0');
    },
  },
  {
    version: 4,
    name: 'hot_folders.shared and team_key; hot_folder_files by job',
    // shared: each file is claimed on the team server first; team_key: the folder's id there.
    up: (db) => {
      db.exec(`
        ALTER TABLE hot_folders ADD COLUMN shared INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE hot_folders ADD COLUMN team_key TEXT;
        CREATE INDEX hot_folder_files_job ON hot_folder_files (job_id) WHERE job_id IS NOT NULL;
      `);
    },
  },
];
