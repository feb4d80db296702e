import type { Running } from '../../../shared/contract/audit.ts';

/** How a task ended: its result, or why it failed. */
export type Ended<R> = { result: R; error: null } | { result: null; error: string };

/**
 * One task of the app's at a time (an import, a sync), kept where any window can find it: its
 * last progress and whether a stop was asked for (audit.status), since a window reloaded since
 * it started, or another tab, never got its answer; `ended` tells every window when it is over.
 */
export class RunningTask<P, R> {
  private now: { progress: P | null; stop: AbortController; signal: AbortSignal } | null = null;

  get busy(): boolean {
    return this.now !== null;
  }

  /**
   * Runs `task` (one at a time: the caller checks `busy`) with a signal that `stop()` or `outer` aborts,
   * and a `progress` kept for `snapshot()`. `stopping` is told at once, since the task may take a batch
   * to notice and other windows would show it running on till then.
   */
  async run(
    task: (controls: { signal: AbortSignal; progress: (p: P) => void }) => Promise<R>,
    opts: { outer?: AbortSignal; stopping?: () => void; ended?: (e: Ended<R>) => void } = {},
  ): Promise<R> {
    const stop = new AbortController();
    const now = {
      progress: null as P | null,
      stop,
      signal: opts.outer ? AbortSignal.any([opts.outer, stop.signal]) : stop.signal,
    };
    this.now = now;
    const stopping = () => opts.stopping?.();
    now.signal.addEventListener('abort', stopping, { once: true });
    let ended: Ended<R>;
    try {
      const result = await task({ signal: now.signal, progress: (p) => (now.progress = p) });
      ended = { result, error: null };
      return result;
    } catch (err) {
      ended = { result: null, error: err instanceof Error ? err.message : String(err) };
      throw err;
    } finally {
      now.signal.removeEventListener('abort', stopping);
      this.now = null;
      opts.ended?.(ended!);
    }
  }

  /** Asks the running task to stop; false when none runs. */
  stop(): boolean {
    if (!this.now) return false;
    this.now.stop.abort();
    return true;
  }

  snapshot(): Running<P> | null {
    return this.now && { progress: this.now.progress, stopping: this.now.signal.aborted };
  }
}
