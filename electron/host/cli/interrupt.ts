// The CLI's Ctrl-C, apart from the engine (engine-session.ts brings it, ~0.7 s of start-up): the
// audit and sandbox commands stop on it too without loading the engine.

/**
 * Ctrl-C (or SIGTERM) while a command follows work stops the following, not the work: a request in
 * flight finishes (nothing left "maybe charged"), then exit 130; a second Ctrl-C ends it at once.
 * `timeoutMs` (`--timeout`) stops it the same way, and `timedOut()` says which it was.
 */
export function interruptible(options: { timeoutMs?: number } = {}): {
  signal: AbortSignal;
  timedOut(): boolean;
  by(): NodeJS.Signals | null;
  release(): void;
} {
  const stop = new AbortController();
  following.add(stop);
  let timedOut = false;
  let by: NodeJS.Signals | null = null;
  const detach = () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  // Let go one turn after the signal, not at once: when-exit (under the settings store) sends the
  // signal again to end the process, which killed the command mid-wind-down unless caught here.
  const onSignal = (signal: NodeJS.Signals) => {
    by ??= signal;
    stop.abort();
    setImmediate(detach);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = !stop.signal.aborted;
          stop.abort();
        }, options.timeoutMs);
  return {
    signal: stop.signal,
    timedOut: () => timedOut,
    /** The signal that stopped it, if one did. */
    by: () => by,
    release() {
      clearTimeout(timer);
      following.delete(stop);
      detach();
    },
  };
}

/** The commands' stops while they follow work (run, jobs retry, apps run, audit import and sync, sandbox). */
const following = new Set<AbortController>();

/**
 * The reader of stdout went away (`mediadesk run … | true`), SIGPIPE to a Unix tool: a command that
 * follows work stops as after Ctrl-C, the work staying queued. True when one did; false when none follows.
 */
export function stopFollowing(): boolean {
  for (const stop of following) stop.abort();
  return following.size > 0;
}

/** Exit code of a command stopped by its `--timeout`, as timeout(1) has it. */
export const TIMED_OUT = 124;
