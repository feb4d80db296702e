import { z } from 'zod';
import { command } from './define.ts';

/** A batch's project: the label its creates are counted under (a team budget per project, the team's spend). */
export const projectNameSchema = z
  .string({ error: 'a project name must be text' })
  .trim()
  .min(1, 'a project name must not be empty')
  .max(60, 'a project name is at most 60 characters')
  .refine((s) => !/[\u0000-\u001f\u007f]/.test(s), 'a project name must be one line of plain text');

/** A project's budget of credits a day on the team server (null: none) and what the team spent on it today. */
export const projectBudgetSchema = z.object({
  project: z.string(),
  creditsPerDay: z.number().nullable(),
  spentToday: z.number(),
});
export type ProjectBudget = z.infer<typeof projectBudgetSchema>;

/** Credits and creates spent by the team over some days, from the team server. */
export const teamSpendRowSchema = z.object({ name: z.string(), credits: z.number(), creates: z.number().int() });

/**
 * What the whole studio spent on some UTC days, from the team server: per machine (host and data
 * folder) and per project; `reachable` false (with why) when it could not be read.
 */
export const teamSpendSchema = z.object({
  days: z.array(z.string()),
  reachable: z.boolean(),
  why: z.string().nullable(),
  credits: z.number(),
  creates: z.number().int(),
  byMachine: z.array(teamSpendRowSchema),
  /** "" is the creates of batches without a project. */
  byProject: z.array(teamSpendRowSchema),
});
export type TeamSpend = z.infer<typeof teamSpendSchema>;

/** The team server (PostgreSQL) as Settings > Team and `mediadesk team status` show it. */
export const teamServerStatusSchema = z.object({
  configured: z.boolean(),
  /** Without the password (it lives in the keychain, or in MEDIADESK_TEAM_DB). */
  url: z.string().nullable(),
  from: z.enum(['env', 'settings']).nullable(),
  reachable: z.boolean(),
  /** Why it cannot be reached or used, in words; null when it can. */
  error: z.string().nullable(),
  tls: z.boolean().nullable(),
  schemaVersion: z.number().int().nullable(),
  /** Machines (processes) that paced through it in the last 10 minutes. */
  machines: z.number().int().nullable(),
  /** Why pacing is local now (the server was lost mid-work); null while shared. */
  fallback: z.string().nullable(),
  /** The team's budget of credits a day (null: none) and what the whole team has spent today. */
  budget: z.object({ creditsPerDay: z.number().nullable(), spentToday: z.number() }).nullable(),
  /** Who holds the audit sync lease (the one process calling the service's audit API) and until when; null: nobody. */
  auditLease: z
    .object({ holder: z.string(), until: z.string(), syncing: z.boolean(), syncedAt: z.string().nullable() })
    .nullable()
    .optional(),
  /** Events in the team's audit archive; null when unknown. */
  auditArchived: z.number().int().nullable().optional(),
  /** Projects with a budget or spend today; null when the server cannot be read. */
  projects: z.array(projectBudgetSchema).nullable(),
});
export type TeamServerStatus = z.infer<typeof teamServerStatusSchema>;

const none = z.object({}).strict();

export const teamServerCommands = {
  'teamServer.status': command(
    none,
    teamServerStatusSchema,
    'The team server: where, whether it answers, its schema, machines, budget.',
  ),
  'teamServer.test': command(
    none,
    teamServerStatusSchema,
    'Connect to the team server now (migrating its schema if needed) and say what answered.',
  ),
  'teamServer.connect': command(
    z.object({ url: z.string().min(1, 'must be a postgres:// URL') }).strict(),
    teamServerStatusSchema,
    'Set the team server: the URL is kept in Settings without its password, which goes to the keychain; then tested.',
  ),
  'teamServer.disconnect': command(
    none,
    teamServerStatusSchema,
    'Stop using a team server (its password is removed from the keychain).',
  ),
  'teamServer.setBudget': command(
    z
      .object({
        /** Credits a day for the whole team; null removes the budget. */
        creditsPerDay: z.number({ error: 'must be a number' }).min(0, 'must be 0 or more').nullable(),
        /** A project's budget instead of the whole team's. */
        project: projectNameSchema.optional(),
      })
      .strict(),
    teamServerStatusSchema,
    "Set the team's budget of credits a day, or a project's, checked by every machine before each create (null: none).",
  ),
  'teamServer.spend': command(
    z
      .object({
        /** UTC days, YYYY-MM-DD; today when none. */
        days: z
          .array(z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a day, YYYY-MM-DD'))
          .max(366)
          .default([]),
      })
      .strict(),
    teamSpendSchema,
    'What the whole studio spent on those days, per machine and per project, from the team server.',
  ),
};
