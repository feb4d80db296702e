import { z } from 'zod';
import { findTool } from '../catalogue/index.ts';
import { PLAN_TIERS } from '../service-limits.ts';
import { command, empty } from './define.ts';

const planSchema = z.enum(PLAN_TIERS, { error: `must be one of ${PLAN_TIERS.join(', ')}` });

/** What a daily cap may be set for: a tool of the catalogue, `*` (every tool not named) or a workflow app (`app:<id>`). */
export const capToolSchema = z
  .string()
  .min(1)
  .refine(
    (t) => t === '*' || (t.startsWith('app:') && t.length > 4) || findTool(t) !== undefined,
    'must be a tool id (mediadesk run without one lists them), * for every other tool, or app:<app id>',
  );

export const limitsStatusSchema = z.object({
  /** The plan whose daily caps apply, and whether the Sandbox's demo key decides it or Settings. */
  plan: planSchema,
  planFrom: z.enum(['sandbox', 'settings']),
  /**
   * The caps that apply: each tool with one (`*`: every other tool), and where it comes from: the
   * service's published table, the user's own, or learned from the service's 429 (until its reset).
   * A tool not listed has no cap.
   */
  caps: z.array(
    z.object({
      tool: z.string(),
      title: z.string(),
      cap: z.number().int(),
      own: z.boolean(),
      from: z.enum(['published', 'own', 'learned']),
      /** A learned cap holds until this time (ms since the epoch); null otherwise. */
      until: z.number().nullable(),
    }),
  ),
  /** Where the published caps were read, and when. */
  published: z.object({ source: z.string(), checked: z.string() }),
  /** Tools used today or with jobs waiting: the cap, today's creates, what is left, when it resets. */
  today: z.array(
    z.object({
      tool: z.string(),
      title: z.string(),
      cap: z.number().int().nullable(),
      capFrom: z.enum(['published', 'own', 'learned']).nullable(),
      used: z.number().int(),
      left: z.number().int().nullable(),
      resetsAt: z.number(),
      waiting: z.number().int(),
    }),
  ),
});
export type LimitsStatus = z.infer<typeof limitsStatusSchema>;

export const limitsCommands = {
  'limits.status': command(
    empty,
    limitsStatusSchema,
    "The plan whose daily caps apply, its caps table (the defaults with the user's own) and today's use per tool, for the backend and key in use.",
  ),
  'limits.setCap': command(
    z
      .object({
        tool: capToolSchema,
        /** Jobs per day, 0 or more; null goes back to the plan's default. */
        cap: z
          .number({ error: 'must be a number' })
          .int('must be a whole number')
          .min(0, 'must be 0 or more')
          .nullable(),
        /** The plan tier whose table changes; the plan in use when absent. */
        plan: planSchema.optional(),
      })
      .strict(),
    limitsStatusSchema,
    "Sets the daily cap of a tool on a plan (the account's own), or null for the default; held batches go on by themselves when it is raised.",
  ),
};
