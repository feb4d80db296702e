import { setTimeout as sleep } from 'node:timers/promises';
import type { SyncProgress, SyncReport } from '../../../shared/contract/audit.ts';
import { describe, isUnreachable } from '../team-server/connection.ts';
import type { LeaseHolder, TeamAuditArchive, TeamWalk } from '../team-server/audit-archive.ts';
import { CacheBusyError, whenWritable, type LockWait } from './busy.ts';
import { checkEvent, type EventRow } from './event.ts';
import type { AuditStore } from './store.ts';
import { freshSyncState, type SyncState, type SyncStateRepo } from './sync-state.ts';

/** How often a process that leaves the sync to the lease's holder looks for the events it archived. */
const FOLLOW_MS = 500;

export interface TeamSyncDeps {
  archive: TeamAuditArchive;
  store: AuditStore;
  state: SyncStateRepo;
  lockWait: LockWait;
  signal?: AbortSignal;
  onProgress?: (p: SyncProgress) => void;
  /** The key's fingerprint (the local walk's row); asked only by the process that syncs. */
  fingerprint: () => Promise<string>;
  /** runSync over the local cache, with the page hook and the signal given. */
  runLocal: (extra: {
    beforePage?: (rows: readonly EventRow[], next: SyncState) => Promise<void>;
    signal?: AbortSignal;
  }) => Promise<SyncReport>;
}

const walkOf = ({ fingerprint: _fp, ...walk }: SyncState): TeamWalk => walk;
const at = (ms: number) => new Date(ms).toISOString();
const holderText = (h: LeaseHolder) =>
  `${h.name} holds the audit sync lease until ${at(h.until)}${h.syncing ? ' and is syncing' : ''}`;

/** audit_meta's row of the fill watermark of one archive. */
const watermarkKey = (archiveId: string) => `team_archive_${archiveId}`;

/**
 * Copies the team archive's events after this cache's watermark into the cache, the watermark moving
 * with each batch in the same transaction; resolves to the events new here.
 */
export async function fillFromArchive(deps: Pick<TeamSyncDeps, 'archive' | 'store' | 'lockWait' | 'signal'>) {
  const { archive, store } = deps;
  const key = watermarkKey(await archive.id());
  const read = store.db.prepare('SELECT value FROM audit_meta WHERE key = ?').pluck();
  const save = store.db.prepare('INSERT OR REPLACE INTO audit_meta (key, value) VALUES (?, ?)');
  let watermark = (read.get(key) as number | undefined) ?? 0;
  let inserted = 0;
  while (!deps.signal?.aborted) {
    const page = await archive.since(watermark);
    if (!page.length) break;
    const rows: EventRow[] = [];
    for (const e of page) {
      try {
        const checked = checkEvent(JSON.parse(e.raw), e.raw);
        if (checked.ok) rows.push(checked.row);
      } catch {
        // Text that is not JSON cannot have been archived by a sync; it is passed over, not fatal.
      }
    }
    const last = page[page.length - 1].seq;
    const counts = await whenWritable(store, () => store.insertBatch(rows, 'sync', () => save.run(key, last)), {
      wait: deps.lockWait,
      signal: deps.signal,
      afterwards: 'the events taken so far are cached, and the next sync takes the rest from the team archive',
    });
    inserted += counts.inserted;
    watermark = last;
  }
  return inserted;
}

/**
 * A sync with a team server set: the process that takes the lease calls the service's audit API,
 * each page going to the team archive before this cache; the others do not call it, and follow the
 * archive while the holder syncs (taking over when its lease lapses). Every one fills its cache
 * from the archive. An unreachable server: the sync runs alone, as without a team server, and says so.
 */
