import type { HandlerMap } from '../../shared/contract/define.ts';
import { backendLabel, type foundationCommands } from '../../shared/contract/foundation.ts';
import type { Backend } from './backend.ts';
import { testConnection } from './connection.ts';
import type { MediaGate } from './media-gate.ts';
import { openWithOs } from './open-file.ts';
import { keyFingerprint, type SecretStore } from './secrets.ts';
import type { SettingsService } from './settings.ts';

export interface FoundationDeps {
  version: string;
  host: 'electron' | 'web' | 'cli';
  home: string;
  env: NodeJS.ProcessEnv;
  settings: SettingsService;
  /** The output folder in force (Settings' own, else the default). */
  outputDir: () => string;
  secrets: SecretStore;
  backend: Backend;
  /** Emits backend.changed after a key is stored or removed. */
  announceBackend: () => Promise<void>;
  pace?: () => Promise<void>;
  media: MediaGate;
  /** A file, then a folder, the OS may open for the renderer; each throws why not. */
  openable: (path: string) => string;
  openableFolder: (path: string) => string;
}

/** The foundation area's commands the core serves; `files.choose` is the desktop app's own (HOST_ONLY_COMMANDS). */
export function foundationHandlers(d: FoundationDeps): Omit<HandlerMap<typeof foundationCommands>, 'files.choose'> {
  return {
    'app.info': async () => ({
      version: d.version,
      host: d.host,
      platform: process.platform,
      dataHome: d.home,
      outputDir: d.outputDir(),
      backend: await d.backend.status(),
    }),
    'settings.get': () => d.settings.get(),
    'settings.set': (patch) => d.settings.set(patch),
    'settings.file': () => d.settings.fileState(),
    'key.status': async () => {
      const key = await d.secrets.get();
      return {
        set: key !== null,
        keychain: d.secrets.kind,
        fingerprint: key === null ? null : keyFingerprint(key),
        keychainProblem: d.secrets.problem,
      };
    },
    'key.set': async ({ key }) => {
      await d.secrets.set(key);
      await d.announceBackend();
      return { ok: true as const };
    },
    'key.clear': async () => {
      await d.secrets.clear();
      await d.announceBackend();
      return { ok: true as const };
    },
    'connection.test': () =>
      testConnection({
        target: () => d.backend.target(),
        pace: d.pace,
        source: () => d.backend.keySource(),
        label: async () => backendLabel(await d.backend.identity()),
        slugs: () => d.backend.slugs(),
        settings: () => d.settings.get(),
        env: d.env,
      }),
    'media.thumbnail': async ({ path, size }) => ({ path: await d.media.thumbnail(path, size) }),
    'shell.open': async ({ path }) => {
      await openWithOs(d.openable(path));
      return { ok: true as const };
    },
    'shell.reveal': async ({ path }) => {
      await openWithOs(d.openable(path), 'reveal');
      return { ok: true as const };
    },
    'shell.openFolder': async ({ path }) => {
      await openWithOs(d.openableFolder(path), 'folder');
      return { ok: true as const };
    },
  };
}
