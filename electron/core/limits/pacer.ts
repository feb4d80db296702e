import {
  DEMO_KEY_PLANS,
  planTierOf,
  SERVICE_RATES,
  type PlanTier,
  type RateLimits,
} from '../../../shared/service-limits.ts';
import type { ApiTarget } from '../api/client.ts';
import { limiterScope, type Grant, type PaceLimiter } from './limiter.ts';
import { realClock, sleepOn, type Clock } from '../clock.ts';

/**
 * The rates a host paces to: the service's, unless MEDIADESK_PACING=off (scripts and tests against
 * a local Sandbox whose limits are off, which would only be slowed).
 */
export const pacingRates = (env: NodeJS.ProcessEnv): RateLimits | undefined =>
  env.MEDIADESK_PACING === 'off' ? undefined : SERVICE_RATES;

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

/** Tells where requests go now as a limiter scope, and takes creates, polls and other requests through the limiter. */
export class Pacer {
  readonly limiter: PaceLimiter;
  private readonly opts: PacerOptions;
  /** The scope last resolved, for the readers that cannot wait (the queue's status). */
  private last: PaceScope | null = null;

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

  create(at: PaceScope, tool: string): Grant {
    return this.limiter.acquire({ scope: at.scope, kind: 'create', tool, plan: at.plan });
  }

  /** Whether a create would go if `pending` more (`pendingOfTool` of this tool) were sent first; takes nothing. */
  peek(at: PaceScope, tool: string, pending: number, pendingOfTool: number): Grant {
    const req = { scope: at.scope, kind: 'create', tool, plan: at.plan } as const;
    const rate = this.limiter.peek(req, pending);
    if (!rate.go && rate.reason !== 'daily_cap') return rate;
    return this.limiter.peek(req, pendingOfTool);
  }

  /**
   * Waits until one more request fits the rate windows and takes its place: ApiClient's `pace`, so
   * usage, creations, flows, uploads, audit and doctor requests count with the queue's.
   */
  async gate(): Promise<void> {
    for (;;) {
      const grant = this.poll(await this.scope());
      if (grant.go) return;
      await sleepOn(this.opts.clock ?? realClock, grant.waitMs);
    }
  }

  /** A poll's place, taken only if `reserved` more (creates about to be sent) would still fit after it. */
  poll(at: PaceScope, reserved = 0): Grant {
    const req = { scope: at.scope, kind: 'poll' } as const;
    if (reserved > 0) {
      const ahead = this.limiter.peek(req, reserved);
      if (!ahead.go) return ahead;
    }
    return this.limiter.acquire(req);
  }

  /** Any other API request that counts in the rate windows but is no create (an upload's request-url). */
  request(at: PaceScope): Grant {
    return this.limiter.acquire({ scope: at.scope, kind: 'poll' });
  }
}
