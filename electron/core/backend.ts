import type { ApiTarget } from './api/client.ts';
import { keyFingerprint, type SecretStore } from './secrets.ts';
import type { SettingsService } from './settings.ts';
import { effectiveSlugs } from '../../shared/settings.ts';
import { keyHeaderFor } from '../../shared/service-profile.ts';
import type { Slugs } from '../../shared/catalogue/index.ts';
import type { z } from 'zod';
import type { backendStatusSchema } from '../../shared/contract/foundation.ts';

export type BackendStatus = z.infer<typeof backendStatusSchema>;
export type KeySource = 'environment' | 'keychain' | 'sandbox';

export interface RunningSandboxLike {
  url: string;
  close(): Promise<void>;
}

export interface BackendOptions {
  settings: SettingsService;
  secrets: SecretStore;
  env?: NodeJS.ProcessEnv;
  /** Starts the built-in Sandbox; called lazily the first time the Sandbox backend is needed. */
  startSandbox: () => Promise<RunningSandboxLike>;
}

/**
 * Whether a result URL of the built-in Sandbox was served by another one than `mine` (this
 * process's, null when none runs): that Sandbox ended with its process, and the URL leads nowhere.
 */
export const fromAnotherSandbox = (url: string, mine: string | null): boolean =>
  mine === null || new URL(url).origin !== new URL(mine).origin;

/** `live <base URL> key <fingerprint>` for a live server, `sandbox` for the built-in Sandbox (see Backend.identity). */
const errorMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));
const identityOf = (live: ApiTarget | null) =>
  live === null ? 'sandbox' : `live ${live.baseUrl.replace(/\/+$/, '')} key ${keyFingerprint(live.apiKey)}`;

/**
 * Decides where requests go. In order: MEDIADESK_API_URL + MEDIADESK_API_KEY (scripts and CI);
 * the live service when chosen and a key is in the keychain; otherwise the in-process Sandbox,
 * so the app works out of the box with no key.
 */
export class Backend {
  private readonly opts: BackendOptions;
  private sandbox: Promise<RunningSandboxLike> | null = null;
  /** Why the last start of the built-in Sandbox failed, until one succeeds. */
  private startError: string | null = null;

  constructor(opts: BackendOptions) {
    this.opts = opts;
  }

  private get env() {
    return this.opts.env ?? process.env;
  }

  async status(): Promise<BackendStatus> {
    const w = await this.where();
    return { ...w, identity: await this.identity() };
  }

  private async where(): Promise<Omit<BackendStatus, 'identity'>> {
    const s = this.opts.settings.get();
    const keySet = (await this.opts.secrets.get()) !== null;
    const keychain = this.opts.secrets.kind;
    if (this.env.MEDIADESK_API_URL && this.env.MEDIADESK_API_KEY) {
      return {
        effective: 'live',
        chosen: s.backend,
        baseUrl: this.env.MEDIADESK_API_URL,
        keySet,
        keychain,
        reason: 'MEDIADESK_API_URL and MEDIADESK_API_KEY are set in the environment',
      };
    }
    if (s.backend === 'live' && keySet)
      return {
        effective: 'live',
        chosen: 'live',
        baseUrl: s.baseUrl,
        keySet,
        keychain,
        reason: `live service with the key from the ${keychain === 'os' ? 'OS keychain' : 'session memory'}`,
      };
    // A Sandbox that could not start is a fact to report, not a status that cannot be read.
    let sandboxUrl = 'in-process';
    let failed = this.startError;
    if (this.sandbox) {
      try {
        sandboxUrl = (await this.sandbox).url;
      } catch (err) {
        failed = errorMessage(err);
      }
    }
    const reason =
      (s.backend === 'live'
        ? 'live is chosen but no API key is set, so the built-in Sandbox answers'
        : `the built-in Sandbox, as ${s.sandboxKey}`) +
      (failed ? `; it could not start (${failed}) and is tried again on the next request` : '');
    return { effective: 'sandbox', chosen: s.backend, baseUrl: sandboxUrl, keySet, keychain, reason };
  }

  /** The live target (environment, or the chosen live service with a key), or null for the Sandbox. */
  private async live(): Promise<ApiTarget | null> {
    if (this.env.MEDIADESK_API_URL && this.env.MEDIADESK_API_KEY) {
      const baseUrl = this.env.MEDIADESK_API_URL;
      return {
        baseUrl,
        apiKey: this.env.MEDIADESK_API_KEY,
        keyHeader: this.env.MEDIADESK_API_KEY_HEADER || keyHeaderFor(baseUrl),
      };
    }
    const s = this.opts.settings.get();
    if (s.backend === 'live') {
      const key = await this.opts.secrets.get();
      if (key) return { baseUrl: s.baseUrl, apiKey: key, keyHeader: s.keyHeader };
    }
    return null;
  }

  /**
   * Where the key in use comes from: the environment (MEDIADESK_API_KEY), the keychain (the live
   * service chosen in Settings), or the Sandbox identity of Settings. Starts nothing.
   */
  async keySource(): Promise<KeySource> {
    if (this.env.MEDIADESK_API_URL && this.env.MEDIADESK_API_KEY) return 'environment';
    return (await this.live()) ? 'keychain' : 'sandbox';
  }

  async target(): Promise<ApiTarget> {
    const live = await this.live();
    if (live) return live;
    this.sandbox ??= this.startSandbox();
    const s = this.opts.settings.get();
    return { baseUrl: (await this.sandbox).url, apiKey: s.sandboxKey, keyHeader: s.keyHeader };
  }

  /**
   * A start that failed (its port taken, a file it needs unreadable) is forgotten, so the next
   * request tries again: otherwise every status read and Sandbox request would fail until restart.
   */
  private startSandbox(): Promise<RunningSandboxLike> {
    const started = this.opts.startSandbox();
    started.then(
      () => (this.startError = null),
      (err: unknown) => {
        this.startError = errorMessage(err);
        if (this.sandbox === started) this.sandbox = null;
      },
    );
    return started;
  }

  /**
   * Which server and account requests go to now (`live <base URL> key <fingerprint>`, or `sandbox`
   * whatever its port), recorded with what is sent: a run id means something only on the server
   * that made it, and work queued with one key must not be paid for with another. Starts nothing.
   */
  async identity(): Promise<string> {
    return identityOf(await this.live());
  }

  /** This process's built-in Sandbox, if it has started one: result URLs of any other are dead. */
  async builtInSandboxUrl(): Promise<string | null> {
    return this.sandbox ? (await this.sandbox).url : null;
  }

  slugs(): Slugs {
    return effectiveSlugs(this.opts.settings.get());
  }

  /** Whether an HTTPS-only input can take a local file by uploading it to the Sandbox. */
  async isSandbox(): Promise<boolean> {
    return (await this.status()).effective === 'sandbox';
  }

  async close(): Promise<void> {
    if (this.sandbox) await (await this.sandbox).close();
    this.sandbox = null;
  }
}
