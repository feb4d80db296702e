import { DeskError } from '../../../shared/contract/define.ts';
import type { BatchBudget } from '../../../shared/contract/jobs.ts';
import { BUDGET_HELD } from '../../../shared/cost-words.ts';
import type { JobStore } from '../queue/store.ts';

/**
 * Budgets per batch (batches.budget_credits, budget_jobs): the submitter asks before each create,
 * and a create that would go past the budget is not sent; the batch is held (held_by) until the
 * user raises or removes it. The statements are the queue store's.
 */
export class BatchBudgets {
  private readonly store: JobStore;

  constructor(store: JobStore) {
    this.store = store;
  }

  /** Batches held by their budget: their queued jobs are left out of the submitter's picks. */
  heldIds(): string[] {
    return this.store.budgetHeldBatches();
  }

  /**
   * Whether one more create of the batch fits its budget, counting the creates sent and those
   * being prepared (`preparing`: job ids picked but still `queued` on disk). When not, the batch
   * is held with why.
   */
  allows(batchId: string, preparing: Iterable<string>): boolean {
    const b = this.store.budgetOf(batchId);
    if (!b || (b.credits === null && b.jobs === null)) return true;
    const sent = this.store.sentCount(batchId, [...preparing]);
    let held: string | null = null;
    if (b.jobs !== null && sent + 1 > b.jobs) held = BUDGET_HELD.jobs(b.jobs);
    else if (b.credits !== null) {
      // A batch whose cost was unknown cannot be weighed in credits: it is held at once (setBudget refuses it).
      const each = b.estimate !== null && b.total > 0 ? b.estimate / b.total : Infinity;
      if ((sent + 1) * each > b.credits + 1e-9)
        held = BUDGET_HELD.credits(b.credits, sent * (each === Infinity ? 0 : each));
    }
    if (held !== b.budgetHold) this.store.setBudgetHold(batchId, held);
    return held === null;
  }

  /** Sets or removes (null) a batch's budget; a hold it caused is lifted, and the submitter weighs it again. */
  set(batchId: string, budget: BatchBudget | null, estimateKnown: boolean): void {
    if (budget?.credits !== undefined && !estimateKnown)
      throw new DeskError(
        'invalid',
        "a budget in credits needs the batch's cost, and it is unknown; set a budget in jobs instead",
        [{ field: 'budget.credits', reason: 'the cost of this batch is unknown' }],
      );
    this.store.setBudget(batchId, budget?.credits ?? null, budget?.jobs ?? null);
  }
}
