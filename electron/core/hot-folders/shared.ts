import { randomUUID } from 'node:crypto';
import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { PoolClient } from 'pg';
import type { JobRow } from '../queue/store.ts';
import { describe, isUnreachable, type TeamServer } from '../team-server/connection.ts';
import type { FileVersion, HotFolderStore } from './store.ts';

/** The file in a shared hot folder naming it on the team server, whatever path each machine mounts it at. */
export const FOLDER_ID_FILE = '.mediadesk-hot-folder';
/** How long a claim holds without its machine renewing it (MEDIADESK_HOT_CLAIM_LEASE_MS in tests). */
export const CLAIM_LEASE_MS = 60_000;
/** After the team server did not answer, how soon it is asked again. */
const RETRY_MS = 5000;

export const claimLeaseFrom = (env: NodeJS.ProcessEnv): number => {
  const n = Number(env.MEDIADESK_HOT_CLAIM_LEASE_MS);
  return Number.isInteger(n) && n >= 500 ? n : CLAIM_LEASE_MS;
};

/** A file version as every machine names it: the folder's id, the file's name, its size and whole-second mtime. */
export interface ClaimKey {
  folder: string;
  path: string;
  size: number;
  mtimeS: number;
}

export const claimKeyOf = (folderKey: string, v: FileVersion): ClaimKey => ({
  folder: folderKey,
  path: basename(v.path),
  size: v.size,
  mtimeS: Math.trunc(v.mtimeMs / 1000),
});

/** Mine, or held by another machine: `settled` (sent or not to be run, never taken over) or claimed until its lease ends. */
export type ClaimAnswer = { mine: true } | { mine: false; by: string; settled: boolean };

/** Why a shared folder cannot be claimed in now: no team server is set. */
export class NoTeamServerError extends Error {}

/**
 * The id of a shared hot folder, read from its FOLDER_ID_FILE or written there by the first machine:
 * linked into place from a file of its own, so two machines starting at once agree on one id.
 */
export async function folderKeyOf(folder: string): Promise<string> {
  const file = join(folder, FOLDER_ID_FILE);
  const read = async () => (await readFile(file, 'utf8').catch(() => '')).trim();
  const existing = await read();
  if (existing) return existing;
  const mine = join(folder, `${FOLDER_ID_FILE}.${randomUUID()}`);
  await writeFile(mine, `${randomUUID()}\n`);
  try {
    await link(mine, file).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
  } finally {
    await unlink(mine).catch(() => {});
  }
  const id = await read();
  if (!id) throw new Error(`${file} is empty: remove it, and MediaDesk writes a new one`);
  return id;
}

/**
 * The team server's record of which machine takes each file of a shared hot folder: claimed in one
 * transaction (a conflict means another machine has it), renewed while this process lives, settled
 * just before its create is sent. A claim whose lease ended unsettled is taken over.
 */
export class SharedClaims {
  private readonly server: () => TeamServer | null;
  readonly leaseMs: number;

  constructor(server: () => TeamServer | null, leaseMs = CLAIM_LEASE_MS) {
    this.server = server;
    this.leaseMs = leaseMs;
  }

  private async tx<T>(fn: (c: PoolClient, s: TeamServer, now: number) => Promise<T>): Promise<T> {
    const s = this.server();
    if (!s || !(await s.configured()))
      throw new NoTeamServerError('no team server is set (Settings > Team, mediadesk team connect URL)');
    return s.tx(async (c) => {
      // The server's clock, so the machines' leases are compared on one clock.
      const r = await c.query<{ now: string }>('SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now');
      return fn(c, s, Number(r.rows[0].now));
    });
  }

  /** Claims each version for this process, or says who holds it. */
  async claim(keys: readonly ClaimKey[]): Promise<ClaimAnswer[]> {
    return this.tx(async (c, s, now) => {
      const out: ClaimAnswer[] = [];
      for (const k of keys) {
        const taken = await c.query(
          `INSERT INTO mediadesk.hot_claims AS h (folder, path, size, mtime_s, state, machine, machine_name, lease_until, claimed_at)
           VALUES ($1, $2, $3, $4, 'claimed', $5, $6, $7, $8)
           ON CONFLICT (folder, path, size, mtime_s) DO UPDATE
             SET machine = excluded.machine, machine_name = excluded.machine_name,
                 lease_until = excluded.lease_until, claimed_at = excluded.claimed_at
             WHERE h.state = 'claimed' AND (h.lease_until < $8 OR h.machine = $5 OR h.machine_name = $6)
           RETURNING 1`,
          [k.folder, k.path, k.size, k.mtimeS, s.machine, s.machineName, now + this.leaseMs, now],
        );
        out.push(taken.rowCount ? { mine: true } : await holder(c, k));
      }
      return out;
    });
  }

  /** Keeps this process's unsettled claims from being taken over. */
  async renew(): Promise<void> {
    await this.tx((c, s, now) =>
      c.query(`UPDATE mediadesk.hot_claims SET lease_until = $2 WHERE machine = $1 AND state = 'claimed'`, [
        s.machine,
        now + this.leaseMs,
      ]),
    );
  }

