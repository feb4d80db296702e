import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export type Db = Database.Database;

/**
 * A migration is numbered and immutable once shipped: a schema change is always a new entry,
 * never an edit of an old one (the Signal Desktop rule), so every user's file converges.
 */
export interface Migration {
  version: number;
  name: string;
  up: (db: Db) => void;
}

export class DatabaseTooNewError extends Error {
  constructor(path: string, found: number, known: number) {
    super(
      `${path} was written by a newer MediaDesk (schema ${found}, this build knows ${known}); refusing to open it so nothing is lost`,
    );
    this.name = 'DatabaseTooNewError';
  }
}

export interface OpenOptions {
  /** Page size of a file created now (SQLite cannot change it once the file is in WAL mode). */
  pageSize?: number;
  /**
   * Records these migrations under this owner in the file's migration_ledger table, not in its
   * user_version: for an owner sharing a file whose user_version is another's (mediadesk.db's queue).
   */
  ledger?: string;
}

/** Opens (creating if needed) a SQLite file in WAL mode and brings it to the latest migration. */
export function openDatabase(path: string, migrations: readonly Migration[], opts: OpenOptions = {}): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  if (opts.pageSize && db.pragma('page_count', { simple: true }) === 0)
    db.pragma(`page_size = ${Math.trunc(opts.pageSize)}`);
  db.pragma('journal_mode = WAL');
  // NORMAL is durable across process crashes in WAL mode; only an OS crash can lose the last commit.
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db, path, migrations, opts.ledger);
  return db;
}

/** Where a file records how far one owner's migrations went. */
interface VersionRecord {
  read(): number;
  write(version: number): void;
}

const userVersion = (db: Db): VersionRecord => ({
  read: () => db.pragma('user_version', { simple: true }) as number,
  write: (version) => db.pragma(`user_version = ${version}`),
});

/** One row per owner; the table is made by the first migration recorded in it, in that migration's transaction. */
function ledgerRecord(db: Db, owner: string): VersionRecord {
  const exists = () =>
    !!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'migration_ledger'").get();
  return {
    read: () =>
      exists()
        ? ((db.prepare('SELECT version FROM migration_ledger WHERE owner = ?').pluck().get(owner) as
            number | undefined) ?? 0)
        : 0,
    write: (version) => {
      db.exec('CREATE TABLE IF NOT EXISTS migration_ledger (owner TEXT PRIMARY KEY, version INTEGER NOT NULL)');
      db.prepare(
        'INSERT INTO migration_ledger (owner, version) VALUES (?, ?) ON CONFLICT (owner) DO UPDATE SET version = excluded.version',
      ).run(owner, version);
    },
  };
}

/**
 * Brings the file to the last of `migrations`, each in its own transaction with its version, so a
 * crash leaves whole migrations. `ledger` names an owner recorded in migration_ledger (OpenOptions).
 */
export function migrate(db: Db, path: string, migrations: readonly Migration[], ledger?: string): void {
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  sorted.forEach((m, i) => {
    if (m.version !== i + 1)
      throw new Error(`migrations must be numbered 1..n without gaps; found ${m.version} at position ${i + 1}`);
  });
  const record = ledger ? ledgerRecord(db, ledger) : userVersion(db);
  const current = record.read();
  if (current > sorted.length)
    throw new DatabaseTooNewError(ledger ? `${path} (${ledger})` : path, current, sorted.length);
  for (const m of sorted.slice(current)) {
    db.transaction(() => {
      m.up(db);
      record.write(m.version);
    })();
  }
}

/**
 * Throws unless `table` exists with every one of `columns`: the first migration of an owner taking
 * over a table another owner's (immutable) migrations made. `why` says what must run first.
 */
export function requireTable(db: Db, table: string, columns: readonly string[], why: string): void {
  const have = new Set((db.pragma(`table_info(${JSON.stringify(table)})`) as { name: string }[]).map((c) => c.name));
  const missing = columns.filter((c) => !have.has(c));
  if (!have.size || missing.length)
    throw new Error(`${have.size ? `${table} lacks ${missing.join(', ')}` : `no ${table} table`} yet: ${why}`);
}
