import { openDatabase, type Db } from '../db/open.ts';
import { ANALYTICS_LEDGER, ANALYTICS_MIGRATIONS } from './migrations.ts';

/** Analytics' own connection to mediadesk.db (`dbPaths(home).jobs`), its migrations applied; opened after the queue's. */
export function openAnalyticsDb(path: string): Db {
  return openDatabase(path, ANALYTICS_MIGRATIONS, { ledger: ANALYTICS_LEDGER });
}
