import { setTimeout as sleep } from 'node:timers/promises';
import type { SyncErrorKind, SyncProgress, SyncReport } from '../../../shared/contract/audit.ts';
import { ApiClient, ApiError, backoffDelay, type ApiTarget } from '../api/client.ts';
import { APP_LOCK_WAIT, CacheBusyError, isBusy, whenWritable, type LockWait } from './busy.ts';
import { diskFullSyncStop, isDiskFull } from './disk-space.ts';
import { checkEvent, type EventRow } from './event.ts';
import { BudgetExhaustedError, keyFingerprint, type RequestLedger } from './ledger.ts';
import type { AuditStore } from './store.ts';
import type { SyncState, SyncStateRepo, Window } from './sync-state.ts';

export const AUDIT_PATH = '/v1/analytics/audit-logs/events';
/** api-spec, Limits: retention and the widest window are 15 days. */
export const WINDOW_DAYS = 15;
const DAY_MS = 86_400_000;
/** Re-read a little before the newest complete instant: events can be written with a slightly older date. */
export const OVERLAP_MS = 15 * 60_000;

export interface SyncOptions {
  target: () => Promise<ApiTarget>;
  pace?: () => Promise<void>;
  store: AuditStore;
  ledger: RequestLedger;
  state: SyncStateRepo;
  clock?: () => Date;
  perPage?: number;
  /** Attempts for a 5xx or network failure of one page (each one counted in the ledger). */
  attempts?: number;
  maxBackoffMs?: number;
  onProgress?: (p: SyncProgress) => void;
  /**
   * Ctrl-C: no page is asked for after it (a request in flight is answered and its page stored, as
   * it was paid for, unless another process holds the cache: the page is then read again by the
   * next sync); the walk's place is kept and the sync ends `stopped`, without an error.
   */
  signal?: AbortSignal;
  /** How a write waits while another process holds the cache (busy.ts); the app's way by default. */
  lockWait?: LockWait;
  /**
   * Each page's events and the walk's place after it, before the cache stores them: the team
   * archive (team-sync.ts). A throw stops the sync (team_server) and the page is not stored here either.
   */
  beforePage?: (rows: readonly EventRow[], next: SyncState) => Promise<void>;
}

/** What a sync that gave up waiting for the cache says becomes of it. */
const RESUME_LATER =
  'the events of the pages read so far are cached, and the next sync resumes from where this one stopped';

class SyncStop extends Error {
  readonly kind: SyncErrorKind;
  readonly retryAfterUntil?: number;
  constructor(kind: SyncErrorKind, message: string, retryAfterUntil?: number) {
    super(message);
    this.kind = kind;
    this.retryAfterUntil = retryAfterUntil;
  }
}

interface Page {
  data: unknown[];
  meta?: { next_cursor?: string | null };
}

const dayOf = (ts: number) => new Date(ts).toISOString().slice(0, 10);
const dayStart = (ts: number) => Date.parse(`${dayOf(ts)}T00:00:00Z`);

/**
 * The windows to ask for: from the newest complete instant (less the overlap), or from the start
 * of retention, to today, clamped to the 15-day retention and cut into windows of at most 15 days
 * (date_to - date_from <= 15, the API's rule), newest first so the freshest events land first.
 */
export function planWindows(nowMs: number, completeThrough: number | null): Window[] {
  const today = dayStart(nowMs);
  const oldest = today - WINDOW_DAYS * DAY_MS;
  const from = completeThrough === null ? oldest : Math.max(oldest, dayStart(completeThrough - OVERLAP_MS));
  const windows: Window[] = [];
  for (let to = today; to >= from; to -= (WINDOW_DAYS + 1) * DAY_MS) {
    windows.push({ from: dayOf(Math.max(from, to - WINDOW_DAYS * DAY_MS)), to: dayOf(to) });
  }
  return windows;
}

/**
 * A walk planned on an earlier day may reach past the service's 15-day retention: each window is cut
 * to it and one wholly older dropped. Its stored cursor stays (a 400 on it restarts the window anyway).
 */
