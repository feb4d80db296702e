/**
 * Disk space and an audit import: a load the disk beside the cache could not hold is refused
 * before anything is written, and a disk that fills up mid-load (another program) stops it with
 * a report that says what stayed and what to do.
 */
import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { LoadPath } from './import/types.ts';
import type { AuditStore } from './store.ts';

/**
 * Disk a load takes beside the cache per byte of the file: a 776 MB export of 1M events staged to
 * 1.37 GB and grew the cache by 1.42 GB (every event new), plus one transaction's log, ~2 KB an event.
 */
const STAGE_BYTES_PER_FILE_BYTE = 1.8;
const CACHE_BYTES_PER_FILE_BYTE = 1.9;
const WAL_BYTES_PER_ROW = 2048;

/** Why the disk beside the cache cannot take this load, or null (also when the free space cannot be read). */
export async function diskShortage(
  dir: string,
  bytes: number,
  load: LoadPath,
  batchSize: number,
): Promise<string | null> {
  let free: number;
  try {
    const fs = await statfs(dir);
    free = fs.bavail * fs.bsize;
  } catch {
    return null;
  }
  const stage = load === 'rows' ? 0 : bytes * STAGE_BYTES_PER_FILE_BYTE;
  const rows = bytes * CACHE_BYTES_PER_FILE_BYTE;
  // The log holds one transaction's pages until they are copied into the cache: at most the batch, at most the file.
  const growth = rows + Math.min(rows, batchSize * WAL_BYTES_PER_ROW);
  if (free >= stage + growth) return null;
  const parts = stage
    ? `${formatBytes(stage)} for its scratch copy while it loads and up to ${formatBytes(growth)}`
    : `up to ${formatBytes(growth)}`;
  return (
    `not enough free disk space beside the audit cache (${dir}): importing this ${formatBytes(bytes)} file takes about ` +
    `${formatBytes(stage + growth)} (${parts} as the cache grows, if every event is new), and ${formatBytes(free)} is free. ` +
    'Nothing was imported; free some space and import the file again.'
  );
}

export function isDiskFull(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e?.code === 'SQLITE_FULL' || e?.code === 'ENOSPC') return true;
  return /database or disk is full|ENOSPC|no space left on device/i.test(String(e?.message ?? err));
}

/** The report's error when the disk filled up mid-import. */
export function diskFullStop(store: AuditStore, accepted: number): string {
  const dir = dirname(store.db.name);
  let pending = false;
  try {
    pending = store.indexesPending();
  } catch {
    // Read only to word the message.
  }
  return (
    `the disk holding the audit cache filled up (${dir}), so the import stopped. The ${accepted} event(s) imported before it stay cached` +
    (pending
      ? '; its indexes are rebuilt (and any repeats among those events removed) before the next import, or when the cache is next opened'
      : '') +
    '. Free some space and import the file again: events already cached are skipped.'
  );
}

/** The sync's error when the disk filled up mid-walk. */
export function diskFullSyncStop(store: AuditStore, inserted: number): string {
  return `the disk holding the audit cache is full (${dirname(store.db.name)}): the sync stopped after ${inserted} new event(s), which stay cached. Free some space and sync again: it resumes from here`;
}

function formatBytes(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)} GB`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} MB`;
  return `${Math.max(1, Math.round(n / 1e3))} KB`;
}
