import { wholeNumberFromEnv } from '../../env-number.ts';
import type { LoadPath } from './types.ts';

/**
 * Rows per transaction of a row-by-row load: smaller batches die young in V8. 5,000 peaked ~60 MB
 * lower than 10,000 over a 1M-event import at about the same time (bench/history/audit-import.md, fourth round).
 */
export const BATCH_ROWS = 5000;
/**
 * Rows per transaction of a staged or bulk load, whose copies are SQL only. Random event ids touch
 * most event_id index pages per transaction whatever its size: 50,000 rows took 1M events from ~67 s to ~50 s.
 */
const BULK_BATCH_ROWS = 50_000;
/** A file is staged from about 50,000 events (exported events run 500 to 1,500 bytes); a smaller one goes row by row. */
const STAGE_MIN_BYTES = 48 * 1024 * 1024;

/**
 * `fallback`, or the environment's `name` when set to a whole number above 0: tests load a file of
 * a few MB through the staged and bulk paths (MEDIADESK_AUDIT_STAGE_MIN_BYTES, ..._BULK_BATCH_ROWS).
 */
const tunedByTests = (name: string, fallback: number): number => wholeNumberFromEnv(process.env, name) ?? fallback;
export const BYTES_PER_EVENT = 1000;
/**
 * A file of more events than this share of the cache's is loaded in bulk, a smaller one staged with
 * every index live: live indexes cost more per event the larger the cache, a bulk load ~13 s per 1M
 * cached to rebuild them (bench/history/audit-import.md, eighth round: the crossover is near a fifth of the cache).
 */
const BULK_SHARE_OF_CACHE = 1 / 6;

/** How a file of `bytes` goes into a cache of `cached` events, and its rows per transaction. */
export function planLoad(
  bytes: number,
  cached: number,
  opts: { load?: LoadPath; batchSize?: number },
): { load: LoadPath; batchSize: number } {
  const load = opts.load ?? loadPathFor(bytes, cached);
  const bulkRows = tunedByTests('MEDIADESK_AUDIT_BULK_BATCH_ROWS', BULK_BATCH_ROWS);
  return { load, batchSize: opts.batchSize ?? (load === 'rows' ? BATCH_ROWS : bulkRows) };
}

function loadPathFor(bytes: number, cached: number): LoadPath {
  if (bytes < tunedByTests('MEDIADESK_AUDIT_STAGE_MIN_BYTES', STAGE_MIN_BYTES)) return 'rows';
  return bytes / BYTES_PER_EVENT > cached * BULK_SHARE_OF_CACHE ? 'bulk' : 'staged';
}
