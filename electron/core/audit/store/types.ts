// The store's types, apart from store.ts so its parts (store/*) import no module that imports them.

export type Origin = 'sync' | 'import';

export interface CacheCounts {
  events: number;
  oldest: number | null;
  newest: number | null;
}

/** What processes other than this one are doing to the cache now. */
export interface Elsewhere {
  importing: boolean;
  syncing: boolean;
}

export interface InsertCounts {
  inserted: number;
  duplicates: number;
}

/** Runs a function as one write transaction holding the cache's lock (AuditStore.writeTx). */
export type WriteTx = <T>(fn: () => T) => T;
