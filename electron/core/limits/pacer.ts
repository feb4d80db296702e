import {
  DEMO_KEY_PLANS,
  planTierOf,
  SERVICE_RATES,
  type PlanTier,
  type RateLimits,
} from '../../../shared/service-limits.ts';
import type { ApiTarget } from '../api/client.ts';
import { isDayHold, limiterScope, type Grant, type GrantRequest, type PaceLimiter } from './limiter.ts';
import { realClock, sleepOn, type Clock } from '../clock.ts';

/**
 * The rates a host paces to: the service's, unless MEDIADESK_PACING=off (scripts and tests against
 * a local Sandbox whose limits are off, which would only be slowed).
 */
export function pacingRates(env: NodeJS.ProcessEnv): RateLimits | undefined {
  if (env.MEDIADESK_PACING === 'off') return undefined;
  return env.MEDIADESK_PACING_RATES ? ratesOf(env.MEDIADESK_PACING_RATES) : SERVICE_RATES;
}

const RATE_KEYS = ['burstPerSec', 'burstWindowSec', 'averagePerSec', 'averageWindowSec'] as const;

/**
 * MEDIADESK_PACING_RATES: other windows than the service's, as JSON with the four numbers of
 * RateLimits, for a Sandbox whose limits were set to the same (scripts and tests).
 */
function ratesOf(raw: string): RateLimits {
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    v = {};
  }
  const bad = RATE_KEYS.filter((k) => typeof v?.[k] !== 'number' || !((v[k] as number) > 0));
  if (bad.length)
    throw new Error(
      `MEDIADESK_PACING_RATES must be JSON with positive numbers ${RATE_KEYS.join(', ')}; ${bad.join(', ')} ${bad.length === 1 ? 'is' : 'are'} missing or not positive`,
    );
  return Object.fromEntries(RATE_KEYS.map((k) => [k, v[k]])) as unknown as RateLimits;
}

/** Whose limits requests count against now: the backend and key's scope, and the plan whose caps apply. */
export interface PaceScope {
  scope: string;
  plan: PlanTier;
  /** Whether the Sandbox's demo key decided the plan, or Settings. */
  planFrom: 'sandbox' | 'settings';
}

export interface PacerOptions {
  target: () => Promise<ApiTarget>;
  /** Backend.identity(); absent (tests of the queue alone), the target's URL stands for it. */
  identity?: () => Promise<string>;
  /** The plan in Settings, for a live key; a Sandbox demo key has its own. */
  planTier: () => PlanTier;
  /** What gate() waits on; default realClock. */
  clock?: Clock;
  /** Told each scope that differs from the last one, so readers without the key can say what is held. */
  remember?: (at: PaceScope) => void;
}

/** Grants shared beyond this data folder (core/team-server's TeamPacing): asked instead of the local limiter. */
export interface SharedPacing {
  acquire(req: GrantRequest): Promise<Grant>;
  peek(req: GrantRequest, pending: number): Promise<Grant>;
  /** Creates granted today per tool, every machine's. */
  usedToday(scope: string): Map<string, number>;
  /** What the Queue says of it: why pacing is local now, or a shared budget spent; null otherwise. */
  readonly note: string | null;
}

/** Tells where requests go now as a limiter scope, and takes creates, polls and other requests through the limiter. */
export class Pacer {
  readonly limiter: PaceLimiter;
  private readonly opts: PacerOptions;
  /** The scope last resolved, for the readers that cannot wait (the queue's status). */
  private last: PaceScope | null = null;
  private shared: SharedPacing | null = null;

  /** Paces with the team server's shared limits (null: this data folder's alone). */
  share(shared: SharedPacing | null): void {
    this.shared = shared;
  }

  get team(): SharedPacing | null {
    return this.shared;
  }

  private acquire(req: GrantRequest): Promise<Grant> {
    return this.shared ? this.shared.acquire(req) : Promise.resolve(this.limiter.acquire(req));
  }

  private peekAt(req: GrantRequest, pending: number): Promise<Grant> {
    return this.shared ? this.shared.peek(req, pending) : Promise.resolve(this.limiter.peek(req, pending));
  }

  /** Today's cap of a tool: the limiter's cap, with the team's creates when shared. */
  capStatus(
    scope: string,
    plan: PlanTier,
    tool: string,
  ): { cap: number; used: number; left: number; resetsAt: number } {
    const c = this.limiter.capStatus(scope, plan, tool);
    if (!this.shared) return c;
    const used = this.shared.usedToday(scope).get(tool) ?? 0;
    return { ...c, used, left: Math.max(0, c.cap - used) };
  }

  /** Creates granted today per tool: this data folder's, or the team's when shared. */
  usedToday(scope: string): Map<string, number> {
    return this.shared ? this.shared.usedToday(scope) : this.limiter.usedToday(scope);
  }

  constructor(limiter: PaceLimiter, opts: PacerOptions) {
    this.limiter = limiter;
    this.opts = opts;
  }

  /** Reads the backend and key in use; starts the built-in Sandbox if it is the backend and not started. */
  async scope(): Promise<PaceScope> {
    const target = await this.opts.target();
    const identity = this.opts.identity ? await this.opts.identity() : target.baseUrl;
    const plan = planTierOf(target.apiKey, this.opts.planTier());
    const planFrom = DEMO_KEY_PLANS[target.apiKey] ? 'sandbox' : 'settings';
    const next = { scope: limiterScope(identity, target.apiKey), plan, planFrom } as const;
    const last = this.last;
    this.last = next;
    if (!last || last.scope !== next.scope || last.plan !== next.plan || last.planFrom !== next.planFrom)
      this.opts.remember?.(next);
    return next;
  }

  get lastScope(): PaceScope | null {
    return this.last;
  }

  /** A create's place; `project` (the batch's) is weighed against its team budget too. */
  create(at: PaceScope, tool: string, project: string | null = null): Promise<Grant> {
    return this.acquire({ scope: at.scope, kind: 'create', tool, plan: at.plan, project });
  }

  /** Whether a create would go if `pending` more (`pendingOfTool` of this tool) were sent first; takes nothing. */
  async peek(
    at: PaceScope,
    tool: string,
    pending: number,
    pendingOfTool: number,
    project: string | null = null,
  ): Promise<Grant> {
    const req = { scope: at.scope, kind: 'create', tool, plan: at.plan, project } as const;
    const rate = await this.peekAt(req, pending);
    if (!rate.go && !isDayHold(rate.reason)) return rate;
    return this.peekAt(req, pendingOfTool);
  }

  /**
   * Waits until one more request fits the rate windows and takes its place: ApiClient's `pace`, so
   * usage, creations, flows, uploads, audit and doctor requests count with the queue's.
   */
  async gate(): Promise<void> {
    for (;;) {
      const grant = await this.poll(await this.scope());
      if (grant.go) return;
      await sleepOn(this.opts.clock ?? realClock, grant.waitMs);
    }
  }

  /** A poll's place, taken only if `reserved` more (creates about to be sent) would still fit after it. */
  async poll(at: PaceScope, reserved = 0): Promise<Grant> {
    const req = { scope: at.scope, kind: 'poll' } as const;
    if (reserved > 0) {
      const ahead = await this.peekAt(req, reserved);
      if (!ahead.go) return ahead;
    }
    return this.acquire(req);
  }

  /** Any other API request that counts in the rate windows but is no create (an upload's request-url). */
  request(at: PaceScope): Promise<Grant> {
    return this.acquire({ scope: at.scope, kind: 'poll' });
  }
}
