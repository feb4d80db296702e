import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import { formatTime } from '../../../shared/dates.ts';
import { nextUtcMidnight, utcDay } from '../../../shared/service-limits.ts';
import { waitMessage, windowWait, type Grant, type GrantRequest, type PaceLimiter } from '../limits/limiter.ts';
import { describe, isUnreachable, type TeamServer } from './connection.ts';

/** Machines seen within this long count in the fallback share. */
const MACHINES_SEEN_MS = 10 * 60_000;
/** A process that never reached the team server assumes this many machines share the limits. */
export const UNKNOWN_MACHINES = 4;
const HEARTBEAT_MS = 5000;
/**
 * Added to the limiter's safety margin: a team grant is timed by the server before its commit's
 * round trip, so its request reaches the service later than a local grant's would.
 */
export const TEAM_LATENESS_MS = 250;

export interface TeamPacingOptions {
  server: TeamServer;
  /** The local limiter: its rates, safety margin and daily caps (published, own, learned) are the team's too. */
  local: PaceLimiter;
  /** Credits one create of a tool costs (the price table), for the team budget; null: unknown. */
  priceOf: (tool: string) => number | null;
  /** How soon a lost server is asked again. */
  retryMs?: number;
}

/** What this process last learned from the server for a scope: the ground the fallback share stands on. */
interface Seen {
  at: number;
  /** Grants in the longest window then, every machine's. */
  inWindow: number;
  machines: number;
  uses: Map<string, number>;
  day: string;
  spent: number;
  budget: number | null;
  /** Budgets and today's spend of the projects asked about, every machine's. */
  projects: Map<string, { budget: number | null; spent: number }>;
}

/** A budget a create is weighed against: the team's, or its project's. */
interface BudgetCheck {
  budget: number | null;
  /** Spent today by every machine, as last read. */
  spent: number;
  /** Spent alone since (the fallback). */
  own: number;
  project: string | null;
}

interface FallbackGrant {
  /** The grant's own id: one the server took before it went (its commit unanswered) is not sent again. */
  ref: string;
  scope: string;
  at: number;
  kind: 'create' | 'poll';
  tool: string | null;
  credits: number;
  project: string;
}

/** A grant the server may have taken before it went (its commit unanswered) and this machine did not use. */
type UnsureGrant = Omit<FallbackGrant, 'at'>;

interface Down {
  since: number;
  why: string;
  retryAt: number;
  grants: FallbackGrant[];
  unsure: UnsureGrant[];
  machines: number;
}

/** Limits shared by every machine of a team on its PostgreSQL; the local share when it cannot be reached. */
export class TeamPacing {
  private readonly opts: TeamPacingOptions;
  private readonly seen = new Map<string, Seen>();
  private down: Down | null = null;
  private lastBeat = 0;
  /** The last create refused by the team budget, said until one is granted again. */
  private budgetHeld: string | null = null;
  private reconciling: Promise<void> | null = null;
  private machines = 0;

  constructor(opts: TeamPacingOptions) {
    this.opts = opts;
  }

  private get safetyMs(): number {
    return this.local.safetyMs + TEAM_LATENESS_MS;
  }

  private get local(): PaceLimiter {
    return this.opts.local;
  }

  /** Takes a place in the team's windows (and the team's daily cap and budget for a create), or says how long to wait. */
  acquire(req: GrantRequest): Promise<Grant> {
    return this.decide(req, null);
  }

  /** Whether it would go with `pending` more granted first; takes nothing. */
  peek(req: GrantRequest, pending: number): Promise<Grant> {
    return this.decide(req, pending);
  }

  /** Creates granted today per tool for a scope, every machine's, as last read (and this one's since, if the server is gone). */
  usedToday(scope: string): Map<string, number> {
    const s = this.seen.get(scope);
    const out = new Map(s && s.day === utcDay(Date.now()) ? s.uses : []);
    for (const g of this.down?.grants ?? [])
      if (g.scope === scope && g.tool) out.set(g.tool, (out.get(g.tool) ?? 0) + 1);
    return out;
  }

  /** What the Queue says of the team: the server is gone, or the team budget is spent; null otherwise. */
  get note(): string | null {
    return this.fallbackMessage ?? this.budgetHeld;
  }

