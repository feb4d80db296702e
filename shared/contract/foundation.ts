import { z } from 'zod';
import { settingsPatchSchema, settingsSchema } from '../settings.ts';
import { command, empty, ok } from './define.ts';

export const backendStatusSchema = z.object({
  /** What is actually in use: the Sandbox is used whenever live is chosen but no key is set. */
  effective: z.enum(['sandbox', 'live']),
  chosen: z.enum(['sandbox', 'live']),
  baseUrl: z.string(),
  keySet: z.boolean(),
  keychain: z.enum(['os', 'memory']),
  reason: z.string(),
  /** `sandbox` or `live <base URL>`: what records sent to a server (app runs) are tagged with. */
  identity: z.string(),
});

/** A backend identity in words: `the built-in Sandbox` or `the live service at URL`. */
export const backendLabel = (identity: string) => (identity === 'sandbox' ? 'the built-in Sandbox' : `the live service at ${identity.replace(/^live /, '')}`);

/**
 * Why queued or running work (a batch, an app run) does not move: it is driven only on the backend
 * it was queued for, since its task or run ids mean nothing elsewhere and it must not be paid for
 * on another server. Null when `backend` is the one in use (or was not recorded).
 */
/** States in which queued work is driven by its backend (submitted or polled), so can wait for it. */
export const WAITING_STATES = ['queued', 'submitting', 'running'] as const;

export function waitingFor(backend: string | null, here: string): string | null {
  if (!backend || backend === here) return null;
  return `waiting for ${backendLabel(backend)}, where it was queued: switch back to it to continue, or cancel it`;
}

export const appInfoSchema = z.object({
  version: z.string(),
  host: z.enum(['electron', 'web', 'cli']),
  platform: z.string(),
  dataHome: z.string(),
  /** Where results go when a screen names no folder: Settings' output folder, else ~/MediaDesk. */
  outputDir: z.string(),
  backend: backendStatusSchema,
});

export const foundationCommands = {
  'app.info': command(empty, appInfoSchema, 'Version, host, data folder and the backend in use.'),
  'settings.get': command(empty, settingsSchema, 'All settings with defaults.'),
  'settings.set': command(settingsPatchSchema, settingsSchema, 'Change some settings; answers all of them.'),
  'key.status': command(empty, z.object({ set: z.boolean(), keychain: z.enum(['os', 'memory']) }), 'Whether an API key is stored; never the key.'),
  'key.set': command(z.object({ key: z.string().trim().min(8, 'an API key is at least 8 characters').max(512) }).strict(), ok, 'Store the API key in the OS keychain.'),
  'key.clear': command(empty, ok, 'Remove the API key from the keychain.'),
  'media.thumbnail': command(z.object({ path: z.string().min(1), size: z.number().int().min(32).max(1024).default(256) }).strict(), z.object({ path: z.string() }), 'A cached thumbnail of a local image the app works with.'),
  'shell.open': command(z.object({ path: z.string().min(1) }).strict(), ok, 'Open a result file with the OS (desktop only).'),
  'shell.reveal': command(z.object({ path: z.string().min(1) }).strict(), ok, 'Show a file in its folder (desktop only).'),
};

export const foundationEvents = {
  'settings.changed': settingsSchema,
  'backend.changed': backendStatusSchema,
};
