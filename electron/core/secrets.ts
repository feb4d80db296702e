import { createHash } from 'node:crypto';
import type { AsyncEntry } from '@napi-rs/keyring';
import { DeskError } from '../../shared/contract/errors.ts';
import { realClock, type Clock } from './clock.ts';

/**
 * Where the API key lives: only core reads it; the UI learns whether one is set and its fingerprint.
 * @napi-rs/keyring, not the archived keytar: prebuilt for Keychain, Credential Manager and Secret Service.
 */
/**
 * 8 hex digits of the key's SHA-256: enough to tell a user's few keys apart, too little to guess
 * a high-entropy key from. What the database and the renderer may hold instead of the key.
 */
export const keyFingerprint = (key: string): string =>
  createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 8);

export interface SecretStore {
  readonly kind: 'os' | 'memory';
  /** Where the key is kept, as the CLI says it ("stored in the OS keychain"). */
  readonly note: string;
  /** Why the OS keychain is not the store, in the person's words; null when it is. */
  readonly problem: string | null;
  get(): Promise<string | null>;
  set(value: string): Promise<void>;
  clear(): Promise<void>;
}

export const KEYCHAIN_SERVICE = 'MediaDesk';
const ACCOUNT = 'api-key';

export class KeychainStore implements SecretStore {
  readonly kind = 'os' as const;
  readonly note = 'stored in the OS keychain';
  readonly problem = null;
  private readonly service: string;
  private readonly account: string;
  private opened?: AsyncEntry;
  constructor(service = KEYCHAIN_SERVICE, account = ACCOUNT) {
    this.service = service;
    this.account = account;
  }
  /**
   * The native module is loaded at the first read, not with the core: `mediadesk jobs list` never reads
   * the key. An entry holds its D-Bus session, so one is kept until a call over it fails on D-Bus. Its
   * calls run off this thread: one may wait for the person at an unlock prompt.
   */
  private async entry(): Promise<AsyncEntry> {
    const { AsyncEntry } = await import('@napi-rs/keyring');
    // On Linux pin the Secret Service: the kernel keyring fallback forgets the key at reboot.
    return (this.opened ??= new AsyncEntry(
      this.service,
      this.account,
      process.platform === 'linux' ? { linux: { store: 'secret-service' } } : undefined,
    ));
  }
  /**
   * gnome-keyring 42-50 aborts when clients come and go quickly side by side (gnome-keyring#196), and
   * D-Bus starts another for the next call: the call in flight got no reply, and an entry opened
   * before it has a session the new daemon does not know. So after a D-Bus failure the call is made
   * once more on a new entry (each call here may be repeated); a refusal (a locked keychain, a prompt
   * dismissed) is not repeated.
   */
  private async call<T>(op: (entry: AsyncEntry) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await op(await this.entry());
      } catch (err) {
        if (!(err instanceof Error && /DBus error/.test(err.message))) throw keychainProblem(err);
        this.opened = undefined;
        if (attempt === 2) throw keychainProblem(err);
      }
    }
  }
  async get() {
    return (await this.call((entry) => entry.getPassword())) ?? null;
  }
  async set(value: string) {
    await this.call((entry) => entry.setPassword(value));
  }
  async clear() {
    await this.call((entry) => entry.deletePassword());
  }
}

/** What a keychain library's failure means, in the person's words, and what to do where there is something. */
const KEYCHAIN_PROBLEMS: [RegExp, string][] = [
  [
    /unlock prompt was dismissed/i,
    'the OS keychain is locked, and the prompt to unlock it was dismissed or could not be shown: unlock it (on Linux, the "login" keyring) and try again',
  ],
  [
    /no result found/i,
    'the OS keychain has no default keyring to keep the key in: create one (on Linux, a "login" keyring, in Passwords and Keys) and try again',
  ],
  [/DBus error/i, 'the OS keychain is unavailable: it did not answer'],
];

/** A keychain failure as KEYCHAIN_PROBLEMS says it, the library's own text after it. */
export function keychainProblem(err: unknown): DeskError {
  if (err instanceof DeskError) return err;
  const raw = (err instanceof Error ? err.message : String(err)).split('\n')[0];
  const plain = KEYCHAIN_PROBLEMS.find(([pattern]) => pattern.test(raw))?.[1] ?? 'the OS keychain refused';
  return new DeskError('unavailable', `${plain} (${raw})`);
}

