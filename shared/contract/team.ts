import { z } from 'zod';
import { command, invalidParamSchema } from './define.ts';
import { jobStateSchema } from './jobs.ts';
import { isoDaySchema } from '../validation/dates.ts';
import { GRANULARITIES } from '../usage-buckets.ts';

export { runWaitingFor } from './job-states.ts';
export { GRANULARITIES, type Granularity } from '../usage-buckets.ts';

// ---- workflow apps ------------------------------------------------------------------------------

/** The four input types of the spec; anything else the server adds is shown as text. */
export const appInputSchema = z.object({
  id: z.string(),
  type: z.enum(['creation', 'text', 'number', 'select']),
  label: z.string(),
  required: z.boolean(),
  options: z.array(z.string()).optional(),
  min: z.number().optional(),
  max: z.number().optional(),
  maxLength: z.number().optional(),
  default: z.union([z.string(), z.number()]).optional(),
});
export type AppInput = z.infer<typeof appInputSchema>;

export const appSummarySchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  /** image, video or audio when the server says; null otherwise. */
  output: z.string().nullable(),
  cost: z.number().nullable(),
});
export type AppSummary = z.infer<typeof appSummarySchema>;

export const appDefinitionSchema = appSummarySchema.extend({ inputs: z.array(appInputSchema) });
export type AppDefinition = z.infer<typeof appDefinitionSchema>;

export const RUN_STATUSES = [
  'pending',
  'running',
  'completed',
  'completed_with_errors',
  'failed',
  'cancelled',
] as const;

export const appRunSchema = z.object({
  id: z.string(),
  appId: z.string(),
  appName: z.string(),
  /** The job state of the shared queue's state machine. */
  state: jobStateSchema,
  /** The server's lowercase run status (pending, running, completed, ...); null before the run exists. */
  runStatus: z.string().nullable(),
  runId: z.string().nullable(),
  cost: z.number().nullable(),
  inputs: z.record(z.string(), z.unknown()),
  outDir: z.string(),
  /** The server the run is for (`sandbox` or `live <base URL> key <fingerprint>`, as app.info's backend.identity); null for runs from before it was recorded. */
  backend: z.string().nullable(),
  outputs: z.array(z.string()),
  error: z.string().nullable(),
  invalid: z.array(invalidParamSchema),
  resultsExpireAt: z.number().nullable(),
  attempts: z.number().int(),
  createdAt: z.number(),
  updatedAt: z.number(),
  /**
   * What Retry would do (null: not retryable): fetch the results again or follow the submitted run
   * (nothing paid again), or send it anew, a new paid run whose cost apps.retry must be told.
   */
  retry: z.enum(['download', 'poll', 'submit']).nullable(),
});
export type AppRun = z.infer<typeof appRunSchema>;

/** A value per input id. A creation input takes a local file path, a URL or a creation id. */
export const appRunRequestSchema = z
  .object({
    appId: z.string().min(1),
    inputs: z.record(z.string(), z.union([z.string(), z.number()])),
    /** The cost the user saw and confirmed; the run is refused if the app's cost is now different. */
    confirmedCost: z.number().nullable(),
    outDir: z.string().min(1).optional(),
    /**
     * Follow a pending run of the same app, inputs and folder (on the same backend) instead of paying
     * for another (the CLI's re-run after Ctrl-C). `only`: follow such a run or answer not_found,
     * never queue one, so a caller can learn that nothing will be paid before it shows a cost.
     */
    resume: z.union([z.boolean(), z.literal('only')]).optional(),
  })
  .strict();

/** What apps.run checks before it queues anything, asked before the cost is: the app and its inputs. */
export const appCheckRequestSchema = z
  .object({ appId: z.string().min(1), inputs: appRunRequestSchema.shape.inputs })
  .strict();

// ---- analytics ----------------------------------------------------------------------------------

export const granularitySchema = z.enum(GRANULARITIES);

export const usageQuerySchema = z
  .object({
    granularity: granularitySchema,
    /** Inclusive UTC days, at most 365; without `from`, a range that suits the granularity (core/analytics DEFAULT_RANGES). */
    from: isoDaySchema.optional(),
    to: isoDaySchema.optional(),
    groupIds: z.array(z.number().int().min(1)).optional(),
    projectRefs: z.array(z.string().min(1)).optional(),
    /** The service's API key ids are strings; a number is sent as one. */
    apiKeyIds: z.array(z.union([z.string().min(1), z.number().int().min(1)])).optional(),
  })
  .strict();
export type UsageQuery = z.infer<typeof usageQuerySchema>;

export const usageBudgetSchema = z.object({
  day: z.string(),
  used: z.number().int(),
  limit: z.number().int(),
  remaining: z.number().int(),
});
export type UsageBudget = z.infer<typeof usageBudgetSchema>;

const amount = z.object({ uses: z.number(), credits: z.number() });
export const usagePointSchema = z.object({
  date: z.string(),
  uses: z.number(),
  credits: z.number(),
  byTool: z.record(z.string(), amount),
  /** Keyed by user id (as a string); email and group name (`group_name`) when the server gave them. */
  byUser: z.record(
    z.string(),
    amount.extend({ email: z.string().nullable(), group: z.string().nullable().optional() }),
  ),
});
export type UsagePoint = z.infer<typeof usagePointSchema>;

export const usageResultSchema = z.object({
  /** The request body actually sent (dates resolved), so views and exports say what they show. */
  request: z.object({
    granularity: granularitySchema,
    start_date: z.string(),
    end_date: z.string(),
    group_ids: z.array(z.number()).optional(),
    project_references: z.array(z.string()).optional(),
    api_key_ids: z.array(z.string()).optional(),
  }),
  points: z.array(usagePointSchema),
  /** True when answered from the local cache (no request spent). */
  cached: z.boolean(),
  fetchedAt: z.number(),
  budget: usageBudgetSchema,
});
export type UsageResult = z.infer<typeof usageResultSchema>;

