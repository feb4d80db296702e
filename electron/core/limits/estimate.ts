import { getTool, resolvePaths, type Slugs } from '../../../shared/catalogue/index.ts';
import { DeskError } from '../../../shared/contract/define.ts';
import type { BatchBudget, CostEstimate } from '../../../shared/contract/jobs.ts';
import {
  appRunEstimate,
  COST_UNKNOWN,
  creditFigure,
  LEARNED_PRICE_DAYS,
  learnedBasis,
} from '../../../shared/cost-words.ts';
import { nextUtcMidnight } from '../../../shared/service-limits.ts';
import type { UsagePoint } from '../../../shared/contract/team.ts';
import type { Pacer } from './pacer.ts';

/** A tool's price per create as far as it can be known, with its basis in words. */
export interface PriceEach {
  creditsEach: number | null;
  basis: string;
  learnedFrom: CostEstimate['learnedFrom'];
}

export interface EstimatorDeps {
  /** AnalyticsService.recentDays: the team's usage of the last days, by day (cached). */
  recentUsage: () => Promise<UsagePoint[]>;
  /** The engine's pacer: whose limits (scope and plan, as the queue paces them) and their daily caps. */
  pacer: Pick<Pacer, 'scope' | 'limiter'>;
  slugs: () => Slugs;
  now?: () => number;
}

/** An unreadable usage (not a refusal) is not asked again for this long: the day has 100 requests. */
const RETRY_UNREADABLE_MS = 10 * 60_000;

