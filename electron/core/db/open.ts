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
  migrate(db, path, migrations);
  return db;
}

export function migrate(db: Db, path: string, migrations: readonly Migration[]): void {
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  sorted.forEach((m, i) => {
    if (m.version !== i + 1)
      throw new Error(`migrations must be numbered 1..n without gaps; found ${m.version} at position ${i + 1}`);
  });
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > sorted.length) throw new DatabaseTooNewError(path, current, sorted.length);
  for (const m of sorted.slice(current)) {
    db.transaction(() => {
      m.up(db);
      db.pragma(`user_version = ${m.version}`);
    })();
  }
}