  /** The Queue's line while the server cannot be reached; null while it can. */
  get fallbackMessage(): string | null {
    const d = this.down;
    if (!d) return null;
    return `The team server cannot be reached since ${formatTime(d.since)} (${d.why}): this machine paces alone within 1/${d.machines} of the service's limits, caps and the team budget; the counts are sent when it is back.`;
  }

  private async decide(req: GrantRequest, pending: number | null): Promise<Grant> {
    const grant = await this.grantOrFallback(req, pending);
    if (req.kind === 'create') {
      if (!grant.go && (grant.reason === 'team_budget' || grant.reason === 'project_budget'))
        this.budgetHeld = waitMessage(grant);
      else if (grant.go && pending === null) this.budgetHeld = null;
    }
    return grant;
  }

  private async grantOrFallback(req: GrantRequest, pending: number | null): Promise<Grant> {
    const now = Date.now();
    const ref = randomUUID();
    if (this.down && now < this.down.retryAt) return this.fallback(req, pending, now, ref);
    try {
      // One sends the grants made alone; the others wait for it, so none is sent twice.
      if (this.down) await (this.reconciling ??= this.reconcile().finally(() => (this.reconciling = null)));
      return await this.opts.server.tx((c) => this.onServer(c, req, pending, ref));
    } catch (err) {
      if (!isUnreachable(err)) throw err;
      const machines = this.machines || UNKNOWN_MACHINES;
      this.down = {
        since: this.down?.since ?? now,
        why: describe(err),
        retryAt: now + (this.opts.retryMs ?? 5000),
        grants: this.down?.grants ?? [],
        unsure: this.down?.unsure ?? [],
        machines: this.down?.machines ?? machines,
      };
      const grant = this.fallback(req, pending, now, ref);
      if (pending === null && !grant.go) {
        const create = req.kind === 'create';
        const credits = create ? (this.opts.priceOf(req.tool!) ?? 0) : 0;
        const project = (create && req.project) || '';
        this.down.unsure.push({
          ref,
          scope: req.scope,
          kind: req.kind,
          tool: create ? req.tool! : null,
          credits,
          project,
        });
      }
      return grant;
    }
  }

