import { createHash } from 'node:crypto';
import { formatTime } from '../../../shared/dates.ts';
import { openDatabase, type Db } from '../db/open.ts';
import { dbPaths } from '../paths.ts';
import { QUEUE_MIGRATIONS } from '../queue/migrations.ts';
import { migrateLimiter } from './migrations.ts';
import { capTierOf, PUBLISHED_DAILY_CAPS } from '../../../shared/published-caps.ts';
import {
  dailyCapOf,
  nextUtcMidnight,
  PLAN_TIERS,
  SERVICE_RATES,
  utcDay,
  type DailyCaps,
  type PlanTier,
  type RateLimits,
} from '../../../shared/service-limits.ts';

/** team_budget, project_budget: the team server's budget of credits a day, or a project's, is spent (core/team-server). */
export type LimitReason = 'burst' | 'average' | 'daily_cap' | 'team_budget' | 'project_budget';

/** Reasons that hold creates until a day's count resets or a limit is raised, not until a window moves. */
export const isDayHold = (reason: LimitReason) =>
  reason === 'daily_cap' || reason === 'team_budget' || reason === 'project_budget';

/** A create or poll may go now, or must wait: why, how many are left, and when that resets. */
export type Grant =
  | {
      go: true;
      /** Creates of this tool left today after this one; null for a poll. */
      capLeft: number | null;
    }
  | {
      go: false;
      waitMs: number;
      reason: LimitReason;
      /** The limit reached: requests in the window, or creates per day. */
      limit: number;
      /** What is left under it now (0: the wait is for it). */
      left: number;
      /** When one more fits (ms since the epoch): the window moves on, or 00:00 UTC. */
      resetsAt: number;
      /** Rate limits only: the window's length. */
      windowSec?: number;
      /** project_budget only: whose budget. */
      project?: string;
    };

export interface GrantRequest {
  /** Whose limits (limiterScope): the same backend and key share them across processes. */
  scope: string;
  kind: 'create' | 'poll';
  /** Creates only: the catalogue tool id and the key's plan tier, for the daily cap. */
  tool?: string;
  plan?: PlanTier;
  /** Creates only: the batch's project, whose team budget it counts against; absent or null: none. */
  project?: string | null;
}

export interface LimiterOptions {
  rates?: RateLimits;
  now?: () => number;
  /**
   * A grant counts this much longer than its window, so requests that reach the server late
   * (network jitter, another process's slower send) still fall inside the service's limit.
   */
  safetyMs?: number;
}

export const DEFAULT_SAFETY_MS = 250;

/** The scope of a backend and key: the key itself is never stored. */
export function limiterScope(backendIdentity: string, apiKey: string): string {
  return `${backendIdentity} ${createHash('sha256').update(apiKey).digest('hex').slice(0, 16)}`;
}

/**
 * Paces creates and polls to the rates and daily caps for every process on one data folder: rows
 * of mediadesk.db (queue migration 8), one BEGIN IMMEDIATE transaction per grant, so two
 * processes never both take the last place in a window.
 */
export class PaceLimiter {
  readonly rates: RateLimits;
  /** The clock grants and the daily caps' UTC days are counted by (LimiterOptions.now). */
  readonly now: () => number;
  readonly safetyMs: number;
  private readonly stmts;
  private readonly grantTx: (req: GrantRequest) => Grant;
  /** The UTC day this process last dropped a scope's older daily counts: once a day is enough. */
  private readonly daysPruned = new Map<string, string>();

  constructor(db: Db, opts: LimiterOptions = {}) {
    // Its tables' versions are its own (limits/migrations.ts), whichever connection it is given.
    migrateLimiter(db);
    this.rates = opts.rates ?? SERVICE_RATES;
    this.now = opts.now ?? Date.now;
    this.safetyMs = opts.safetyMs ?? DEFAULT_SAFETY_MS;
    this.stmts = {
      prune: db.prepare('DELETE FROM limiter_grants WHERE scope = ? AND granted_at <= ?'),
      count: db.prepare('SELECT count(*) AS n FROM limiter_grants WHERE scope = ? AND granted_at > ?').pluck(),
      nth: db
        .prepare(
          'SELECT granted_at FROM limiter_grants WHERE scope = ? AND granted_at > ? ORDER BY granted_at LIMIT 1 OFFSET ?',
        )
        .pluck(),
      insert: db.prepare('INSERT INTO limiter_grants (scope, granted_at) VALUES (?, ?)'),
      uses: db.prepare('SELECT uses FROM limiter_daily_uses WHERE scope = ? AND tool = ? AND day = ?').pluck(),
      use: db.prepare(
        `INSERT INTO limiter_daily_uses (scope, tool, day, uses) VALUES (?, ?, ?, 1)
         ON CONFLICT (scope, tool, day) DO UPDATE SET uses = uses + 1`,
      ),
      usedOn: db.prepare('SELECT tool, uses FROM limiter_daily_uses WHERE scope = ? AND day = ?'),
      pruneDays: db.prepare('DELETE FROM limiter_daily_uses WHERE scope = ? AND day < ?'),
      caps: db.prepare('SELECT tool, cap FROM limiter_caps WHERE plan = ?'),
      setCap: db.prepare(
        'INSERT INTO limiter_caps (plan, tool, cap) VALUES (?, ?, ?) ON CONFLICT (plan, tool) DO UPDATE SET cap = excluded.cap',
      ),
      dropCap: db.prepare('DELETE FROM limiter_caps WHERE plan = ? AND tool = ?'),
      unuse: db.prepare(
        'UPDATE limiter_daily_uses SET uses = MAX(0, uses - 1) WHERE scope = ? AND tool = ? AND day = ?',
      ),
      learned: db.prepare('SELECT tool, cap, until FROM limiter_learned_caps WHERE scope = ? AND until > ?'),
      learnedOf: db.prepare('SELECT cap, until FROM limiter_learned_caps WHERE scope = ? AND tool = ? AND until > ?'),
      learn: db.prepare(
        `INSERT INTO limiter_learned_caps (scope, tool, cap, learned_at, until) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (scope, tool) DO UPDATE SET cap = excluded.cap, learned_at = excluded.learned_at, until = excluded.until`,
      ),
    };
    const tx = db.transaction((req: GrantRequest) => this.grantNow(req));
    this.grantTx = (req) => tx.immediate(req);
  }

