import { z } from 'zod';
import { command, ok } from './define.ts';
import { PRESET_TEXT_MAX_CHARS } from '../socket-limit.ts';

export const presetSchema = z.object({
  name: z.string(),
  tool: z.string(),
  /** The tool's settings, without its input (the image or images a run is given). */
  params: z.record(z.string(), z.unknown()),
  savedAt: z.number(),
});
export type Preset = z.infer<typeof presetSchema>;

/** One preset an import left out, by its name (or its place in the file) and why. */
export const refusedPresetSchema = z.object({ name: z.string(), reason: z.string() });

export const presetsCommands = {
  'presets.list': command(
    z.object({ tool: z.string().min(1).optional() }).strict(),
    z.object({ presets: z.array(presetSchema) }),
    'The saved presets (of one tool when given), by name.',
  ),
  'presets.save': command(
    z
      .object({
        name: z.string(),
        tool: z.string().min(1),
        params: z.record(z.string(), z.unknown()),
        /** Replace a preset of that name; without it a taken name is refused. */
        replace: z.boolean().default(false),
      })
      .strict(),
    presetSchema,
    "Save a tool's settings under a name, checked as a run would check them.",
  ),
  'presets.remove': command(z.object({ name: z.string().min(1) }).strict(), ok, 'Forget a saved preset.'),
  'presets.export': command(
    z.object({ names: z.array(z.string()).optional() }).strict(),
    z.object({ path: z.string(), count: z.number().int() }),
    "Write the presets (all, or those named) to a JSON file in the app's folder for saved files (SAVED_FILES_RULE).",
  ),
  'presets.import': command(
    // The file's text, never its path: the page reads the file the person chose, the CLI its argument. `name`: its name, for messages.
    z.object({ text: z.string().max(PRESET_TEXT_MAX_CHARS), name: z.string().min(1).max(255).optional() }).strict(),
    z.object({ added: z.array(presetSchema), refused: z.array(refusedPresetSchema) }),
    'Add the presets of an exported JSON file: each is checked against its tool; a bad one is refused by name, the rest are kept.',
  ),
};