export function withinRetention(windows: readonly Window[], nowMs: number): Window[] {
  const oldest = dayOf(dayStart(nowMs) - WINDOW_DAYS * DAY_MS);
  return windows.filter((w) => w.to >= oldest).map((w) => (w.from < oldest ? { ...w, from: oldest } : w));
}

/** 403 on the audit search has three causes (api-spec, Authentication 3); the message tells which. */
export function classifyForbidden(message: string): SyncErrorKind {
  if (/enterprise|plan/i.test(message)) return 'forbidden_plan';
  if (/not enabled|disabled/i.test(message)) return 'forbidden_disabled';
  if (/admin|owner|role/i.test(message)) return 'forbidden_role';
  return 'forbidden';
}

const FORBIDDEN_HINT: Partial<Record<SyncErrorKind, string>> = {
  forbidden_plan: 'audit logs need an Enterprise plan',
  forbidden_disabled: 'audit logs are not enabled for this team',
  forbidden_role: 'only team admins and owners can read the audit log; use an admin or owner key',
  forbidden: 'this key may not read the audit log (admins and owners of Enterprise teams with audit logs enabled)',
};

/**
 * One sync: walks the planned (or interrupted) windows page by page through the cursor. Each
 * page's rows and the cursor that follows it are committed together, so a kill at any point
 * resumes at the first page not yet stored, and re-reading a page only meets INSERT OR IGNORE.
 */
export async function runSync(opts: SyncOptions): Promise<SyncReport> {
  const clock = opts.clock ?? (() => new Date());
  const perPage = opts.perPage ?? 100;
  const attempts = opts.attempts ?? 4;
  const target = await opts.target();
  const fp = keyFingerprint(target.apiKey);
  // Retries are ours, not the client's: every attempt must pass the ledger first.
  const client = new ApiClient(() => target, {
    retries: 0,
    maxDelayMs: opts.maxBackoffMs ?? 30_000,
    pace: opts.pace,
  });
  const state = opts.state.load(fp);
  const startedAt = clock().getTime();
  const report: SyncReport = { outcome: 'complete', pages: 0, received: 0, inserted: 0, requests: 0, windows: [] };

  if (state.retryAfterUntil !== null && state.retryAfterUntil > startedAt) {
    const msg = `the API asked to wait (429) until ${new Date(state.retryAfterUntil).toISOString()}; not sending`;
    return { ...report, outcome: 'stopped', error: { kind: 'rate_limited', message: msg } };
  }
  state.lastSyncAt = startedAt;
  if (state.windows.length > 0) {
    const first = state.windows[0];
    state.windows = withinRetention(state.windows, startedAt);
    // The window the cursor walked is gone altogether: its place means nothing in the next one.
    if (state.windows[0]?.to !== first.to) state.cursor = null;
  }
  // A new walk, or an interrupted one whose days have all left the retention since.
  if (state.windows.length === 0) {
    state.windows = planWindows(startedAt, state.completeThrough);
    state.cursor = null;
    state.walkStartedAt = startedAt;
  }
  report.windows = [...state.windows];
  const lockWait = opts.lockWait ?? APP_LOCK_WAIT;
  // A wait for the cache is said once, in the progress, until the write it held back is done.
  let lastWaiting: string | null = null;
  const write = async <T>(f: () => T): Promise<T> => {
    const r = await whenWritable(opts.store, f, {
      wait: lockWait,
      signal: opts.signal,
      afterwards: RESUME_LATER,
      onWait: (waiting) => {
        if (waiting === lastWaiting || !opts.onProgress) return;
        lastWaiting = waiting;
        const window = state.windows[0] ?? report.windows[0];
        opts.onProgress({
          window,
          pages: report.pages,
          received: report.received,
          inserted: report.inserted,
          budgetLeft: opts.ledger.usage(fp, clock()).left,
          waiting,
        });
      },
    });
    lastWaiting = null;
    return r;
  };

  try {
    await write(() => opts.state.save(state));
    while (state.windows.length > 0 && !opts.signal?.aborted) {
      await walkWindow(opts, client, fp, state, report, { perPage, attempts, clock, write });
    }
    if (opts.signal?.aborted && state.windows.length > 0) return { ...report, outcome: 'stopped' };
    state.completeThrough = state.walkStartedAt ?? startedAt;
    state.walkStartedAt = null;
    state.lastSuccessAt = clock().getTime();
    state.lastError = null;
    state.retryAfterUntil = null;
    await write(() => opts.state.save(state));
    return report;
  } catch (err) {
    // Interrupted while waiting to retry: the place is saved with each page, and no error was the server's.
    if (opts.signal?.aborted && !(err instanceof SyncStop)) return { ...report, outcome: 'stopped' };
    const stop = syncStopOf(err, () => diskFullSyncStop(opts.store, report.inserted));
    state.lastError = { kind: stop.kind, message: stop.message, at: clock().getTime() };
    if (stop.retryAfterUntil !== undefined) state.retryAfterUntil = stop.retryAfterUntil;
    try {
      opts.store.tryWrite(() => opts.state.save(state), lockWait.attemptMs);
    } catch (saveErr) {
      // On a full disk, or a cache another process still holds, the error cannot be recorded; the
      // walk's place was saved with its last page.
      if (!isDiskFull(saveErr) && !isBusy(saveErr)) throw saveErr;
    }
    return { ...report, outcome: 'stopped', error: { kind: stop.kind, message: stop.message } };
  }
}