/** The name the credit usage gives a tool: its create path under /v1/ai/, slugs filled in. */
export function usageToolOf(toolId: string, slugs: Slugs, params: Record<string, unknown>): string {
  return resolvePaths(getTool(toolId), slugs, params).create.replace(/^\/v1\/ai\//, '');
}

/** The credits per use of a usage tool over the points given: credits divided by uses. */
export function learnedPrice(points: readonly UsagePoint[], usageTool: string): PriceEach {
  let uses = 0;
  let credits = 0;
  for (const p of points) {
    const t = p.byTool[usageTool];
    if (t) [uses, credits] = [uses + t.uses, credits + t.credits];
  }
  if (uses <= 0) return { creditsEach: null, basis: COST_UNKNOWN.unused(), learnedFrom: null };
  const each = credits / uses;
  return { creditsEach: each, basis: learnedBasis(each, uses), learnedFrom: { uses, days: LEARNED_PRICE_DAYS } };
}

const capOf = (c: { cap: number; used: number; left: number; resetsAt: number }): CostEstimate['cap'] =>
  Number.isFinite(c.cap) ? { limit: c.cap, used: c.used, left: c.left, resetsAt: c.resetsAt } : null;

/**
 * A tool priced by output area: the team's uses are taken to be at the field's default factor
 * (the usage does not say theirs), and this batch's factor scales the price by its square.
 */
export function byOutputArea(toolId: string, params: Record<string, unknown>, price: PriceEach): PriceEach {
  const tool = getTool(toolId);
  const field = tool.pricedByArea && tool.fields.find((f) => f.name === tool.pricedByArea);
  if (!field || price.creditsEach === null || !price.learnedFrom || !('default' in field)) return price;
  const from = Number(field.default);
  const to = Number(params[field.name] ?? from);
  if (!(from > 0) || !(to > 0) || to === from) return price;
  const each = price.creditsEach * (to / from) ** 2;
  return {
    creditsEach: each,
    basis: `${learnedBasis(each, price.learnedFrom.uses)}, at ×${to}: ${creditFigure((to / from) ** 2)} times the area of ×${from}, taken as your team's usual`,
    learnedFrom: { ...price.learnedFrom, areaScale: { field: field.name, from, to } },
  };
}

/**
 * Estimates a batch before Start: its paid creates, what they leave of the tool's daily cap, and
 * its credits learned from the team's own usage. A key that may not read the usage is remembered
 * until the day ends, so repeated checks do not spend the usage endpoint's daily requests.
 */
export class BatchEstimator {
  private readonly deps: EstimatorDeps;
  private readonly now: () => number;
  private readonly unreadable = new Map<string, { until: number; basis: string }>();

  constructor(deps: EstimatorDeps) {
    this.deps = deps;
    this.now = deps.now ?? Date.now;
  }

  /** The tool's credits per create, learned from the team's usage, or why they are unknown. */
  async priceEach(toolId: string, params: Record<string, unknown>): Promise<PriceEach> {
    const unknown = (basis: string) => ({ creditsEach: null, basis, learnedFrom: null });
    const { scope } = await this.deps.pacer.scope();
    const known = this.unreadable.get(scope);
    if (known && this.now() < known.until) return unknown(known.basis);
    let points: UsagePoint[];
    try {
      points = await this.deps.recentUsage();
    } catch (err) {
      const forbidden = err instanceof DeskError && err.code === 'forbidden';
      const basis = forbidden
        ? COST_UNKNOWN.forbidden
        : COST_UNKNOWN.unreadable(err instanceof Error ? err.message : String(err));
      this.unreadable.set(scope, {
        until: forbidden ? nextUtcMidnight(this.now()) : this.now() + RETRY_UNREADABLE_MS,
        basis,
      });
      return unknown(basis);
    }
    return byOutputArea(toolId, params, learnedPrice(points, usageToolOf(toolId, this.deps.slugs(), params)));
  }

  /** Runs of a workflow app: its own price, and what they leave of its daily cap (`app:<id>`). */
  async appEstimate(app: { id: string; name: string; cost: number | null }, runs: number): Promise<CostEstimate> {
    const { scope, plan } = await this.deps.pacer.scope();
    return {
      ...appRunEstimate(app.name, app.cost, runs),
      cap: capOf(this.deps.pacer.limiter.capStatus(scope, plan, `app:${app.id}`)),
    };
  }

  async estimate(toolId: string, params: Record<string, unknown>, creates: number): Promise<CostEstimate> {
    let tool;
    try {
      tool = getTool(toolId);
    } catch (err) {
      throw new DeskError('invalid', (err as Error).message);
    }
    const { scope, plan } = await this.deps.pacer.scope();
    const price = await this.priceEach(toolId, params);
    const cap = this.deps.pacer.limiter.capStatus(scope, plan, toolId);
    return {
      title: tool.title,
      creates,
      cap: capOf(cap),
      credits: price.creditsEach === null ? null : price.creditsEach * creates,
      creditsEach: price.creditsEach,
      learnedFrom: price.learnedFrom,
      basis: price.basis,
    };
  }
}

/** How long a Start waits for the tool's price before it queues without it (written in when it comes). */
export const PRICE_GRACE_MS = 400;

/**
 * batches.start with the tool's price stored in the batch. A budget in credits waits for it (and
 * is refused when the cost is unknown); else Start waits PRICE_GRACE_MS at most, then `later` writes it.
 */
export async function startEstimated<
  R extends { tool: string; params?: Record<string, unknown>; budget?: BatchBudget },
  T extends { batch: { id: string } | null; queued: number },
>(
  estimator: BatchEstimator,
  req: R,
  start: (req: R & { estimate?: { creditsEach: number | null; basis: string } }) => Promise<T>,
  later: (batchId: string, price: PriceEach) => void,
): Promise<T> {
  // An unknown tool or path: the planner refuses it in its own words.
  const pricing = estimator.priceEach(req.tool, req.params ?? {}).catch(() => undefined);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const grace = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), PRICE_GRACE_MS);
  });
  const price = req.budget?.credits !== undefined ? await pricing : await Promise.race([pricing, grace]);
  clearTimeout(timer);
  if (req.budget?.credits !== undefined && price && price.creditsEach === null)
    throw new DeskError(
      'invalid',
      `a budget in credits needs the batch's cost: ${price.basis}; set a budget in jobs instead`,
      [{ field: 'budget.credits', reason: price.basis }],
    );
  const result = await start({ ...req, estimate: price });
  const id = result.batch?.id;
  if (!price && id && result.queued > 0)
    void pricing.then((p) => {
      if (p) later(id, p);
    });
  return result;
}