  /** Takes a place now, or says how long to wait and why; nothing is taken when it must wait. */
  acquire(req: GrantRequest): Grant {
    if (req.kind === 'create' && (!req.tool || !req.plan))
      throw new Error('a create needs its tool and plan for the daily cap');
    return this.grantTx(req);
  }

  /**
   * Whether a request would go now if `pending` more were granted first, taking nothing: lets a
   * caller prepare only what will fit, then take each place (acquire) right before it sends.
   */
  peek(req: GrantRequest, pending = 0): Grant {
    return this.grantNow(req, pending);
  }

  /** A plan tier's caps: the published ones (PUBLISHED_DAILY_CAPS) with the user's own over them. */
  capsOf(plan: PlanTier): DailyCaps {
    return { ...this.publishedCapsOf(plan), ...this.ownCapsOf(plan) };
  }

  /** The caps the service publishes for a plan tier's column; a tool it names no cap for has none. */
  publishedCapsOf(plan: PlanTier): DailyCaps {
    return PUBLISHED_DAILY_CAPS[capTierOf(plan)];
  }

  /**
   * A daily limit the service told by a 429 whose reset is `until`: the refused create is given
   * back, and the creates granted today are all the tool gets until then, whatever the table says,
   * for this scope (its key) only. Creates refused together each give theirs back, so the last
   * refusal leaves the cap at what the service took.
   */
  learnCap(scope: string, tool: string, until: number): void {
    const now = this.now();
    const day = utcDay(now);
    this.stmts.unuse.run(scope, tool, day);
    const used = (this.stmts.uses.get(scope, tool, day) as number | undefined) ?? 0;
    this.stmts.learn.run(scope, tool, used, now, until);
  }

  /** The caps learned from the service for a scope that still hold, by tool. */
  learnedCapsOf(scope: string): Map<string, { cap: number; until: number }> {
    const rows = this.stmts.learned.all(scope, this.now()) as { tool: string; cap: number; until: number }[];
    return new Map(rows.map((r) => [r.tool, { cap: r.cap, until: r.until }]));
  }

  /** The caps the user set on a plan tier, without the defaults. */
  ownCapsOf(plan: PlanTier): DailyCaps {
    const own = this.stmts.caps.all(plan) as { tool: string; cap: number }[];
    return Object.fromEntries(own.map((r) => [r.tool, r.cap]));
  }

  /** Sets the user's cap of a tool (`*`: every tool not named) on a plan; null goes back to the default. */
  setCap(plan: PlanTier, tool: string, cap: number | null): void {
    if (!PLAN_TIERS.includes(plan)) throw new Error(`no plan tier "${plan}"; the tiers are ${PLAN_TIERS.join(', ')}`);
    if (cap === null) return void this.stmts.dropCap.run(plan, tool);
    if (!Number.isInteger(cap) || cap < 0) throw new Error(`a daily cap is a whole number, 0 or more; got ${cap}`);
    this.stmts.setCap.run(plan, tool, cap);
  }

  /** Today's cap of a tool for a scope: how many creates were granted, how many are left, when it resets. */
  capStatus(
    scope: string,
    plan: PlanTier,
    tool: string,
  ): { cap: number; used: number; left: number; resetsAt: number } {
    const now = this.now();
    const used = (this.stmts.uses.get(scope, tool, utcDay(now)) as number | undefined) ?? 0;
    const table = dailyCapOf(this.capsOf(plan), tool);
    const learned = this.stmts.learnedOf.get(scope, tool, now) as { cap: number; until: number } | undefined;
    if (learned && learned.cap <= table)
      return { cap: learned.cap, used, left: Math.max(0, learned.cap - used), resetsAt: learned.until };
    return { cap: table, used, left: Math.max(0, table - used), resetsAt: nextUtcMidnight(now) };
  }