/** Runs a write to the cache once the lock is free (whenWritable). */
type Write = <T>(f: () => T) => Promise<T>;

async function walkWindow(
  opts: SyncOptions,
  client: ApiClient,
  fp: string,
  state: SyncState,
  report: SyncReport,
  walk: { perPage: number; attempts: number; clock: () => Date; write: Write },
): Promise<void> {
  const window = state.windows[0];
  // With newest-first pages, once a page reaches below the already complete instant the rest of
  // the window is known; stop there instead of spending budget on it. Order is checked, not assumed.
  const floor = state.completeThrough === null ? null : state.completeThrough - OVERLAP_MS;
  let lastTs = Infinity;
  let newestFirst = true;
  let restartedCursor = false;
  for (;;) {
    if (opts.signal?.aborted) return;
    const params = new URLSearchParams({ date_from: window.from, date_to: window.to, per_page: String(walk.perPage) });
    if (state.cursor) params.set('cursor', state.cursor);
    let page: Page;
    try {
      page = await fetchPage(opts, client, fp, params, report, walk);
    } catch (err) {
      if (
        err instanceof ApiError &&
        err.status === 400 &&
        state.cursor &&
        !restartedCursor &&
        err.invalidParams.some((p) => p.field === 'cursor')
      ) {
        // The stored cursor is no longer accepted (expired, other server): walk the window again; duplicates are ignored.
        restartedCursor = true;
        state.cursor = null;
        continue;
      }
      throw err;
    }
    if (!Array.isArray(page.data)) throw new SyncStop('server', 'the audit search answered without a data array');
    const rows: EventRow[] = [];
    for (const [i, e] of page.data.entries()) {
      const checked = checkEvent(e);
      if (checked.ok) rows.push(checked.row);
      else refuse(report, e, i + 1, checked.reason);
    }
    for (const r of rows) {
      if (r.ts > lastTs) newestFirst = false;
      lastTs = r.ts;
    }
    const next = typeof page.meta?.next_cursor === 'string' && page.meta.next_cursor ? page.meta.next_cursor : null;
    const reachedKnown = floor !== null && newestFirst && rows.length > 0 && lastTs < floor;
    const windowDone = next === null || reachedKnown;
    const after: SyncState = {
      ...state,
      windows: windowDone ? state.windows.slice(1) : state.windows,
      cursor: windowDone ? null : next,
    };
    if (opts.beforePage)
      await opts.beforePage(rows, after).catch((err: unknown) => {
        throw new SyncStop('team_server', `the team archive did not take the page: ${(err as Error).message ?? err}`);
      });
    // The page's rows and the place after it, committed together; the state moves on only then.
    const counts = await walk.write(() => opts.store.insertBatch(rows, 'sync', () => opts.state.save(after)));
    if (windowDone) {
      state.windows.shift();
      state.cursor = null;
    } else state.cursor = next;
    report.pages++;
    report.received += page.data.length;
    report.inserted += counts.inserted;
    opts.onProgress?.({
      window,
      pages: report.pages,
      received: report.received,
      inserted: report.inserted,
      budgetLeft: opts.ledger.usage(fp, walk.clock()).left,
    });
    if (windowDone) return;
  }
}

