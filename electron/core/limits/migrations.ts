import { migrate, requireTable, type Db, type Migration } from '../db/open.ts';

/** The pacing limiter's owner name in mediadesk.db's migration_ledger (OpenOptions.ledger). */
export const LIMITER_LEDGER = 'limiter';

const WHY = 'the queue migrations make it, so open the queue (openEngine) first';

/**
 * The pacing limiter's tables in mediadesk.db, recorded under LIMITER_LEDGER. Numbered and
 * immutable once shipped: a change is a new entry at the end (docs/ARCHITECTURE.md, Migrations).
 */
export const LIMITER_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'limiter_grants, limiter_daily_uses, limiter_caps and limiter_learned_caps taken over from queue migrations 8 and 11',
    up: (db) => {
      requireTable(db, 'limiter_grants', ['scope', 'granted_at'], WHY);
      requireTable(db, 'limiter_daily_uses', ['scope', 'tool', 'day', 'uses'], WHY);
      requireTable(db, 'limiter_caps', ['plan', 'tool', 'cap'], WHY);
      requireTable(db, 'limiter_learned_caps', ['scope', 'tool', 'cap', 'learned_at', 'until'], WHY);
    },
  },
];

/** Brings the limiter's tables on this connection (one the queue's migrations opened) to its last migration. */
export function migrateLimiter(db: Db): void {
  migrate(db, db.name, LIMITER_MIGRATIONS, LIMITER_LEDGER);
}
