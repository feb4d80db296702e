import { z } from 'zod';
import { findTool } from '../catalogue/index.ts';
import { presetNameProblem } from '../presets.ts';

/**
 * What is handed to the desktop app from outside its window: files and folders on its command line
 * (a first start, a second start, `mediadesk open`), macOS `open-file`, and `mediadesk://` links.
 * Main parses them (electron/core/handoff.ts) and tells the window with `studio.handOff`; nothing
 * starts until the person presses Start.
 */

/** The link scheme the installer registers (app.setAsDefaultProtocolClient). */
export const LINK_SCHEME = 'mediadesk';
/** Longest link taken at all, and longest path in one: beyond that it is refused, not cut. */
export const LINK_MAX = 8192;
export const PATH_MAX = 4096;

/** A batch's or an audit event's id: letters, digits and . _ : - only, at most 128. */
export const handOffIdSchema = z
  .string()
  .max(128, 'is longer than an id (128 characters)')
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, 'is not an id (letters, digits and . _ : - only)');

/** A tool the Studio offers (an image or prompt tool of the catalogue). */
export const handOffToolSchema = z
  .string()
  .max(64, 'is longer than a tool id')
  .refine((id) => /^[a-z0-9][a-z0-9-]*$/.test(id) && findTool(id) !== undefined, {
    error: 'is not a tool of the catalogue',
  })
  .refine((id) => ['image', 'prompt'].includes(findTool(id)?.group ?? ''), { error: 'is not a Studio tool' });

/** A path from a link: absolute, no `..` step, no control characters; whether it exists is checked on disk. */
export const linkPathSchema = z
  .string()
  .max(PATH_MAX, `is longer than ${PATH_MAX} characters`)
  .refine((p) => !/[\u0000-\u001f\u007f]/.test(p), { error: 'holds control characters' })
  .refine((p) => /^([A-Za-z]:[\\/]|[\\/])/.test(p), { error: 'is not an absolute path' })
  .refine((p) => !p.split(/[\\/]/).includes('..'), { error: 'steps up with ".."' });

const presetNameSchema = z.string().superRefine((name, ctx) => {
  const why = presetNameProblem(name);
  if (why) ctx.addIssue({ code: 'custom', message: why });
});

/** Each link's parameters, by its host; an unknown parameter is refused (strict). */
export const LINK_PARAMS = {
  studio: z
    .object({
      tool: handOffToolSchema.optional(),
      folder: linkPathSchema.optional(),
      preset: presetNameSchema.optional(),
    })
    .strict(),
  queue: z.object({ batch: handOffIdSchema }).strict(),
  audit: z.object({ event: handOffIdSchema }).strict(),
};
export type LinkHost = keyof typeof LINK_PARAMS;

/** Something handed over that is not taken, and why (missing, not a file or folder, a kind no tool takes). */
export const handOffRefusedSchema = z.object({ path: z.string(), reason: z.string() });

export const handOffSchema = z.discriminatedUnion('screen', [
  z.object({
    screen: z.literal('studio'),
    /** The tool named (`--tool`, `tool=`), or null: the Studio keeps the tool last used. */
    tool: handOffToolSchema.nullable(),
    preset: presetNameSchema.nullable(),
    inputs: z.array(z.object({ path: z.string(), kind: z.enum(['file', 'folder']) })),
    refused: z.array(handOffRefusedSchema),
  }),
  z.object({ screen: z.literal('queue'), batchId: handOffIdSchema }),
  z.object({ screen: z.literal('audit'), eventId: handOffIdSchema }),
]);
export type HandOff = z.infer<typeof handOffSchema>;
export type StudioHandOff = Extract<HandOff, { screen: 'studio' }>;

export const handOffEvents = {
  /** Desktop only: files, folders or a link handed to the app; the window shows them, nothing starts. */
  'studio.handOff': handOffSchema,
};
