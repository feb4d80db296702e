import type { Db } from '../../db/open.ts';
import type { Elsewhere, WriteTx } from './types.ts';

/** audit_meta key of a process loading through a stage (a staged or bulk load), followed by its pid. */
export const LOAD_OWNER = 'bulk_owner_';
/**
 * audit_meta key of a process importing or syncing, followed by `import_` or `sync_` and its pid:
 * only what other processes are told (audit.status's `elsewhere`); index safety rests on LOAD_OWNER.
 */
const ACTIVITY = 'activity_';

/** The pid at the end of a load-owner or activity record's key. */
export const pidOf = (key: string) => Number(key.slice(key.lastIndexOf('_') + 1));

export function isAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The audit_meta rows that tell every process which processes load, import or sync the cache. */
export class ProcessRecords {
  private readonly db: Db;
  private readonly writeTx: WriteTx;
  /** This process's imports running now (beginActivity). */
  importsHere = 0;

  constructor(db: Db, writeTx: WriteTx) {
    this.db = db;
    this.writeTx = writeTx;
  }

  /** Records this process as loading through a stage until restoreIndexes; a bulk load elsewhere then keeps the unique index. */
  registerLoad(): void {
    this.db
      .prepare('INSERT OR REPLACE INTO audit_meta (key, value) VALUES (?, ?)')
      .run(`${LOAD_OWNER}${process.pid}`, Date.now());
  }

  /** The processes recorded as loading the cache through a stage (registerLoad), live or not. */
  loadOwners(): number[] {
    return (this.db.prepare("SELECT key FROM audit_meta WHERE key GLOB 'bulk_owner_*'").pluck().all() as string[]).map(
      pidOf,
    );
  }

  otherLoadAlive(owners = this.loadOwners()): boolean {
    return owners.some((pid) => pid !== process.pid && isAlive(pid));
  }

  forgetMyLoad(): void {
    this.db.prepare('DELETE FROM audit_meta WHERE key = ?').run(`${LOAD_OWNER}${process.pid}`);
  }

  forgetAllLoads(): void {
    this.db.prepare("DELETE FROM audit_meta WHERE key GLOB 'bulk_owner_*'").run();
  }

  /**
   * Records this process as importing or syncing, for other processes' status; returns the end of
   * it. Records of processes gone are removed on the way. A refused write (a full disk) never fails
   * the task it tells of: the task meets and reports that itself.
   */
  beginActivity(kind: 'import' | 'sync'): () => void {
    const key = `${ACTIVITY}${kind}_${process.pid}`;
    const write = (f: () => void) => {
      try {
        f();
      } catch {
        // Only a note for other processes: the task goes on without it.
      }
    };
    write(() =>
      this.writeTx(() => {
        for (const k of this.activityKeys())
          if (!isAlive(pidOf(k))) this.db.prepare('DELETE FROM audit_meta WHERE key = ?').run(k);
        this.db.prepare('INSERT OR REPLACE INTO audit_meta (key, value) VALUES (?, ?)').run(key, Date.now());
      }),
    );
    if (kind === 'import') this.importsHere++;
    return () => {
      if (kind === 'import') this.importsHere--;
      write(() => this.db.prepare('DELETE FROM audit_meta WHERE key = ?').run(key));
    };
  }

  private activityKeys(): string[] {
    return this.db.prepare("SELECT key FROM audit_meta WHERE key GLOB 'activity_*'").pluck().all() as string[];
  }

  /** Whether another live process imports or syncs; a load recorded by a build without activity records counts as an import. */
  elsewhere(): Elsewhere {
    const others = this.activityKeys().filter((k) => pidOf(k) !== process.pid && isAlive(pidOf(k)));
    return {
      importing: others.some((k) => k.startsWith(`${ACTIVITY}import_`)) || this.otherLoadAlive(),
      syncing: others.some((k) => k.startsWith(`${ACTIVITY}sync_`)),
    };
  }
}