  /** The grant in one transaction under the scope's advisory lock (and the budget's, for a create). */
  private async onServer(c: PoolClient, req: GrantRequest, pending: number | null, ref: string): Promise<Grant> {
    const { scope } = req;
    const local = this.local;
    const localNow = Date.now();
    const take = pending === null;
    if (take) {
      await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`mediadesk.grants ${scope}`]);
      if (req.kind === 'create') await c.query("SELECT pg_advisory_xact_lock(hashtext('mediadesk.budget'))");
    }
    const clock = await c.query<{ now: string }>(
      'SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now',
    );
    const now = Number(clock.rows[0].now);
    await this.beat(c, now);
    const r = local.rates;
    const span = (sec: number) => sec * 1000 + this.safetyMs;
    const longest = Math.max(span(r.burstWindowSec), span(r.averageWindowSec));
    const day = utcDay(now);
    if (take)
      await c.query('DELETE FROM mediadesk.grants WHERE scope = $1 AND granted_at <= $2', [scope, now - longest]);
    const q = await c.query<{ inwindow: string; budget: string | null; spent: string }>(
      `SELECT (SELECT count(*) FROM mediadesk.grants WHERE scope = $1 AND granted_at > $2) AS inwindow,
              (SELECT credits FROM mediadesk.budgets WHERE name = 'day') AS budget,
              (SELECT coalesce(sum(credits), 0) FROM mediadesk.spend WHERE day = $3) AS spent`,
      [scope, now - longest, day],
    );
    const usesRows = await c.query<{ tool: string; uses: number }>(
      'SELECT tool, uses FROM mediadesk.daily_uses WHERE scope = $1 AND day = $2',
      [scope, day],
    );
    const uses = new Map(usesRows.rows.map((u) => [u.tool, u.uses]));
    const budget = q.rows[0].budget === null ? null : Number(q.rows[0].budget);
    const spent = Number(q.rows[0].spent);
    const before = this.seen.get(scope);
    const seen: Seen = {
      at: localNow,
      inWindow: Number(q.rows[0].inwindow),
      machines: this.machines || 1,
      uses,
      day,
      spent,
      budget,
      projects: before?.day === day ? before.projects : new Map(),
    };
    this.seen.set(scope, seen);
    const project = req.kind === 'create' && req.project ? req.project : null;
    const checks: BudgetCheck[] = [{ budget, spent, own: 0, project: null }];
    if (project) {
      const p = await projectToday(c, project, day);
      seen.projects.set(project, p);
      checks.push({ ...p, own: 0, project });
    }
    const price = req.kind === 'create' ? this.opts.priceOf(req.tool!) : 0;
    const held = this.capOrBudget(req, pending ?? 0, uses.get(req.tool ?? '') ?? 0, checks, price, 1);
    if (held) return held;
    // The windows: the grants' times read only when a window may be full.
    let times: number[] | null = null;
    const readTimes = async () => {
      const t = await c.query<{ at: string }>(
        'SELECT granted_at AS at FROM mediadesk.grants WHERE scope = $1 AND granted_at > $2 ORDER BY granted_at',
        [scope, now - longest],
      );
      return t.rows.map((x) => Number(x.at));
    };
    const burstLimit = Math.max(1, Math.floor(r.burstPerSec * r.burstWindowSec));
    if (seen.inWindow + (pending ?? 0) >= Math.min(burstLimit, Math.floor(r.averagePerSec * r.averageWindowSec)))
      times = await readTimes();
    const wait = windowWait(r, this.safetyMs, now, pending ?? 0, arrayCounts(times ?? []));
    if (wait) return { ...wait, resetsAt: localNow + wait.waitMs };
    const capLeft = this.capLeft(req, uses.get(req.tool ?? '') ?? 0);
    if (!take) return { go: true, capLeft };
    await c.query('INSERT INTO mediadesk.grants (scope, granted_at, machine, kind, ref) VALUES ($1, $2, $3, $4, $5)', [
      scope,
      now,
      this.opts.server.machine,
      req.kind,
      ref,
    ]);
    seen.inWindow++;
    if (req.kind === 'create') {
      await c.query(
        `INSERT INTO mediadesk.daily_uses (scope, tool, day, uses) VALUES ($1, $2, $3, 1)
         ON CONFLICT (scope, tool, day) DO UPDATE SET uses = mediadesk.daily_uses.uses + 1`,
        [scope, req.tool, day],
      );
      uses.set(req.tool!, (uses.get(req.tool!) ?? 0) + 1);
      await this.addSpend(c, day, price ?? 0, project ?? '');
      seen.spent += price ?? 0;
      const p = project ? seen.projects.get(project) : undefined;
      if (p) p.spent += price ?? 0;
    }
    return { go: true, capLeft };
  }

  /** One create's credits on the team's day, and on its project's ('' for none), as this machine's: one round trip. */
  private async addSpend(c: PoolClient, day: string, credits: number, project: string): Promise<void> {
    await c.query(
      `WITH team AS (
         INSERT INTO mediadesk.spend (day, machine, credits, creates) VALUES ($1, $2, $3, 1)
         ON CONFLICT (day, machine) DO UPDATE
           SET credits = mediadesk.spend.credits + $3, creates = mediadesk.spend.creates + 1)
       INSERT INTO mediadesk.project_spend (day, project, machine, credits, creates) VALUES ($1, $4, $2, $3, 1)
       ON CONFLICT (day, project, machine) DO UPDATE
         SET credits = mediadesk.project_spend.credits + $3, creates = mediadesk.project_spend.creates + 1`,
      [day, this.opts.server.machine, credits, project],
    );
  }

  /** This machine's heartbeat, and how many were seen lately (the fallback share's N). */
  private async beat(c: PoolClient, now: number): Promise<void> {
    if (now - this.lastBeat < HEARTBEAT_MS && this.machines) return;
    this.lastBeat = now;
    await c.query(
      `INSERT INTO mediadesk.machines (id, name, first_seen, last_seen) VALUES ($1, $2, $3, $3)
       ON CONFLICT (id) DO UPDATE SET last_seen = $3`,
      [this.opts.server.machine, this.opts.server.machineName, now],
    );
    const m = await c.query<{ n: string }>('SELECT count(*) AS n FROM mediadesk.machines WHERE last_seen > $1', [
      now - MACHINES_SEEN_MS,
    ]);
    this.machines = Math.max(1, Number(m.rows[0].n));
  }

  /** The daily cap's, the team budget's or the project budget's refusal of a create, or null; `share` scales what is left (the fallback). */
  private capOrBudget(
    req: GrantRequest,
    pending: number,
    used: number,
    budgets: BudgetCheck[],
    price: number | null,
    share: number,
    ownUsed = 0,
  ): Grant | null {
    if (req.kind !== 'create') return null;
    const { cap, resetsAt } = this.local.capStatus(req.scope, req.plan!, req.tool!);
    const capLeft = Number.isFinite(cap) ? Math.floor(Math.max(0, cap - used) * share) - ownUsed : Infinity;
    if (capLeft - pending <= 0)
      return {
        go: false,
        waitMs: resetsAt - Date.now(),
        reason: 'daily_cap',
        limit: cap,
        left: Math.max(0, capLeft),
        resetsAt,
      };
    for (const { budget, spent, own, project } of budgets) {
      if (budget === null) continue;
      const left = Math.max(0, budget - spent) * share - own;
      if ((pending + 1) * (price ?? Infinity) <= left + 1e-9) continue;
      const midnight = nextUtcMidnight(Date.now());
      return {
        go: false,
        waitMs: midnight - Date.now(),
        reason: project === null ? 'team_budget' : 'project_budget',
        limit: budget,
        left: Math.max(0, Math.floor(left)),
        resetsAt: midnight,
        ...(project === null ? {} : { project }),
      };
    }
    return null;
  }

  private capLeft(req: GrantRequest, used: number): number | null {
    if (req.kind !== 'create') return null;
    const { cap } = this.local.capStatus(req.scope, req.plan!, req.tool!);
    return cap - used - 1;
  }

  /**
   * Without the server: this machine takes 1/N of the windows, of what was left of the daily caps
   * and of the budget when it was last seen, N the machines seen then. The grants seen in the
   * window count as made at that moment, so a window the team had filled is not filled twice.
   */
  private fallback(req: GrantRequest, pending: number | null, now: number, ref: string): Grant {
    const d = this.down!;
    const seen = this.seen.get(req.scope);
    const share = 1 / d.machines;
    const r = this.local.rates;
    const mine = d.grants.filter((g) => g.scope === req.scope);
    const span = Math.max(r.burstWindowSec, r.averageWindowSec) * 1000 + this.safetyMs;
    // Never seen: the window counts as full when the server went.
    const before = seen
      ? Array(seen.inWindow).fill(seen.at)
      : Array(Math.floor(r.averagePerSec * r.averageWindowSec)).fill(d.since);
    const times = [...before, ...mine.map((g) => g.at)].filter((t) => t > now - span).sort((a, b) => a - b);
    const today = utcDay(now);
    const fresh = seen && seen.day === today;
    const price = req.kind === 'create' ? this.opts.priceOf(req.tool!) : 0;
    const todays = mine.filter((g) => utcDay(g.at) === today);
    const ownSpent = (project?: string) =>
      todays.filter((g) => project === undefined || g.project === project).reduce((sum, g) => sum + g.credits, 0);
    const checks: BudgetCheck[] = [
      { budget: seen?.budget ?? null, spent: fresh ? seen.spent : 0, own: ownSpent(), project: null },
    ];
    const project = req.kind === 'create' && req.project ? req.project : null;
    const p = fresh && project ? seen.projects.get(project) : undefined;
    if (project && p) checks.push({ budget: p.budget, spent: p.spent, own: ownSpent(project), project });
    const held = this.capOrBudget(
      req,
      pending ?? 0,
      fresh ? (seen.uses.get(req.tool ?? '') ?? 0) : 0,
      checks,
      price,
      share,
      todays.filter((g) => g.tool === req.tool).length,
    );
    if (held) return held;
    const wait = windowWait(r, this.safetyMs, now, pending ?? 0, arrayCounts(times), share);
    if (wait) return wait;
    if (pending === null)
      d.grants.push({
        ref,
        scope: req.scope,
        at: now,
        kind: req.kind,
        tool: req.kind === 'create' ? req.tool! : null,
        credits: req.kind === 'create' ? (price ?? 0) : 0,
        project: (req.kind === 'create' && req.project) || '',
      });
    return { go: true, capLeft: null };
  }

  /**
   * The grants made alone, sent when the server is back (their times moved to its clock), so the
   * counts add up; then pacing is shared again.
   */
  private async reconcile(): Promise<void> {
    const down = this.down;
    if (!down) return;
    await this.opts.server.tx(async (c) => {
      await this.takeBackUnused(c, down.unsure);
      await this.sendAlone(c, down.grants);
    });
    if (this.down === down) this.down = null;
  }

  /** Grants the server took whose answer was lost, and that no create or poll used: their counts undone. */
  private async takeBackUnused(c: PoolClient, unsure: UnsureGrant[]): Promise<void> {
    if (!unsure.length) return;
    const byRef = new Map(unsure.map((u) => [u.ref, u]));
    const gone = await c.query<{ ref: string; at: string }>(
      'DELETE FROM mediadesk.grants WHERE ref = ANY($1::uuid[]) RETURNING ref, granted_at AS at',
      [[...byRef.keys()]],
    );
    for (const row of gone.rows) {
      const u = byRef.get(row.ref)!;
      if (!u.tool) continue;
      const day = utcDay(Number(row.at));
      await c.query(
        'UPDATE mediadesk.daily_uses SET uses = uses - 1 WHERE scope = $1 AND tool = $2 AND day = $3 AND uses > 0',
        [u.scope, u.tool, day],
      );
      await c.query(
        `WITH team AS (UPDATE mediadesk.spend SET credits = credits - $1, creates = creates - 1
                       WHERE day = $2 AND machine = $3 AND creates > 0)
         UPDATE mediadesk.project_spend SET credits = credits - $1, creates = creates - 1
         WHERE day = $2 AND machine = $3 AND project = $4 AND creates > 0`,
        [u.credits, day, this.opts.server.machine, u.project],
      );
    }
  }

  private async sendAlone(c: PoolClient, grants: FallbackGrant[]): Promise<void> {
    if (!grants.length) return;
    const clock = await c.query<{ now: string }>(
      'SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now',
    );
    const skew = Number(clock.rows[0].now) - Date.now();
    const taken = await c.query<{ ref: string }>('SELECT ref FROM mediadesk.grants WHERE ref = ANY($1::uuid[])', [
      grants.map((g) => g.ref),
    ]);
    const known = new Set(taken.rows.map((r) => r.ref));
    for (const g of grants) {
      if (known.has(g.ref)) continue;
      const at = g.at + skew;
      await c.query(
        'INSERT INTO mediadesk.grants (scope, granted_at, machine, kind, ref) VALUES ($1, $2, $3, $4, $5)',
        [g.scope, at, this.opts.server.machine, g.kind, g.ref],
      );
      if (!g.tool) continue;
      await c.query(
        `INSERT INTO mediadesk.daily_uses (scope, tool, day, uses) VALUES ($1, $2, $3, 1)
         ON CONFLICT (scope, tool, day) DO UPDATE SET uses = mediadesk.daily_uses.uses + 1`,
        [g.scope, g.tool, utcDay(at)],
      );
      await this.addSpend(c, utcDay(at), g.credits, g.project);
    }
  }
}

/** A project's budget and what every machine spent on it on `day`. */
export async function projectToday(
  c: PoolClient,
  project: string,
  day: string,
): Promise<{ budget: number | null; spent: number }> {
  const r = await c.query<{ budget: string | null; spent: string }>(
    `SELECT (SELECT credits FROM mediadesk.project_budgets WHERE project = $1) AS budget,
            (SELECT coalesce(sum(credits), 0) FROM mediadesk.project_spend WHERE day = $2 AND project = $1) AS spent`,
    [project, day],
  );
  return { budget: r.rows[0].budget === null ? null : Number(r.rows[0].budget), spent: Number(r.rows[0].spent) };
}

/** Window counts over sorted times. */
function arrayCounts(times: number[]) {
  const after = (since: number) => {
    let i = times.length;
    while (i > 0 && times[i - 1] > since) i--;
    return i;
  };
  return {
    count: (since: number) => times.length - after(since),
    nth: (since: number, n: number) => times[after(since) + n],
  };
}