/** Used only when no OS keychain answers: the key lives for this process and is never written anywhere. */
export class MemorySecretStore implements SecretStore {
  readonly kind = 'memory' as const;
  readonly note: string;
  readonly problem: string;
  private value: string | null = null;
  constructor(problem = 'no OS keychain is available') {
    this.problem = problem;
    this.note = `${problem}; the key is kept in memory for this session only`;
  }
  async get() {
    return this.value;
  }
  async set(value: string) {
    this.value = value;
  }
  async clear() {
    this.value = null;
  }
}

/** The OS keychain when it answers, else a memory store that says why. */
export async function openSecretStore(
  service = process.env.MEDIADESK_KEYCHAIN_SERVICE || KEYCHAIN_SERVICE,
  /** Another secret beside the API key (the team server's password). */
  account = ACCOUNT,
): Promise<SecretStore> {
  try {
    const store = new KeychainStore(service, account);
    await store.get();
    return store;
  } catch (err) {
    return new MemorySecretStore(keychainProblem(err).message);
  }
}

/**
 * The key read from the store at most once per `ttlMs`: a keychain read is a synchronous OS round
 * trip, which at hundreds of polls a second would stall the queue. Another process's change shows
 * within `ttlMs`; this process's own set and clear at once.
 */
export class CachedSecretStore implements SecretStore {
  readonly kind: SecretStore['kind'];
  readonly note: string;
  readonly problem: string | null;
  private readonly inner: SecretStore;
  private readonly ttlMs: number;
  private readonly clock: Pick<Clock, 'now'>;
  private cached: { value: string | null; at: number } | null = null;

  constructor(inner: SecretStore, ttlMs = 2000, clock: Pick<Clock, 'now'> = realClock) {
    this.inner = inner;
    this.ttlMs = ttlMs;
    this.clock = clock;
    this.kind = inner.kind;
    this.note = inner.note;
    this.problem = inner.problem;
  }

  async get() {
    if (this.cached && this.clock.now() - this.cached.at < this.ttlMs) return this.cached.value;
    const value = await this.inner.get();
    this.cached = { value, at: this.clock.now() };
    return value;
  }

  async set(value: string) {
    this.cached = null;
    await this.inner.set(value);
    this.cached = { value, at: this.clock.now() };
  }

  async clear() {
    this.cached = null;
    await this.inner.clear();
    this.cached = { value: null, at: this.clock.now() };
  }
}

/** The env variable that gives a sink's secret instead of the keychain (tests, scripts): MEDIADESK_AUDIT_SINK_SECRET_<ID>. */
export const sinkSecretEnv = (id: string) =>
  `MEDIADESK_AUDIT_SINK_SECRET_${id.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;

/**
 * The audit sinks' tokens and passwords: the OS keychain (account `audit-sink:<id>`) beside the API
 * key, or for this session only when no keychain answers; an env variable (sinkSecretEnv) wins.
 */
export class SinkSecrets {
  private readonly service: string;
  private readonly env: NodeJS.ProcessEnv;
  private readonly memory = new Map<string, string>();
  /**
   * One store a sink, which keeps its keychain session: a new one each read (a status refresh reads
   * every sink's) is the connect-and-leave churn that crashes gnome-keyring.
   */
  private readonly stores = new Map<string, KeychainStore>();
  private keychain: Promise<boolean> | undefined;

  constructor(env: NodeJS.ProcessEnv = process.env, service = env.MEDIADESK_KEYCHAIN_SERVICE || KEYCHAIN_SERVICE) {
    this.env = env;
    this.service = service;
  }

  private store(id: string): KeychainStore {
    let store = this.stores.get(id);
    if (!store) this.stores.set(id, (store = new KeychainStore(this.service, `audit-sink:${id}`)));
    return store;
  }

  /** Whether the OS keychain answers (asked once). */
  private usesKeychain(): Promise<boolean> {
    return (this.keychain ??= this.store('probe')
      .get()
      .then(
        () => true,
        () => false,
      ));
  }

  async get(id: string): Promise<string | null> {
    const fromEnv = this.env[sinkSecretEnv(id)];
    if (fromEnv) return fromEnv;
    if (!(await this.usesKeychain())) return this.memory.get(id) ?? null;
    return this.store(id).get();
  }

  async set(id: string, secret: string): Promise<void> {
    if (await this.usesKeychain()) await this.store(id).set(secret);
    else this.memory.set(id, secret);
  }

  async clear(id: string): Promise<void> {
    this.memory.delete(id);
    if (await this.usesKeychain())
      await this.store(id)
        .clear()
        .catch(() => {});
  }
}
