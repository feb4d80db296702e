import { batchBudgetSchema, type BatchBudget } from '../../../shared/contract/jobs.ts';
import { UsageError } from './command.ts';

/** --budget-credits / --budget-jobs (or jobs budget's --credits / --jobs) as a batch budget, with the app's messages. */
export function budgetOf(credits: string | undefined, jobs: string | undefined): BatchBudget | undefined {
  if (credits === undefined && jobs === undefined) return undefined;
  const num = (v: string | undefined) => {
    if (v === undefined) return undefined;
    return v.trim() === '' ? NaN : Number(v);
  };
  const parsed = batchBudgetSchema.safeParse({ credits: num(credits), jobs: num(jobs) });
  if (!parsed.success)
    throw new UsageError(
      parsed.error.issues.map((i) => `${i.message}, got "${i.path[0] === 'credits' ? credits : jobs}"`).join('; '),
    );
  return parsed.data;
}

/** A budget in words: "500 credits", "20 jobs", "500 credits or 20 jobs". */
export const budgetWords = (b: { credits?: number | null; jobs?: number | null }) =>
  [b.credits != null && `${b.credits} credits`, b.jobs != null && `${b.jobs} jobs`].filter(Boolean).join(' or ');
