import { z } from 'zod';
import { command, invalidParamSchema } from './define.ts';
import { JOB_STATES } from './job-states.ts';
import { projectNameSchema } from './team-server.ts';

export * from './job-states.ts';
export const jobStateSchema = z.enum(JOB_STATES);

export const jobRecordSchema = z.object({
  id: z.string(),
  batchId: z.string(),
  tool: z.string(),
  state: jobStateSchema,
  /** Absolute path of the local input, null for prompt-only jobs. */
  input: z.string().nullable(),
  /** Input subfolder mirrored under outDir. */
  relDir: z.string(),
  outDir: z.string(),
  params: z.record(z.string(), z.unknown()),
  taskId: z.string().nullable(),
  attempts: z.number().int(),
  /** Clear text for people: the server's message, or why the job needs attention. */
  error: z.string().nullable(),
  invalid: z.array(invalidParamSchema),
  /** Files written so far (results renamed into place). */
  outputs: z.array(z.string()),
  /** Text results (image-to-prompt). */
  text: z.string().nullable(),
  resultsExpireAt: z.number().nullable(),
  createdAt: z.number(),
  updatedAt: z.number(),
});
export type JobRecord = z.infer<typeof jobRecordSchema>;

export const stateCountsSchema = z.record(jobStateSchema, z.number().int());

/**
 * What the studio spent today on the team server, and what is left of the team's budget and the
 * project's (null: no budget); reachable false (with why) when the server could not be read.
 */
export const teamTodaySchema = z.object({
  reachable: z.boolean(),
  why: z.string().nullable(),
  spentToday: z.number(),
  budget: z.number().nullable(),
  left: z.number().nullable(),
  project: z
    .object({ name: z.string(), budget: z.number().nullable(), spentToday: z.number(), left: z.number().nullable() })
    .nullable(),
});
export type TeamToday = z.infer<typeof teamTodaySchema>;

/**
 * What a batch (or an app run) will cost, told before Start: its paid creates, what they leave of
 * the tool's daily cap, and its credits when they can be known (learned from the team's own usage,
 * or an app's price), with the basis in words (costSentence in shared/cost-words.ts says it all).
 */
export const costEstimateSchema = z.object({
  /** What the jobs are of: a tool's title, or an app's name. */
  title: z.string(),
  /** Paid creates (jobs, or app runs) it will send. */
  creates: z.number().int().min(0),
  /** The tool's daily cap today for this key's plan; null for apps and tools without one. */
  cap: z
    .object({ limit: z.number().int(), used: z.number().int(), left: z.number().int(), resetsAt: z.number() })
    .nullable(),
  /** Credits of the whole batch; null when the cost cannot be known (basis says why). */
  credits: z.number().nullable(),
  creditsEach: z.number().nullable(),
  /** A learned price's evidence: the team's uses of the tool over these days; null for an app's own price. */
  learnedFrom: z
    .object({
      uses: z.number().int(),
      days: z.number().int(),
      /** For a tool priced by output area: the price was scaled from the usual factor to this one. */
      areaScale: z.object({ field: z.string(), from: z.number(), to: z.number() }).optional(),
    })
    .nullable(),
  /** Where the credits come from, or why they are unknown, in plain words. */
  basis: z.string(),
  /** With a team server: what the whole studio spent today and what is left of its budgets; absent without one. */
  team: teamTodaySchema.nullable().optional(),
});
export type CostEstimate = z.infer<typeof costEstimateSchema>;

/** A batch's optional spending cap: the submitter holds its next create rather than go past it. */
export const batchBudgetSchema = z
  .object({
    credits: z
      .number({ error: 'a budget in credits must be a number above 0' })
      .positive('a budget in credits must be a number above 0')
      .optional(),
    jobs: z
      .number({ error: 'a budget in jobs must be a whole number above 0' })
      .int('a budget in jobs must be a whole number above 0')
      .positive('a budget in jobs must be a whole number above 0')
      .optional(),
  })
  .strict();
export type BatchBudget = z.infer<typeof batchBudgetSchema>;

export const batchRecordSchema = z.object({
  id: z.string(),
  tool: z.string(),
  outDir: z.string(),
  params: z.record(z.string(), z.unknown()),
  /** The server its jobs go to (`sandbox` or `live <base URL> key <fingerprint>`, as app.info's backend.identity); null for batches from before it was recorded. */
  backend: z.string().nullable(),
  createdAt: z.number(),
  total: z.number().int(),
  counts: stateCountsSchema,
  /** Settled jobs over total, 0..1. */
  progress: z.number(),
  /** Nothing left to do without the user. */
  finished: z.boolean(),
  /** The estimate told at Start (credits null: cost unknown, basis says why); null for batches from before it. */
  estimate: z.object({ credits: z.number().nullable(), basis: z.string() }).nullable(),
  /** The user's cap on the batch; null when it has none. */
  budget: z.object({ credits: z.number().nullable(), jobs: z.number().int().nullable() }).nullable(),
  /** Why its queued jobs wait (its budget), in plain words; null when they do not. */
  budgetHold: z.string().nullable(),
  /** The project its creates count against (a team budget per project); null when none. */
  project: z.string().nullable(),
});
export type BatchRecord = z.infer<typeof batchRecordSchema>;

