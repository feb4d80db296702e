import { requireTable, type Migration } from '../db/open.ts';

/** The apps' owner name in mediadesk.db's migration_ledger (OpenOptions.ledger). */
export const APPS_LEDGER = 'apps';

/** Where the queue's immutable migrations 2, 3 and 7 left app_runs: the table apps migration 1 takes over. */
const APP_RUN_COLUMNS = [
  'id',
  'seq',
  'app_id',
  'app_name',
  'output_kind',
  'cost',
  'state',
  'inputs',
  'out_dir',
  'attempt_id',
  'attempts',
  'run_id',
  'run_status',
  'results',
  'expires_at',
  'outputs',
  'error',
  'invalid',
  'next_poll_at',
  'submitted_at',
  'created_at',
  'updated_at',
  'backend',
  'sandbox_of',
] as const;

/**
 * The app runs' schema in mediadesk.db, recorded under APPS_LEDGER. Numbered and immutable once
 * shipped: a change is a new entry at the end, never an edit (docs/ARCHITECTURE.md, Migrations).
 */
export const APPS_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'app_runs taken over from the queue migrations that made it',
    up: (db) =>
      requireTable(
        db,
        'app_runs',
        APP_RUN_COLUMNS,
        'the queue migrations make it, so open the queue (openEngine) first',
      ),
  },
  {
    version: 2,
    name: 'app_runs keep the local images sent and the metadata settings of the run',
    up: (db) => {
      db.exec('ALTER TABLE app_runs ADD COLUMN sources TEXT');
      db.exec('ALTER TABLE app_runs ADD COLUMN metadata TEXT');
    },
  },
  {
    version: 3,
    name: 'app_families: whether flows or apps answered, per backend',
    up: (db) =>
      db.exec(
        "CREATE TABLE app_families (backend TEXT PRIMARY KEY, family TEXT NOT NULL CHECK (family IN ('flows', 'apps')), answered_at INTEGER NOT NULL)",
      ),
  },
];
