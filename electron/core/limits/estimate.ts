import { getTool } from '../../../shared/catalogue/index.ts';
import { DeskError } from '../../../shared/contract/define.ts';
import type { BatchBudget, CostEstimate, TeamToday } from '../../../shared/contract/jobs.ts';
import { appRunEstimate } from '../../../shared/cost-words.ts';
import { priceOfCreate } from '../../../shared/prices.ts';
import type { Pacer } from './pacer.ts';
import type { PriceBook } from './prices.ts';

/** A tool's price per create as far as it can be known, with its basis in words. */
export interface PriceEach {
  creditsEach: number | null;
  basis: string;
  learnedFrom: CostEstimate['learnedFrom'];
}

export interface EstimatorDeps {
  /** The price table with the user's own prices (the service's usage is by category: no tool's price is in it). */
  prices: Pick<PriceBook, 'priceOf'>;
  /** The engine's pacer: whose limits (scope and plan, as the queue paces them) and their daily caps. */
  pacer: Pick<Pacer, 'scope' | 'capStatus'>;
  /** With a team server: the studio's spend today and what is left of its budgets (null: none is set). */
  team?: (project: string | null) => Promise<TeamToday | null>;
}

const capOf = (c: { cap: number; used: number; left: number; resetsAt: number }): CostEstimate['cap'] =>
  Number.isFinite(c.cap) ? { limit: c.cap, used: c.used, left: c.left, resetsAt: c.resetsAt } : null;

/**
 * Estimates a batch before Start: its paid creates, what they leave of the tool's daily cap, and
 * its credits by the price table (shared/prices.ts) with the user's own prices over it.
 */
export class BatchEstimator {
  private readonly deps: EstimatorDeps;

  constructor(deps: EstimatorDeps) {
    this.deps = deps;
  }

  /** The tool's credits per create with these params, or why they are unknown. */
  async priceEach(toolId: string, params: Record<string, unknown>): Promise<PriceEach> {
    getTool(toolId);
    return { ...priceOfCreate(this.deps.prices.priceOf(toolId), params), learnedFrom: null };
  }

  /** Runs of a workflow app: its own price, and what they leave of its daily cap (`app:<id>`). */
  async appEstimate(app: { id: string; name: string; cost: number | null }, runs: number): Promise<CostEstimate> {
    const { scope, plan } = await this.deps.pacer.scope();
    return {
      ...appRunEstimate(app.name, app.cost, runs),
      cap: capOf(this.deps.pacer.capStatus(scope, plan, `app:${app.id}`)),
      ...(await this.team(null)),
    };
  }

  private async team(project: string | null): Promise<{ team?: TeamToday }> {
    const team = await this.deps.team?.(project);
    return team ? { team } : {};
  }

  async estimate(
    toolId: string,
    params: Record<string, unknown>,
    creates: number,
    project: string | null = null,
  ): Promise<CostEstimate> {
    let tool;
    try {
      tool = getTool(toolId);
    } catch (err) {
      throw new DeskError('invalid', (err as Error).message);
    }
    const { scope, plan } = await this.deps.pacer.scope();
    const price = await this.priceEach(toolId, params);
    const cap = this.deps.pacer.capStatus(scope, plan, toolId);
    return {
      title: tool.title,
      creates,
      cap: capOf(cap),
      credits: price.creditsEach === null ? null : price.creditsEach * creates,
      creditsEach: price.creditsEach,
      learnedFrom: price.learnedFrom,
      basis: price.basis,
      ...(await this.team(project)),
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
