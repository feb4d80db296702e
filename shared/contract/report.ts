import { z } from 'zod';
import { formatDate } from '../dates.ts';
import { numberText } from '../number-text.ts';
import { command } from './define.ts';
import { jobStateSchema } from './jobs.ts';
import { teamSpendSchema, type TeamSpend } from './team-server.ts';

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

/** Rounded for people ("about 220"); the report keeps the exact figure. */
const credits = (n: number) => `${numberText(Math.round(n))} credit${Math.round(n) === 1 ? '' : 's'}`;

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
  if (actual === null) return `Charges unknown: ${actualBasis.replace(/^cost unknown: /, '')}.`;
  return actual === 0 ? `Nothing charged: ${actualBasis}.` : `Charged about ${credits(actual)}: ${actualBasis}.`;
}

/** A UTC charge day (`YYYY-MM-DD`) in the one date format. */
const dayWords = (day: string) => formatDate(`${day}T00:00:00Z`, { utc: true });
const listWords = (xs: string[]) => (xs.length < 2 ? xs.join('') : `${xs.slice(0, -1).join(', ')} and ${xs.at(-1)}`);

/**
 * The reconciliation with what the service reports, said plainly: it reports by category, so its
 * figure holds every use of the team on those days, this batch among them.
 */
export function serviceSentence(r: Pick<BatchReport, 'credits' | 'counts'>): string | null {
  const s = r.credits.service;
  if (!s) return null;
  const on = `on ${listWords(s.days.map(dayWords))}`;
  if (s.credits === null) return `The service's usage ${on} could not be read: ${s.why}.`;
  const cats = s.categories.map((c) => `${c.name} ${credits(c.credits)} in ${c.uses} use${c.uses === 1 ? '' : 's'}`);
  return (
    `The service reports usage by category, not by tool: ${on} your team used ${credits(s.credits)} in ${s.uses} use${s.uses === 1 ? '' : 's'}` +
    `${cats.length ? ` (${cats.join('; ')})` : ''}; this batch's ${r.counts.sent} charged create${r.counts.sent === 1 ? '' : 's'} are part of it.`
  );
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

/**
 * The studio's spend from the team server, said plainly: per machine and per project, or that it
 * could not be read and the report is this machine's alone.
 */
export function teamSpendSentence(t: TeamSpend): string {
  const days = listWords(t.days.map(dayWords));
  if (!t.reachable)
    return `Team spend (team server) on ${days} could not be read (${t.why}): this report counts this machine's batch alone.`;
  const each = (xs: TeamSpend['byMachine'], none: string) =>
    xs
      .map((x) => `${x.name || none} ${credits(x.credits)} (${x.creates} create${x.creates === 1 ? '' : 's'})`)
      .join(', ');
  const parts = [`Team spend (team server, every machine) on ${days}: ${credits(t.credits)} in ${t.creates} creates`];
  if (t.byMachine.length) parts.push(`by machine: ${each(t.byMachine, '(unknown)')}`);
  if (t.byProject.length) parts.push(`by project: ${each(t.byProject, '(no project)')}`);
  return `${parts.join('; ')}.`;
}
