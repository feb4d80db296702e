import { z } from 'zod';
import { command } from './define.ts';
import { jobStateSchema } from './jobs.ts';

/** Whether a job's create was charged: accepted by the service (yes), never sent or refused (no), or cannot be told. */
export const CHARGED = ['yes', 'no', 'unknown'] as const;
export type Charged = (typeof CHARGED)[number];

export const reportJobSchema = z.object({
  id: z.string(),
  /** The local input file, null for prompt-only jobs (then `prompt`). */
  input: z.string().nullable(),
  prompt: z.string().nullable(),
  state: jobStateSchema,
  taskId: z.string().nullable(),
  charged: z.enum(CHARGED),
  /** The batch's estimate shared out per job; null when no estimate was made. */
  estimateCredits: z.number().nullable(),
  /** This job's charge by the team's usage of its day; 0 when not charged; null when unknown. */
  actualCredits: z.number().nullable(),
  outputs: z.array(z.string()),
  error: z.string().nullable(),
});
export type ReportJob = z.infer<typeof reportJobSchema>;

export const reportCountsSchema = z.object({
  total: z.number().int(),
  /** Creates the service accepted (the job has a task): each one charged. */
  sent: z.number().int(),
  /** Done, results written. */
  results: z.number().int(),
  /** The task was accepted (charged), then FAILED on the service. */
  chargedFailed: z.number().int(),
  /** The task completed (charged) but its results did not reach the folder: Retry downloads them. */
  notDownloaded: z.number().int(),
  /** Refused by the service at create, or stopped before sending: nothing charged. */
  notCharged: z.number().int(),
  /** Submitting, running or downloading. */
  running: z.number().int(),
  queued: z.number().int(),
  canceled: z.number().int(),
  needsAttention: z.number().int(),
});
export type ReportCounts = z.infer<typeof reportCountsSchema>;

export const batchReportSchema = z.object({
  batchId: z.string(),
  tool: z.string(),
  /** The tool's name as the screens show it. */
  toolLabel: z.string(),
  createdAt: z.number(),
  finished: z.boolean(),
  counts: reportCountsSchema,
  credits: z.object({
    /** Told before Start (null: no estimate was made, or the cost could not be known), with its basis in words. */
    estimate: z.number().nullable(),
    estimateBasis: z.string().nullable(),
    /** What the accepted creates were charged by the team's usage; null when it cannot be read. */
    actual: z.number().nullable(),
    /** "by your team's usage of this tool on 27 Nov", or why the charges are unknown. */
    actualBasis: z.string(),
  }),
  jobs: z.array(reportJobSchema),
});
export type BatchReport = z.infer<typeof batchReportSchema>;

/** Rounded for people ("about 220"); the report keeps the exact figure. */
const credits = (n: number) => `${Math.round(n).toLocaleString('en-US')} credit${Math.round(n) === 1 ? '' : 's'}`;

/** The report in one line, as the Queue and the CLI say it: "Sent 11 · 10 made results · 1 charged but failed · …". */
export function reportSummary(r: Pick<BatchReport, 'counts' | 'credits'>): string {
  const c = r.counts;
  const parts = [`Sent ${c.sent}`, `${c.results} made results`];
  if (c.chargedFailed) parts.push(`${c.chargedFailed} charged but failed`);
  if (c.notDownloaded) parts.push(`${c.notDownloaded} charged, results not downloaded`);
  if (c.notCharged) parts.push(`${c.notCharged} refused, not charged`);
  if (c.needsAttention) parts.push(`${c.needsAttention} need${c.needsAttention === 1 ? 's' : ''} you`);
  if (c.running) parts.push(`${c.running} still running`);
  if (c.queued) parts.push(`${c.queued} waiting`);
  if (c.canceled) parts.push(`${c.canceled} canceled`);
  parts.push(r.credits.estimate === null ? 'no estimate' : `estimate ${credits(r.credits.estimate)}`);
  const { actual } = r.credits;
  if (actual === null) parts.push('charges unknown');
  else parts.push(actual === 0 ? 'nothing charged' : `charged about ${credits(actual)}`);
  return parts.join(' · ');
}

/** The charges with their basis: "Charged about 220 credits, by your team's usage of this tool on 27 Nov." */
export function chargesSentence(r: Pick<BatchReport, 'credits'>): string {
  const { actual, actualBasis } = r.credits;
  if (actual === null) return `Charges unknown: ${actualBasis}.`;
  return actual === 0 ? `Nothing charged: ${actualBasis}.` : `Charged about ${credits(actual)}, ${actualBasis}.`;
}

/** The estimate with its basis, or that none was made. */
export function estimateSentence(r: Pick<BatchReport, 'credits'>): string {
  const { estimate, estimateBasis } = r.credits;
  if (estimate === null) return estimateBasis ? `No estimate: ${estimateBasis}.` : 'No estimate was made before Start.';
  return `Estimated ${credits(estimate)} before Start${estimateBasis ? `, ${estimateBasis}` : ''}.`;
}

const batchRef = z.string().min(1).max(100);

export const reportCommands = {
  'batches.report': command(
    z.object({ id: batchRef }).strict(),
    batchReportSchema,
    "A batch's report (by its id or the start of it): what was sent, what made results, what was charged but failed, the estimate beside the charges read from the team's usage.",
  ),
  'batches.exportReport': command(
    z.object({ id: batchRef }).strict(),
    z.object({ path: z.string(), rows: z.number().int() }),
    "Write a batch's report as CSV, one row per job, in the app's folder for saved files (SAVED_FILES_RULE).",
  ),
};
