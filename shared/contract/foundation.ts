import { z } from 'zod';
import { settingsPatchSchema, settingsSchema } from '../settings.ts';
import { command, empty, ok } from './define.ts';

export * from './backend-identity.ts';

export const backendStatusSchema = z.object({
  /** What is actually in use: the Sandbox is used whenever live is chosen but no key is set. */
  effective: z.enum(['sandbox', 'live']),
  chosen: z.enum(['sandbox', 'live']),
  baseUrl: z.string(),
  keySet: z.boolean(),
  keychain: z.enum(['os', 'memory']),
  reason: z.string(),
  /**
   * `sandbox`, or `live <base URL> key <fingerprint>`: what work sent to a server (batches, app
   * runs) is tagged with. The key is part of it: another key is another account, billed apart, and
   * its task ids may mean nothing to this one.
   */
  identity: z.string(),
});

/** A value in settings.json that this build did not use. */
export const ignoredSettingSchema = z.object({
  name: z.string(),
  /** The stored value as JSON, shortened. */
  stored: z.string(),
  reason: z.string(),
  /** A setting of this build (its default is in use); otherwise unknown here (a newer build's?) and left in the file. */
  known: z.boolean(),
});
export type IgnoredSetting = z.infer<typeof ignoredSettingSchema>;

export const appInfoSchema = z.object({
  version: z.string(),
  host: z.enum(['electron', 'web', 'cli']),
  platform: z.string(),
  dataHome: z.string(),
  /** Where results go when a screen names no folder: Settings' output folder, else ~/MediaDesk. */
  outputDir: z.string(),
  backend: backendStatusSchema,
});

/**
 * One finding of `connection.test`: what was checked, whether it holds, what was seen, and what to
 * do when it does not (a setting or variable by name, or "try again later").
 */
export const connectionCheckSchema = z.object({
  name: z.string(),
  ok: z.boolean(),
  detail: z.string(),
  fix: z.string().optional(),
});
export type ConnectionCheck = z.infer<typeof connectionCheckSchema>;

export const connectionTestSchema = z.object({
  /** backendLabel of the backend tested: `the built-in Sandbox`, `the live service at URL (API key 3fa2c9d1)`. */
  backend: z.string(),
  baseUrl: z.string(),
  checks: z.array(connectionCheckSchema),
});
export type ConnectionTest = z.infer<typeof connectionTestSchema>;

export const foundationCommands = {
  'app.info': command(empty, appInfoSchema, 'Version, host, data folder and the backend in use.'),
  'settings.get': command(empty, settingsSchema, 'All settings with defaults.'),
  'settings.set': command(settingsPatchSchema, settingsSchema, 'Change some settings; answers all of them.'),
  'settings.file': command(
    empty,
    z.object({
      path: z.string(),
      /** Why settings.json could not be read just now; meanwhile the defaults are in use and the file is left as it is. */
      unreadable: z.string().nullable(),
      /** Where a save put the unreadable file it replaced (settings.json.bad-<time>), in this process. */
      keptAs: z.string().nullable(),
      /** Stored values this build did not use (out of range, of the wrong type, or from a newer build); the rest of the file is in use. */
      ignored: z.array(ignoredSettingSchema),
    }),
    'Where the settings file is, whether it could be read, and which stored values were not used.',
  ),
  'key.status': command(
    empty,
    z.object({
      set: z.boolean(),
      keychain: z.enum(['os', 'memory']),
      /** 8 hex digits of the key's SHA-256, to tell keys apart (as backend identities do); null when none is set. */
      fingerprint: z.string().nullable(),
      /** Why the OS keychain is not in use (keychain `memory`), in the person's words; null when it is. */
      keychainProblem: z.string().nullable(),
    }),
    'Whether an API key is stored, and its fingerprint; never the key.',
  ),
  'key.set': command(
    z.object({ key: z.string().trim().min(8, 'an API key is at least 8 characters').max(512) }).strict(),
    ok,
    'Store the API key in the OS keychain.',
  ),
  'key.clear': command(empty, ok, 'Remove the API key from the keychain.'),
  'connection.test': command(
    empty,
    connectionTestSchema,
    'Free calls only: whether the backend in use answers, takes the key, and serves every model path of the catalogue; each check says what to change when it fails.',
  ),
  'media.thumbnail': command(
    z.object({ path: z.string().min(1), size: z.number().int().min(32).max(1024).default(256) }).strict(),
    z.object({ path: z.string() }),
    'A cached thumbnail of a local image the app works with.',
  ),
  'shell.open': command(
    z.object({ path: z.string().min(1) }).strict(),
    ok,
    'Open a result file with the OS (desktop only).',
  ),
  'shell.reveal': command(
    z.object({ path: z.string().min(1) }).strict(),
    ok,
    'Show a file in its folder (desktop only).',
  ),
  'shell.openFolder': command(
    z.object({ path: z.string().min(1) }).strict(),
    ok,
    'Open a folder results go to in the file manager; one that does not exist yet in the output folder is made.',
  ),
  'files.choose': command(
    z.object({ kind: z.enum(['folder', 'files']), title: z.string().max(200).optional() }).strict(),
    z.object({ paths: z.array(z.string()) }),
    "Desktop only (served by Electron's main process; other hosts answer `unavailable`): the system's open dialog for a folder or files. What the person chose (nothing when they cancel) may then be named as inputs and hot folders.",
  ),
};

export const foundationEvents = {
  'settings.changed': settingsSchema,
  'backend.changed': backendStatusSchema,
};
