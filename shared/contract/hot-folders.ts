import { z } from 'zod';
import { command, ok } from './define.ts';

export * from './hot-folder-settle.ts';

/**
 * A file's place in a hot folder: `waiting` (seen, still growing or not yet queued), `queued` (a job
 * in the queue), `done`, `failed` (its job failed), `skipped` (not run: not an image the tool takes,
 * too large, its result already there; `reason` says which).
 */
export const HOT_FILE_STATES = ['waiting', 'queued', 'done', 'failed', 'skipped'] as const;
export type HotFileState = (typeof HOT_FILE_STATES)[number];

export const hotFolderSchema = z.object({
  id: z.string(),
  /** The watched folder (full path). Files placed directly in it are processed; sub-folders are not. */
  folder: z.string(),
  tool: z.string(),
  params: z.record(z.string(), z.unknown()),
  /** Where results are written; never inside `folder`. */
  outDir: z.string(),
  state: z.enum(['active', 'paused']),
  /** A file is taken once it has stopped changing for this many seconds (a copy in progress keeps changing it). */
  settleSeconds: z.number().int(),
  /**
   * Watched by several machines of a team: each file is claimed on the team server first, so one
   * machine alone takes it; without the team server its files wait (docs/TEAM.md).
   */
  shared: z.boolean(),
  /** Whether a MediaDesk process (the one running the queue) watches it now. */
  watched: z.boolean(),
  counts: z.record(z.enum(HOT_FILE_STATES), z.number().int()),
  lastFile: z
    .object({
      path: z.string(),
      state: z.enum(HOT_FILE_STATES),
      reason: z.string().nullable(),
      output: z.string().nullable(),
      at: z.number(),
    })
    .nullable(),
  /** Why files are not being queued now (the folder is gone, the output folder cannot be written); null when fine. */
  problem: z.string().nullable(),
  createdAt: z.number(),
});
export type HotFolderRecord = z.infer<typeof hotFolderSchema>;

const idRequest = z.object({ id: z.string().min(1) }).strict();

export const hotFoldersCommands = {
  'hotFolders.list': command(
    z.object({}).strict(),
    z.object({ folders: z.array(hotFolderSchema) }),
    'The hot folders, oldest first, with what each has done.',
  ),
  'hotFolders.add': command(
    z
      .object({
        folder: z.string().min(1),
        tool: z.string().min(1),
        params: z.record(z.string(), z.unknown()).default({}),
        /** Without it, the folder batches.start would choose for this folder. */
        outDir: z.string().min(1).optional(),
        /** Without it, SETTLE_SECONDS.default; checked by the core (SETTLE_SECONDS_RULE). */
        settleSeconds: z.number().optional(),
        /** Without it: shared when a team server is set. */
        shared: z.boolean().optional(),
      })
      .strict(),
    hotFolderSchema,
    'Watch a folder: each image that lands in it and stops growing is checked and queued with the tool and its settings, its result written to outDir. Files already in it are processed too.',
  ),
  'hotFolders.setSettle': command(
    z.object({ id: z.string().min(1), settleSeconds: z.number() }).strict(),
    hotFolderSchema,
    'Change how long a file in a hot folder must stop changing before it is taken (whole seconds, 1 to 60).',
  ),
  'hotFolders.setShared': command(
    z.object({ id: z.string().min(1), shared: z.boolean() }).strict(),
    hotFolderSchema,
    'Share a hot folder with the team (each file is claimed on the team server, so one machine takes it) or watch it alone.',
  ),
  'hotFolders.pause': command(
    idRequest,
    hotFolderSchema,
    'Stop watching a hot folder; files that arrive meanwhile wait.',
  ),
  'hotFolders.resume': command(
    idRequest,
    hotFolderSchema,
    'Watch a paused hot folder again, with the files that arrived while it was paused.',
  ),
  'hotFolders.remove': command(
    idRequest,
    ok,
    'Forget a hot folder; its files and results stay where they are, jobs already queued finish.',
  ),
};
