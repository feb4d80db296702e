import { DeskError } from '../../../shared/contract/define.ts';
import type { BatchBudget } from '../../../shared/contract/jobs.ts';
import { BUDGET_HELD } from '../../../shared/cost-words.ts';
import type { Db } from '../db/open.ts';

/** States of a job whose create was sent (or may have been): what a budget counts as spent. */
const SENT = "task_id IS NOT NULL OR state IN ('submitting', 'running', 'downloading', 'done', 'needs_attention')";

/**
 * Budgets per batch (batches.budget_credits, budget_jobs): the submitter asks before each create,
 * and a create that would go past the budget is not sent; the batch is held (held_by) until the
 * user raises or removes it.
 */
export class BatchBudgets {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      held: db
        .prepare(
          'SELECT id FROM batches WHERE held_by IS NOT NULL AND (budget_credits IS NOT NULL OR budget_jobs IS NOT NULL)',
        )
        .pluck(),
      // The job count is read only for a batch with a budget: a COUNT per create slowed every batch.
      row: db.prepare(
        `SELECT budget_credits AS credits, budget_jobs AS jobs, estimate_credits AS estimate, held_by AS heldBy,
                CASE WHEN budget_credits IS NULL AND budget_jobs IS NULL THEN 0
                     ELSE (SELECT COUNT(*) FROM jobs WHERE batch_id = batches.id) END AS total
           FROM batches WHERE id = ?`,
      ),
      sent: db
        .prepare(`SELECT COUNT(*) FROM jobs WHERE batch_id = ? AND (${SENT} OR id IN (SELECT value FROM json_each(?)))`)
        .pluck(),
      hold: db.prepare('UPDATE batches SET held_by = ? WHERE id = ?'),
      // A job's updated_at moved, so jobs.changed carries the batch and the Queue hears of the hold.
      touch: db.prepare(
        "UPDATE jobs SET updated_at = ? WHERE id = (SELECT id FROM jobs WHERE batch_id = ? AND state = 'queued' ORDER BY seq LIMIT 1)",
      ),
      set: db.prepare('UPDATE batches SET budget_credits = ?, budget_jobs = ?, held_by = NULL WHERE id = ?'),
    };
  }

  /** Batches held by their budget: their queued jobs are left out of the submitter's picks. */
  heldIds(): string[] {
    return this.stmts.held.all() as string[];
  }

  /**
   * Whether one more create of the batch fits its budget, counting the creates sent and those
   * being prepared (`preparing`: job ids picked but still `queued` on disk). When not, the batch
   * is held with why.
   */
  allows(batchId: string, preparing: Iterable<string>): boolean {
    const b = this.stmts.row.get(batchId) as
      | { credits: number | null; jobs: number | null; estimate: number | null; heldBy: string | null; total: number }
      | undefined;
    if (!b || (b.credits === null && b.jobs === null)) return true;
    const sent = this.stmts.sent.get(batchId, JSON.stringify([...preparing])) as number;
    let held: string | null = null;
    if (b.jobs !== null && sent + 1 > b.jobs) held = BUDGET_HELD.jobs(b.jobs);
    else if (b.credits !== null) {
      // A batch whose cost was unknown cannot be weighed in credits: it is held at once (setBudget refuses it).
      const each = b.estimate !== null && b.total > 0 ? b.estimate / b.total : Infinity;
      if ((sent + 1) * each > b.credits + 1e-9)
        held = BUDGET_HELD.credits(b.credits, sent * (each === Infinity ? 0 : each));
    }
    if (held !== b.heldBy) {
      this.stmts.hold.run(held, batchId);
      this.stmts.touch.run(Date.now(), batchId);
    }
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
    this.stmts.set.run(budget?.credits ?? null, budget?.jobs ?? null, batchId);
    this.stmts.touch.run(Date.now(), batchId);
  }
}
