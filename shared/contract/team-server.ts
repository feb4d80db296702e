import { z } from 'zod';
import { command } from './define.ts';

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
      })
      .strict(),
    teamServerStatusSchema,
    "Set the team's budget of credits a day, checked by every machine before each create (null: none).",
  ),
};