export const inputIssueSchema = z.object({ path: z.string(), reason: z.string() });

export const batchStartRequestSchema = z
  .object({
    tool: z.string().min(1),
    /** Files or folders; folders are walked recursively. Empty for prompt-only tools (one job). */
    inputs: z.array(z.string().min(1)).default([]),
    params: z.record(z.string(), z.unknown()).default({}),
    /** Used as it is; without it, RESULTS_RULE's folder (shared/results-folder.ts). */
    outDir: z.string().min(1).optional(),
    /** Pause the batch before a create would go past this many credits (by the estimate) or jobs. */
    budget: batchBudgetSchema.optional(),
    /** The project its creates count against: the team server's budget for it, the team's spend per project. */
    project: projectNameSchema.optional(),
  })
  .strict();

export const batchStartResultSchema = z.object({
  /** Null when no input needs a job: every one was skipped or rejected (listed below). */
  batch: batchRecordSchema.nullable(),
  /** Jobs this call created. */
  queued: z.number().int(),
  /** Jobs of earlier runs for the same inputs that are still in the queue (not submitted again). */
  resumed: z.array(z.string()),
  /** Inputs not run: their output already exists, or the same file was already listed under another name (a link). */
  skipped: z.array(inputIssueSchema),
  /** Inputs the tool would not accept, with the reason; nothing was paid for them. */
  rejected: z.array(inputIssueSchema),
  /** Queued inputs whose earlier result was made with other settings: the new one gets a free name beside it. */
  renamed: z.array(inputIssueSchema),
  /** Every job this run waits for (new and resumed). */
  jobIds: z.array(z.string()),
  /** Where the results go (the batch's folder, or the one it would have had). */
  outDir: z.string(),
});
export type BatchStartResult = z.infer<typeof batchStartResultSchema>;

/**
 * What a Start over these inputs would do, told before it: the same walk and checks as
 * batches.start, nothing queued. `checkId` names the asker's check: a newer one under the same id
 * stops the older (answered `conflict`), so a new selection is not kept waiting behind the last.
 */
export const batchCheckRequestSchema = z
  .object({
    tool: z.string().min(1),
    inputs: z.array(z.string().min(1)).min(1),
    /**
     * The parameters a Start would send (batches.start's params): when given, they are checked as
     * Start checks them, and refused the same way (`invalid`, each problem naming its field) before
     * any input is looked at.
     */
    params: z.record(z.string(), z.unknown()).optional(),
    /** Where results would go (batches.start's outDir); a folder that cannot be used leaves its skips out. */
    outDir: z.string().min(1).optional(),
    checkId: z.string().min(1).max(100).optional(),
  })
  .strict();

export const batchCheckResultSchema = z.object({
  /** Inputs a Start would queue as new jobs: what would be paid for. */
  ready: z.number().int(),
  /** Inputs with an unfinished job of an earlier run: followed, not paid again. */
  resumed: z.number().int(),
  skipped: z.array(inputIssueSchema),
  rejected: z.array(inputIssueSchema),
  /** Ready inputs whose earlier result was made with other settings: written under a free name, nothing overwritten. */
  renamed: z.array(inputIssueSchema),
  /** Where Start would put the results; null when no usable folder is known. */
  outDir: z.string().nullable(),
});
export type BatchCheckResult = z.infer<typeof batchCheckResultSchema>;

export const batchCheckProgressSchema = z.object({
  checkId: z.string(),
  checked: z.number().int(),
  total: z.number().int(),
});

const idRequest = z.object({ id: z.string().min(1) }).strict();

/** A tool whose queued jobs are held at its daily cap until it resets or is raised. */
export const capHoldSchema = z.object({
  tool: z.string(),
  /** The tool's name as the screens show it. */
  title: z.string(),
  /** The daily cap (jobs per day) and what is left of it today. */
  limit: z.number().int(),
  left: z.number().int(),
  /** When the day's count starts again (00:00 UTC), ms since the epoch. */
  resetsAt: z.number(),
  /** Queued jobs of the tool that wait for it. */
  waiting: z.number().int(),
});
export type CapHold = z.infer<typeof capHoldSchema>;