/** Refused events listed in a sync's report; all are counted. */
const MAX_SYNC_REJECTS_LISTED = 20;

/** An event of the page in hand (the report's next page) that the cache refused, named as the report lists it. */
function refuse(report: SyncReport, e: unknown, item: number, reason: string): void {
  report.rejected = (report.rejected ?? 0) + 1;
  const rejects = (report.rejects ??= []);
  if (rejects.length >= MAX_SYNC_REJECTS_LISTED) return;
  const id = typeof e === 'object' && e !== null ? (e as Record<string, unknown>).event_id : undefined;
  rejects.push({
    eventId: typeof id === 'string' && id ? id.slice(0, 200) : null,
    page: report.pages + 1,
    item,
    reason,
  });
}

async function fetchPage(
  opts: SyncOptions,
  client: ApiClient,
  fp: string,
  params: URLSearchParams,
  report: SyncReport,
  walk: { attempts: number; clock: () => Date; write: Write },
): Promise<Page> {
  for (let attempt = 1; ; attempt++) {
    try {
      await walk.write(() => opts.ledger.reserve(fp, walk.clock()));
    } catch (err) {
      if (err instanceof BudgetExhaustedError) throw new SyncStop('budget_exhausted', err.message);
      throw err;
    }
    report.requests++;
    try {
      return await client.get<Page>(AUDIT_PATH, params);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const s = err.status;
      if (s === 429) {
        const waitSec = err.retryAfterSec ?? 60;
        const until = walk.clock().getTime() + Math.ceil(waitSec * 1000);
        throw new SyncStop(
          'rate_limited',
          `429 ${err.message}: the API asks to wait ${Math.ceil(waitSec)} s (until ${new Date(until).toISOString()}); the sync stopped and resumes from here next time`,
          until,
        );
      }
      if (s === 403) {
        const kind = classifyForbidden(err.message);
        throw new SyncStop(kind, `403 ${err.message} (${FORBIDDEN_HINT[kind]})`);
      }
      if (s === 401) throw new SyncStop('unauthorized', `401 ${err.message}: check the API key`);
      if (s !== undefined && s >= 400 && s < 500) {
        if (s === 400 && params.has('cursor')) throw err;
        throw new SyncStop('invalid', `the API rejected the request: ${err.describe()}`);
      }
      // 5xx, network, timeout: retry with backoff, each retry paid from the budget.
      if (attempt >= walk.attempts)
        throw new SyncStop(
          s ? 'server' : 'network',
          `${err.describe()} (after ${attempt} attempts; the sync resumes from here next time)`,
        );
      await sleep(backoffDelay(attempt, err.retryAfterSec, opts.maxBackoffMs ?? 30_000), undefined, {
        signal: opts.signal,
      });
    }
  }
}

/** The reason a sync stopped, from what was thrown. */
function syncStopOf(err: unknown, diskFullMessage: () => string): SyncStop {
  if (err instanceof SyncStop) return err;
  if (isDiskFull(err)) return new SyncStop('disk_full', diskFullMessage());
  if (err instanceof CacheBusyError) return new SyncStop('busy', err.message);
  return new SyncStop('network', err instanceof Error ? err.message : String(err));
}
