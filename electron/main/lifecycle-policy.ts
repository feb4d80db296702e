/**
 * The shell's decisions on updates and renderer crashes as plain functions, tested without
 * Electron (test/unit/package-policy.test.ts); updater.ts and recovery.ts apply them.
 */

type Env = Record<string, string | undefined>;

export interface UpdateContext {
  /** app.isPackaged: an installed build, not `npm run dev` or `electron .`. */
  packaged: boolean;
  env: Env;
  /** The autoUpdate setting. */
  autoUpdate: boolean;
}

/** Why this process may not look for updates at all, even when asked from the menu; null when it may. */
export function updatesUnavailable({ packaged, env }: UpdateContext): string | null {
  if (!packaged) return 'this is a development build: only an installed MediaDesk updates itself';
  if (/^(off|0|false|no)$/i.test(env.MEDIADESK_UPDATES ?? '')) return 'MEDIADESK_UPDATES is off';
  // A test run (CI, the launch test against the packaged app) must download nothing.
  if (env.CI || env.NODE_ENV === 'test') return 'this is a test run';
  return null;
}

/** Why no update is looked for at start and downloaded in the background; null when one is. */
export function automaticUpdatesOff(c: UpdateContext): string | null {
  return updatesUnavailable(c) ?? (c.autoUpdate ? null : 'automatic updates are turned off (setting autoUpdate)');
}

/** Renderer crashes within this window count towards giving up on reloading by itself. */
export const CRASH_WINDOW_MS = 60_000;
export const MAX_RELOADS = 3;

/**
 * What to do when the window's renderer is gone: reload it (and say so) unless it has crashed
 * MAX_RELOADS times within CRASH_WINDOW_MS, when reloading again would only loop; then the user chooses.
 */
export function afterRendererGone(
  reason: string,
  earlierCrashes: readonly number[],
  now: number,
): { reload: 'now' | 'ask' | 'no'; recent: number[] } {
  // The window closing ends its renderer cleanly: nothing to recover.
  if (reason === 'clean-exit') return { reload: 'no', recent: [...earlierCrashes] };
  const recent = [...earlierCrashes.filter((t) => now - t < CRASH_WINDOW_MS), now];
  return { reload: recent.length > MAX_RELOADS ? 'ask' : 'now', recent };
}

/** What happened to the window's renderer, in words: "MediaDesk's window crashed". */
export function rendererGoneWords(reason: string): string {
  const why: Record<string, string> = {
    crashed: 'crashed',
    oom: 'ran out of memory',
    killed: 'was ended by the system',
    'abnormal-exit': 'stopped unexpectedly',
    'launch-failed': 'could not start',
    'integrity-failure': 'failed its code integrity check',
    'memory-eviction': 'was closed by the system to free memory',
  };
  return `MediaDesk's window ${why[reason] ?? `stopped (${reason})`}`;
}