export const breakdownRowSchema = z.object({
  key: z.string(),
  label: z.string(),
  uses: z.number(),
  credits: z.number(),
});
export type BreakdownRow = z.infer<typeof breakdownRowSchema>;

export const memberSchema = z.object({
  /** The service's directory names members by e-mail only: null there (the Sandbox's audit ids aside). */
  id: z.number().nullable(),
  name: z.string(),
  email: z.string(),
  role: z.string(),
  status: z.string(),
  groupIds: z.array(z.number()),
});
export const apiKeySchema = z.object({ id: z.string(), name: z.string(), status: z.string() });
export const groupSchema = z.object({ id: z.number(), name: z.string(), memberCount: z.number() });
export const projectSchema = z.object({ reference: z.string(), name: z.string() });
export const directorySchema = z.object({
  members: z.array(memberSchema),
  apiKeys: z.array(apiKeySchema),
  groups: z.array(groupSchema),
  projects: z.array(projectSchema),
});
export type Directory = z.infer<typeof directorySchema>;

export const EXPORTABLE = ['usage', 'members', 'apiKeys', 'groups', 'projects'] as const;

// ---- creations ----------------------------------------------------------------------------------

export const creationSchema = z.object({
  id: z.string(),
  name: z.string(),
  createdAt: z.string().nullable(),
  toolName: z.string().nullable(),
  /** image, video, audio or text (from the item or guessed from its URL). */
  type: z.string(),
  url: z.string().nullable(),
  text: z.string().nullable(),
  /** A copy in the data folder for desk.mediaUrl(); images only, null when it could not be fetched. */
  thumbPath: z.string().nullable(),
});
export type Creation = z.infer<typeof creationSchema>;

export const creationsPageSchema = z.object({
  items: z.array(creationSchema),
  page: z.number().int(),
  perPage: z.number().int(),
  lastPage: z.number().int(),
  total: z.number().int().nullable(),
});
export type CreationsPage = z.infer<typeof creationsPageSchema>;

// ---- commands and events ------------------------------------------------------------------------

const none = z.object({}).strict();
const idRequest = z.object({ id: z.string().min(1) }).strict();
/** confirmedCost: the app's cost the user accepted, needed when the retry sends the run anew (AppRun.retry 'submit'). */
const appRetryRequestSchema = z
  .object({ id: z.string().min(1), confirmedCost: z.number().nullable().optional() })
  .strict();

export const teamCommands = {
  'apps.list': command(
    none,
    z.object({ apps: z.array(appSummarySchema) }),
    'Workflow apps available to the team (Enterprise only).',
  ),
  'apps.mine': command(
    none,
    z.object({
      flows: z.array(z.object({ id: z.string(), name: z.string(), draft: z.boolean() })),
    }),
    "The user's own flows (GET /v1/ai/me/flows), drafts (not published as apps) marked.",
  ),
  'apps.get': command(idRequest, appDefinitionSchema, 'An app definition: its inputs and its cost.'),
  'apps.check': command(
    appCheckRequestSchema,
    appDefinitionSchema,
    'Read an app definition now and check inputs against it (local files included) as apps.run does; nothing is queued or paid. Answers the definition: its cost now is the one to confirm.',
  ),
  'apps.run': command(
    appRunRequestSchema,
    appRunSchema.extend({ resumed: z.boolean() }),
    'Queue a run of an app (durable; never submitted twice).',
  ),
  'apps.runs': command(
    z.object({ limit: z.number().int().min(1).max(500).default(50) }).strict(),
    z.object({ runs: z.array(appRunSchema) }),
    'App runs, newest first.',
  ),
  'apps.cancel': command(
    idRequest,
    appRunSchema,
    'Stop waiting for a run (the API has no cancel; a submitted run may still be charged).',
  ),
  'apps.retry': command(
    appRetryRequestSchema,
    appRunSchema,
    'Retry a failed, canceled or needs-attention run (a paid run is never sent again; one sent anew needs its cost confirmed).',
  ),
  'usage.query': command(
    usageQuerySchema.extend({ refresh: z.boolean().default(false) }),
    usageResultSchema,
    'Team credit usage over time (cached; 100 requests a day).',
  ),
  'usage.breakdown': command(
    usageQuerySchema.extend({ by: z.enum(['user', 'group', 'project', 'tool']) }),
    z.object({ rows: z.array(breakdownRowSchema), requestsSpent: z.number().int(), budget: usageBudgetSchema }),
    'Credit usage per user, group, project or tool.',
  ),
  'usage.budget': command(none, usageBudgetSchema, 'Credit-usage requests left today.'),
  'team.directory': command(none, directorySchema, 'Team members, API keys, groups and projects.'),
  'team.export': command(
    z.object({ what: z.enum(EXPORTABLE), usage: usageQuerySchema.optional() }).strict(),
    z.object({ path: z.string(), rows: z.number().int() }),
    "Write a listing or the credit usage as CSV, in the app's folder for saved files (SAVED_FILES_RULE).",
  ),
  'creations.list': command(
    z
      .object({
        page: z.number().int().min(1).default(1),
        perPage: z.number().int().min(1).max(100).default(24),
        tool: z.string().min(1).optional(),
      })
      .strict(),
    creationsPageSchema,
    'Recent creations, newest first.',
  ),
  'creations.download': command(
    z.object({ id: z.string().min(1) }).strict(),
    z.object({ path: z.string() }),
    "Download a creation into the app's folder for saved files (SAVED_FILES_RULE).",
  ),
};

export const teamEvents = {
  'apps.changed': z.object({ runs: z.array(appRunSchema) }),
};
