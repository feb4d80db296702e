import { requireTable, type Migration } from '../db/open.ts';

/** Analytics' owner name in mediadesk.db's migration_ledger (OpenOptions.ledger). */
export const ANALYTICS_LEDGER = 'analytics';

const WHY = 'the queue migrations make it, so open the queue (openEngine) first';

/**
 * The credit-usage ledger and cache in mediadesk.db, recorded under ANALYTICS_LEDGER. Numbered and
 * immutable once shipped: a change is a new entry at the end (docs/ARCHITECTURE.md, Migrations).
 */
export const ANALYTICS_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'usage_ledger and usage_cache taken over from the queue migration that made them',
    up: (db) => {
      requireTable(db, 'usage_ledger', ['key_hash', 'day', 'count'], WHY);
      requireTable(db, 'usage_cache', ['key_hash', 'body_hash', 'body', 'response', 'fetched_at'], WHY);
    },
  },
];
