import { z } from 'zod';
import { command } from './define.ts';
import { jobStateSchema } from './jobs.ts';
import { teamSpendSchema } from './team-server.ts';

export * from './report-words.ts';

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
  /** Creates of this job the service accepted, so charged: its attempts before a Retry and its task. */
  chargedCreates: z.number().int(),
  /** The batch's estimate shared out per job; null when no estimate was made. */
  estimateCredits: z.number().nullable(),
  /** This job's charges (every charged create) by the price table; 0 when not charged; null when unknown. */
  actualCredits: z.number().nullable(),
  outputs: z.array(z.string()),
  error: z.string().nullable(),
});
export type ReportJob = z.infer<typeof reportJobSchema>;

export const reportCountsSchema = z.object({
  total: z.number().int(),
  /** Creates the service accepted (a task, or an attempt a Retry replaced): each one charged. */
  sent: z.number().int(),
  /** Done, results written. */
  results: z.number().int(),
  /** The task was accepted (charged), then FAILED on the service; an attempt a Retry replaced counts here too. */
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

/** The service's credit usage for the days the batch was charged: category totals, as it reports them. */
export const serviceUsageSchema = z.object({
  days: z.array(z.string()),
  /** Totals over every category on those days (the whole team's use), null when it could not be read. */
  uses: z.number().nullable(),
  credits: z.number().nullable(),
  categories: z.array(z.object({ name: z.string(), uses: z.number(), credits: z.number() })),
  /** Why it could not be read, or null. */
  why: z.string().nullable(),
});
export type ServiceUsage = z.infer<typeof serviceUsageSchema>;

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
    /** What the charged creates cost by the price table; null when the tool's price is unknown. */
    actual: z.number().nullable(),
    /** "29 charged creates at 15 credits each, by …", or why the charges are unknown. */
    actualBasis: z.string(),
    /** What the service reports for those days, to reconcile with (null: nothing was charged). */
    service: serviceUsageSchema.nullable(),
  }),
  jobs: z.array(reportJobSchema),
  /** With a team server: what the whole studio spent on the batch's days, per machine and per project. */
  team: teamSpendSchema.optional(),
});
export type BatchReport = z.infer<typeof batchReportSchema>;

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