export async function teamSync(deps: TeamSyncDeps): Promise<SyncReport> {
  const { archive } = deps;
  const empty: SyncReport = { outcome: 'complete', pages: 0, received: 0, inserted: 0, requests: 0, windows: [] };
  let filled = 0;
  try {
    for (;;) {
      const lease = await archive.take();
      if (lease.taken) return await asHolder(deps, filled);
      const h = lease.holder;
      // The holder syncs: what it archives comes here as it goes; when it is done, so is this sync.
      filled += await fillFromArchive(deps);
      if (!h.syncing || deps.signal?.aborted) {
        filled += await fillFromArchive(deps);
        await adoptWalk(deps);
        const held = await archive.holder();
        return {
          ...empty,
          outcome: deps.signal?.aborted ? 'stopped' : 'complete',
          inserted: filled,
          team: {
            role: 'reader',
            holder: h.name,
            filled,
            note: `${holderText(held ?? h)}: it calls the service's audit API for the team, not this process. This cache took ${filled} event(s) from the team archive, which holds ${await archive.count()}.`,
          },
        };
      }
      deps.onProgress?.({
        window: { from: '', to: '' },
        pages: 0,
        received: 0,
        inserted: filled,
        budgetLeft: 0,
        waiting: `${holderText(h)}: following the team archive (${filled} event(s) taken so far)`,
      });
      await sleep(FOLLOW_MS, undefined, { signal: deps.signal }).catch(() => {});
    }
  } catch (err) {
    if (err instanceof CacheBusyError) throw err;
    if (deps.signal?.aborted) return { ...empty, outcome: 'stopped', inserted: filled };
    const report = await deps.runLocal({ signal: deps.signal });
    return {
      ...report,
      team: {
        role: 'local',
        holder: null,
        filled,
        note: `The team server ${isUnreachable(err) ? 'cannot be reached' : 'could not be used'} (${describe(err)}): this process synced its own cache alone, from the service; these events are not in the team archive.`,
      },
    };
  }
}

/**
 * The team's walk kept as this key's too, so the cache's freshness (audit.status) is the team's and a
 * sync made alone later (the server gone) goes on from there. Without a key, nothing is kept.
 */
async function adoptWalk(deps: TeamSyncDeps): Promise<void> {
  const walk = await deps.archive.walk();
  const fp = walk && (await deps.fingerprint().catch(() => null));
  if (!walk || !fp) return;
  await whenWritable(deps.store, () => deps.state.save({ ...walk, fingerprint: fp }), {
    wait: deps.lockWait,
    signal: deps.signal,
    afterwards: 'the events are cached; the sync state is taken from the team server next time',
  });
}

/** The lease is this process's: the walk goes on from the team's place, renewed as it goes, each page archived first. */
async function asHolder(deps: TeamSyncDeps, filledBefore: number): Promise<SyncReport> {
  const { archive, state } = deps;
  const fp = await deps.fingerprint();
  const walk = await archive.walk();
  // The team's walk, whoever made it; none yet: the whole retention, so the archive holds all of it.
  const teamWalk: SyncState = walk ? { ...walk, fingerprint: fp } : freshSyncState(fp);
  await whenWritable(deps.store, () => state.save(teamWalk), {
    wait: deps.lockWait,
    signal: deps.signal,
    afterwards: 'nothing was synced',
  });
  const lost = new AbortController();
  const signal = deps.signal ? AbortSignal.any([deps.signal, lost.signal]) : lost.signal;
  let lostWhy: string | null = null;
  const renewing = setInterval(
    () =>
      void archive.renew().then(
        (ok) => {
          if (!ok) {
            lostWhy = 'the audit sync lease lapsed and another process took it';
            lost.abort();
          }
        },
        (err: unknown) => {
          lostWhy = `the lease could not be renewed: ${describe(err)}`;
          lost.abort();
        },
      ),
    Math.max(200, Math.floor(archive.leaseMs / 3)),
  );
  let report: SyncReport;
  try {
    report = await deps.runLocal({ signal, beforePage: (rows, next) => archive.put(rows, walkOf(next)) });
  } finally {
    clearInterval(renewing);
  }
  let note = `This process holds the audit sync lease: it synced the service's audit log into the team archive (${report.requests} request(s))`;
  if (lostWhy && !deps.signal?.aborted) {
    report = {
      ...report,
      outcome: 'stopped',
      error: report.error ?? { kind: 'team_server', message: `${lostWhy}; the sync stopped after the page in hand` },
    };
    note = `${note}, and stopped: ${lostWhy}`;
  } else {
    // The walk's end (complete through, or the error that stopped it) for whoever syncs next.
    await archive.put([], walkOf(state.load(fp))).catch(() => {});
    await archive.done(report.outcome === 'complete').catch(() => {});
  }
  const filled = filledBefore + (await fillFromArchive({ ...deps, signal: deps.signal }).catch(() => 0));
  return {
    ...report,
    team: {
      role: 'syncer',
      holder: archive.server.machineName,
      filled,
      note: `${note}. This cache took ${filled} more event(s) from the team archive.`,
    },
  };
}