  /**
   * Just before a create is sent: the claim is settled for this process (its own, its data folder's
   * from before a restart, or one whose holder is gone), or the machine that has it is named.
   */
  async settleToSend(k: ClaimKey): Promise<ClaimAnswer> {
    return this.tx(async (c, s, now) => {
      const r = await c.query(
        `INSERT INTO mediadesk.hot_claims AS h (folder, path, size, mtime_s, state, machine, machine_name, lease_until, claimed_at, settled_at)
         VALUES ($1, $2, $3, $4, 'settled', $5, $6, $7, $7, $7)
         ON CONFLICT (folder, path, size, mtime_s) DO UPDATE
           SET state = 'settled', machine = excluded.machine, settled_at = coalesce(h.settled_at, excluded.settled_at)
           WHERE h.machine = $5 OR h.machine_name = $6 OR (h.state = 'claimed' AND h.lease_until < $7)
         RETURNING 1`,
        [k.folder, k.path, k.size, k.mtimeS, s.machine, s.machineName, now],
      );
      return r.rowCount ? { mine: true } : holder(c, k);
    });
  }

  /** Claims of this process on files it decided not to run (as any machine would): no other machine takes them. */
  async settle(keys: readonly ClaimKey[]): Promise<void> {
    await this.forMine(keys, `UPDATE mediadesk.hot_claims SET state = 'settled', settled_at = $6`);
  }

  /** Claims this process gives back unsent (the queue could not take the files now): any machine may take them. */
  async release(keys: readonly ClaimKey[]): Promise<void> {
    await this.forMine(keys, 'DELETE FROM mediadesk.hot_claims');
  }

  /** `statement` (an UPDATE or DELETE; $6 is the server's time) on each of this process's unsettled claims of `keys`. */
  private async forMine(keys: readonly ClaimKey[], statement: string): Promise<void> {
    if (!keys.length) return;
    await this.tx(async (c, s, now) => {
      for (const k of keys)
        await c.query(
          `${statement} WHERE folder = $1 AND path = $2 AND size = $3 AND mtime_s = $4 AND machine = $5 AND state = 'claimed'`,
          [k.folder, k.path, k.size, k.mtimeS, s.machine, ...(statement.includes('$6') ? [now] : [])],
        );
    });
  }
}

async function holder(c: PoolClient, k: ClaimKey): Promise<ClaimAnswer> {
  const r = await c.query<{ machine_name: string; state: string }>(
    'SELECT machine_name, state FROM mediadesk.hot_claims WHERE folder = $1 AND path = $2 AND size = $3 AND mtime_s = $4',
    [k.folder, k.path, k.size, k.mtimeS],
  );
  const row = r.rows[0];
  return { mine: false, by: row?.machine_name ?? 'another machine', settled: row?.state === 'settled' };
}

/** What the engine does with a create before it is sent (EngineOptions.beforeCreate). */
export type CreateGate = null | { wait: string } | { cancel: string };

/** Why a shared hot folder's work waits while the team server is not there, in one sentence. */
export const unreachableWait = (why: string) =>
  `the team server cannot be reached (${why}); a shared hot folder's file is sent only once the team server says no other machine took it`;

/**
 * The shared hot folders of one process: their claims, and the gate the engine asks before each
 * create, so a file another machine took since it was queued here is never sent.
 */
export class SharedHotFolders {
  readonly claims: SharedClaims;
  private readonly store: HotFolderStore;
  /** Files being queued now (their jobs not yet recorded with them), by the path the job names. */
  private readonly queuing = new Map<string, ClaimKey>();
  private downUntil = 0;
  private downWhy = '';

  constructor(store: HotFolderStore, claims: SharedClaims) {
    this.store = store;
    this.claims = claims;
  }

  queuingNow(paths: ReadonlyMap<string, ClaimKey>): () => void {
    for (const [p, k] of paths) this.queuing.set(p, k);
    return () => {
      for (const p of paths.keys()) this.queuing.delete(p);
    };
  }

  async beforeCreate(job: Pick<JobRow, 'id' | 'inputPath'>): Promise<CreateGate> {
    const recorded = this.store.sharedFileOfJob(job.id);
    const key =
      (job.inputPath && this.queuing.get(job.inputPath)) ||
      (recorded && claimKeyOf(recorded.teamKey, recorded.version));
    if (!key) return null;
    if (Date.now() < this.downUntil) return { wait: unreachableWait(this.downWhy) };
    let answer: ClaimAnswer;
    try {
      answer = await this.claims.settleToSend(key);
    } catch (err) {
      if (!isUnreachable(err) && !(err instanceof NoTeamServerError)) throw err;
      this.downWhy = err instanceof NoTeamServerError ? err.message : describe(err);
      this.downUntil = Date.now() + RETRY_MS;
      return { wait: unreachableWait(this.downWhy) };
    }
    return answer.mine
      ? null
      : { cancel: `${key.path} was taken by ${answer.by} (a shared hot folder): it is processed there, not here` };
  }
}
