// Backend identities and keys in words, without zod: the queue's store, `mediadesk jobs list` and the
// renderer read them without building the contract's schemas (foundation.ts re-exports them).
import type { IgnoredSetting } from './foundation.ts';

const LIVE_IDENTITY = /^live (\S+)(?: key ([0-9a-f]{8}))?$/;

/**
 * The same identity as recorded before the key was part of it (`live <base URL>`): work of that
 * server queued then is the current key's (see QueueStore.adoptUnowned). Null for the Sandbox.
 */
export function keylessIdentity(identity: string): string | null {
  const m = LIVE_IDENTITY.exec(identity);
  return m?.[2] ? `live ${m[1]}` : null;
}

/** A backend identity in words: `the built-in Sandbox`, `the live service at URL (API key 3fa2c9d1)`. */
export function backendLabel(identity: string): string {
  if (identity === 'sandbox') return 'the built-in Sandbox';
  const m = LIVE_IDENTITY.exec(identity);
  if (!m) return identity;
  return `the live service at ${m[1]}${m[2] ? ` (API key ${m[2]})` : ''}`;
}

/**
 * Why queued or running work (a batch, an app run) does not move: it is driven only on the backend
 * it was queued for, since its task or run ids mean nothing elsewhere and it must not be paid for
 * on another server. Null when `backend` is the one in use (or was not recorded).
 */
export function waitingFor(backend: string | null, inUse: string): string | null {
  if (!backend || backend === inUse) return null;
  if (otherKeyOnly(backend, inUse)) {
    const [theirs, mine] = [LIVE_IDENTITY.exec(backend)!, LIVE_IDENTITY.exec(inUse)!];
    return `waiting for the API key ${theirs[2]}, with which it was queued on the live service at ${theirs[1]}: set that key again to continue, or cancel it (the key in use is ${mine[2] ?? 'another'})`;
  }
  return `waiting for ${backendLabel(backend)}, where it was queued: switch back to it to continue, or cancel it`;
}

/** Whether `backend` is the server in use with another key (another account), not another server. */
export function otherKeyOnly(backend: string, inUse: string): boolean {
  const [theirs, mine] = [LIVE_IDENTITY.exec(backend), LIVE_IDENTITY.exec(inUse)];
  return !!theirs?.[2] && !!mine && theirs[1] === mine[1] && backend !== inUse;
}

/** waitingFor in a few words, for a list row: `the Sandbox`, `the live service`, `another API key`. */
export function waitingForShort(backend: string, inUse: string): string {
  if (backend === 'sandbox') return 'the Sandbox';
  return otherKeyOnly(backend, inUse) ? 'another API key' : 'the live service';
}

/**
 * Where a set key is kept and what the next start finds, in the same words wherever it is said:
 * the OS keychain keeps it; the memory store (no OS keychain) loses it when MediaDesk ends.
 */
export const KEY_KEPT = {
  os: 'in the OS keychain; it is used again at the next start',
  memory:
    'for this session only: the OS keychain cannot be used, so it is not saved, and at the next start MediaDesk is back on the built-in Sandbox until you set it again',
} as const;

/** What Set says once the key is taken: "Key stored in the OS keychain; …" or "Key set for this session only: …". */
export const keySetMessage = (keychain: 'os' | 'memory') =>
  `${keychain === 'os' ? 'Key stored' : 'Key set'} ${KEY_KEPT[keychain]}.`;

/** Said the same by the Settings screen and `mediadesk settings get`. */
export const ignoredSettingText = (i: IgnoredSetting): string =>
  `${i.name}: the stored value ${i.stored} was not used (${i.reason}); ${i.known ? 'the default is in use' : 'it is left in the file'}`;
