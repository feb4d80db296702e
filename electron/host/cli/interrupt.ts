// The CLI's Ctrl-C, apart from the engine (engine-session.ts brings it, ~0.7 s of start-up): the
// audit and sandbox commands stop on it too without loading the engine.

/**
 * Ctrl-C (or SIGTERM) while a command follows work: a request to stop following, not the work.
 * The command winds down (a request in flight finishes, so nothing is left half-sent and put to the
 * user as maybe charged) and exits 130. Released when it ends, so a second Ctrl-C while it closes
 * ends the process at once. With `timeoutMs` (`--timeout`), the same stop comes by itself when that
 * time is up, and `timedOut()` says which it was: a script that must not wait for a server that
 * cannot be reached gets its shell back, with its work still queued.
 */
export function interruptible(o: { timeoutMs?: number } = {}): {
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
  // Let go one turn after the signal, not at once (process.once): when-exit (under the settings
  // store's atomically) answers the same signal by sending it again to end the process. With this
  // listener gone first, that killed the command mid-wind-down (exit by signal, nothing said); while
  // it is here, that echo is caught. A second Ctrl-C later still ends the process at once.
  const onSignal = (signal: NodeJS.Signals) => {
    by ??= signal;
    stop.abort();
    setImmediate(detach);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const timer =
    o.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = !stop.signal.aborted;
          stop.abort();
        }, o.timeoutMs);
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
 * The reader of stdout went away (`mediadesk run … | true`): what SIGPIPE is to a Unix tool. A
 * command following work stops following as after Ctrl-C (a create in flight finishes, so nothing
 * is left "may have been charged"; the work stays queued) and its exit code says it stopped. True
 * when one did; false when none follows anything, and the caller may just exit.
 */
export function stopFollowing(): boolean {
  for (const stop of following) stop.abort();
  return following.size > 0;
}

/** Exit code of a command stopped by its `--timeout`, as timeout(1) has it. */
export const TIMED_OUT = 124;
