import { z } from 'zod';
import { command, empty } from './define.ts';

export const supportCommands = {
  'support.report': command(
    empty,
    z.object({
      path: z.string(),
      /** The zip's entries: README.txt, versions.json, settings.json, logs/…, crash/… */
      entries: z.array(z.string()),
      /** Whether the last crash's dump is in it. */
      crashDump: z.boolean(),
    }),
    "Build a problem report (redacted logs, versions, settings, the last crash dump; never the key or a file's content) as a zip in the app's folder for saved files (SAVED_FILES_RULE). Nothing is sent.",
  ),
};