export const queueStatusSchema = z.object({
  paused: z.boolean(),
  /** Set while the queue waits out a server's Retry-After. */
  rateLimitedUntil: z.number().nullable(),
  /**
   * Why creates wait, in a few words ("the server's rate limit was reached"), from a create the
   * server did not take until one gets an answer, across the retries in between; null otherwise.
   */
  serviceWait: z.string().nullable(),
  /** Tools whose queued jobs wait for their daily cap (heldMessage says it); they go on by themselves. */
  capHolds: z.array(capHoldSchema),
  /** What the team server holds: it cannot be reached (pacing is this machine's share alone), or the team budget is spent; null otherwise. */
  teamNote: z.string().nullable().optional(),
  /** Whether this process runs the queue (another app or CLI may hold it). */
  running: z.boolean(),
  counts: stateCountsSchema,
});
export type QueueStatus = z.infer<typeof queueStatusSchema>;

export const jobsCommands = {
  'batches.start': command(
    batchStartRequestSchema,
    batchStartResultSchema,
    'Queue a tool over files and folders (checked before anything is paid).',
  ),
  'batches.check': command(
    batchCheckRequestSchema,
    batchCheckResultSchema,
    'What batches.start would queue, skip and reject for these inputs, checked the same way, before anything is paid; nothing is queued. Given params, refuses those Start would refuse (invalid). Progress comes as batches.checkProgress.',
  ),
  'apps.estimate': command(
    z
      .object({
        id: z.string().min(1),
        runs: z.number().int('must be a whole number').min(1, 'must be at least 1').max(1000).default(1),
      })
      .strict(),
    costEstimateSchema,
    "What runs of an app will cost before Run: its price times the runs, and what they leave of the app's daily cap.",
  ),
  'batches.estimate': command(
    z
      .object({
        tool: z.string().min(1),
        params: z.record(z.string(), z.unknown()).default({}),
        /** Paid creates the batch would send (batches.check's `ready`; 1 for a prompt-only tool). */
        creates: z.number().int().min(0),
        /** The batch's project: what is left of its team budget is told too. */
        project: projectNameSchema.optional(),
      })
      .strict(),
    costEstimateSchema,
    "What a batch of this tool would cost before Start: its paid creates, what they leave of today's cap, and its credits learned from the team's usage of the last 7 days (or why they are unknown).",
  ),
  'batches.setBudget': command(
    z.object({ id: z.string().min(1), budget: batchBudgetSchema.nullable() }).strict(),
    batchRecordSchema,
    "Change or remove (null) a batch's budget; a batch paused by its budget goes on by itself when the new one allows.",
  ),
  'batches.list': command(
    z
      .object({ limit: z.number().int().min(1).max(500).default(50), offset: z.number().int().min(0).default(0) })
      .strict(),
    z.array(batchRecordSchema),
    'Batches, newest first, with progress.',
  ),
  'batches.cancel': command(idRequest, batchRecordSchema, 'Cancel every unfinished job of a batch.'),
  'batches.retry': command(
    z
      .object({
        id: z.string().min(1),
        // A needs-attention task may already be paid for: callers leave it out unless the user chose it.
        states: z
          .array(z.enum(['failed', 'canceled', 'needs_attention']))
          .min(1)
          .optional(),
      })
      .strict(),
    batchRecordSchema,
    'Retry the failed, canceled or needs-attention jobs of a batch (all three unless `states` names some).',
  ),
  'jobs.list': command(
    z
      .object({
        batchId: z.string().optional(),
        state: jobStateSchema.optional(),
        limit: z.number().int().min(1).max(1000).default(100),
        offset: z.number().int().min(0).default(0),
      })
      .strict(),
    z.object({ jobs: z.array(jobRecordSchema), total: z.number().int() }),
    'Jobs in queue order.',
  ),
  'jobs.pause': command(
    z.object({}).strict(),
    queueStatusSchema,
    'Pause the whole queue (in-flight tasks keep being polled and downloaded).',
  ),
  'jobs.resume': command(z.object({}).strict(), queueStatusSchema, 'Resume the queue.'),
  'jobs.status': command(
    z.object({}).strict(),
    queueStatusSchema,
    'Whether the queue is paused or rate limited, and counts by state.',
  ),
  'jobs.cancel': command(idRequest, jobRecordSchema, 'Cancel one job.'),
  'jobs.retry': command(
    idRequest,
    jobRecordSchema,
    'Retry a failed, canceled or needs-attention job (never automatic for a possibly paid task).',
  ),
};

export const jobsChangedSchema = z.object({
  /** Batches whose progress changed since the last event. */
  batches: z.array(batchRecordSchema),
  /** Job rows that changed since the last event (bounded; the renderer refetches if truncated). */
  jobs: z.array(jobRecordSchema),
  truncated: z.boolean(),
  status: queueStatusSchema,
});
export type JobsChanged = z.infer<typeof jobsChangedSchema>;

export const jobsEvents = {
  'jobs.changed': jobsChangedSchema,
  /** Files of a batches.check inspected so far (throttled). */
  'batches.checkProgress': batchCheckProgressSchema,
};