  /** Creates granted today per tool for a scope. */
  usedToday(scope: string): Map<string, number> {
    const rows = this.stmts.usedOn.all(scope, utcDay(this.now())) as { tool: string; uses: number }[];
    return new Map(rows.map((r) => [r.tool, r.uses]));
  }

  /** `pending`: set, nothing is taken and that many more are counted as granted already. */
  private grantNow(req: GrantRequest, pending: number | null = null): Grant {
    const now = this.now();
    const { scope } = req;
    let capLeft: number | null = null;
    if (req.kind === 'create') {
      const { cap, used, resetsAt } = this.capStatus(scope, req.plan!, req.tool!);
      if (used + (pending ?? 0) >= cap)
        return {
          go: false,
          waitMs: resetsAt - now,
          reason: 'daily_cap',
          limit: cap,
          left: Math.max(0, cap - used),
          resetsAt,
        };
      capLeft = cap - used - 1;
    }
    const r = this.rates;
    const longest = Math.max(r.burstWindowSec, r.averageWindowSec) * 1000 + this.safetyMs;
    this.stmts.prune.run(scope, now - longest);
    const wait = windowWait(r, this.safetyMs, now, pending ?? 0, {
      count: (since) => this.stmts.count.get(scope, since) as number,
      nth: (since, n) => this.stmts.nth.get(scope, since, n) as number,
    });
    if (wait) return wait;
    if (pending !== null) return { go: true, capLeft };
    this.stmts.insert.run(scope, now);
    if (req.kind === 'create') {
      const day = utcDay(now);
      this.stmts.use.run(scope, req.tool!, day);
      if (this.daysPruned.get(scope) !== day) {
        this.stmts.pruneDays.run(scope, day);
        this.daysPruned.set(scope, day);
      }
    }
    return { go: true, capLeft };
  }
}

/** The grants in a window: how many since a time, and the time of the nth of them (oldest first). */
export interface WindowCounts {
  count(since: number): number;
  nth(since: number, n: number): number;
}

/**
 * The wait the burst and average windows impose on one more request with `pending` more counted as
 * granted first, or null when it fits; `share` (0-1] scales the limits (a team's fallback share).
 */
export function windowWait(
  r: RateLimits,
  safetyMs: number,
  now: number,
  pending: number,
  grants: WindowCounts,
  share = 1,
): Extract<Grant, { go: false }> | null {
  let wait: Extract<Grant, { go: false }> | null = null;
  for (const [reason, perSec, windowSec] of [
    ['burst', r.burstPerSec, r.burstWindowSec],
    ['average', r.averagePerSec, r.averageWindowSec],
  ] as const) {
    const span = windowSec * 1000 + safetyMs;
    const limit = Math.max(1, Math.floor(perSec * windowSec * share));
    const count = grants.count(now - span);
    const ahead = count + pending;
    if (ahead < limit) continue;
    // The place frees when the grant that many back from the newest leaves the window.
    const nth = Math.min(count - 1, ahead - limit);
    const frees = (nth < 0 ? now - span : grants.nth(now - span, nth)) + span;
    if (!wait || frees - now > wait.waitMs)
      wait = {
        go: false,
        waitMs: Math.max(1, frees - now),
        reason,
        limit,
        left: 0,
        resetsAt: Math.max(frees, now + 1),
        windowSec,
      };
  }
  return wait;
}

/** A wait in plain words, for the Queue and the CLI: which limit, how many are left, when it resets. */
export function waitMessage(grant: Extract<Grant, { go: false }>, toolTitle = 'this tool'): string {
  // The one time format, in the person's own time, as the batch's held line says it.
  if (grant.reason === 'project_budget')
    return `Waiting: the project "${grant.project}" has spent its team budget of ${grant.limit} credits a day (${grant.left} left today); it resets at ${formatTime(grant.resetsAt)} your time, or raise it with mediadesk team budget --project.`;
  if (grant.reason === 'team_budget')
    return `Waiting: the team's budget of ${grant.limit} credits a day is spent (${grant.left} left today); it resets at ${formatTime(grant.resetsAt)} your time, or raise it with mediadesk team budget.`;
  if (grant.reason === 'daily_cap')
    return `Waiting: the daily limit of ${grant.limit} job${grant.limit === 1 ? '' : 's'} for ${toolTitle} is reached (${grant.left} left today); it resets at ${formatTime(grant.resetsAt)} your time.`;
  return `Waiting ${Math.ceil(grant.waitMs / 1000)} s: the service takes at most ${grant.limit} requests in ${grant.windowSec} s.`;
}

/** A limiter on a data folder's mediadesk.db, on a connection of its own (close it when done). */
export function openLimiter(home: string, opts: LimiterOptions = {}): { limiter: PaceLimiter; close(): void } {
  // The queue's shipped migrations 8 and 11 made the limiter's tables; the limiter's own take them over.
  const db = openDatabase(dbPaths(home).jobs, QUEUE_MIGRATIONS);
  return { limiter: new PaceLimiter(db, opts), close: () => db.close() };
}
