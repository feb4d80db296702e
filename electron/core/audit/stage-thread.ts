import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { readingStopped } from './read.ts';
import { stageFile, type StagedBatch, type StageTask } from './stage.ts';

/** The worker's message when reading failed outright. */
interface StageFailure {
  kind: 'error';
  message: string;
}

type Outcome = 'done' | 'fallback' | { failed: unknown };

/** A last batch that ends the reading with `reason`. */
const stoppedBatch = (reason: string): StagedBatch => ({
  kind: 'batch',
  lo: 0,
  hi: 0,
  ts: new Float64Array(0),
  items: 0,
  rejects: [],
  warnings: [],
  done: true,
  stopped: false,
  bytesRead: 0,
  fatal: readingStopped(reason),
});

/**
 * Stages the file from a worker thread (stage-worker.ts), calling `emit` here for each staged
 * batch in order. Where the worker cannot start (a build without the worker file), the file is
 * staged in this thread instead, through the same code.
 */
export async function stageRows(
  task: StageTask,
  emit: (b: StagedBatch) => Promise<void>,
  opts: { worker: boolean; signal?: AbortSignal },
): Promise<void> {
  const url = workerUrl();
  const { signal } = opts;
  if (!opts.worker || !url) return stageFile(task, emit, signal);
  let worker: Worker;
  try {
    // Caps the parser's heap: young generations above 16 MB bought no speed, only RSS (bench/history/audit-import.md).
    worker = new Worker(url, {
      workerData: { auditStage: task },
      resourceLimits: { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 16 },
    });
  } catch {
    return stageFile(task, emit, signal);
  }
  const outcome = await deliverBatches(worker, emit, signal);
  if (outcome === 'fallback' && !signal?.aborted) return stageFile(task, emit, signal);
  if (typeof outcome === 'object') throw outcome.failed;
}

/** Hands the worker's batches to `emit` one at a time until the last, a failure, or `signal`. */
function deliverBatches(
  worker: Worker,
  emit: (b: StagedBatch) => Promise<void>,
  signal: AbortSignal | undefined,
): Promise<Outcome> {
  let started = false;
  return new Promise<Outcome>((resolve) => {
    let finished = false;
    // The batch in hand: its copy may be waiting for the cache's lock.
    let delivering: Promise<void> | null = null;
    // Interrupted: the batches delivered so far are the load; the thread is stopped where it is.
    const onAbort = () => finish('done');
    const finish = (outcome: Outcome) => {
      if (finished) return;
      finished = true;
      signal?.removeEventListener('abort', onAbort);
      // Resolved once the thread is gone (Windows refuses to delete the stage file while it is open)
      // and the batch in hand is settled (a Stop ends its wait).
      void Promise.allSettled([worker.terminate(), delivering]).then(() => resolve(outcome));
    };
    // Any batch may copy rows into the cache here; if that fails (disk full, a wait for the lock
    // given up) the import fails as it would in this thread.
    const deliver = async (b: StagedBatch) => {
      try {
        await emit(b);
      } catch (err) {
        return finish({ failed: err });
      }
      if (b.done) finish('done');
    };
    // One batch per turn of the event loop: delivered in one go, a reading thread far ahead held the
    // loop for seconds, and a Stop, a status read or a Ctrl-C waited for the end of the file. The
    // thread's error or exit waits its turn too: its last batches come before it.
    const waiting: StagedBatch[] = [];
    const next = () => {
      const b = waiting.shift();
      if (!b || finished) return;
      delivering = deliver(b).then(() => {
        delivering = null;
        if (waiting.length) setImmediate(next);
      });
    };
    const queue = (b: StagedBatch) => {
      if (finished) return;
      waiting.push(b);
      if (waiting.length === 1 && !delivering) setImmediate(next);
    };
    worker.on('message', (m: StagedBatch | StageFailure) => {
      started = true;
      queue(m.kind === 'error' ? stoppedBatch(m.message) : m);
    });
    worker.on('error', (err) => {
      if (!started) return finish('fallback');
      queue(stoppedBatch(err.message));
    });
    worker.on('exit', () => {
      if (!started) return finish('fallback');
      queue(stoppedBatch('the reading thread ended early'));
    });
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort);
  });
}

/** The worker's file: the .ts source when run from source, the built .js beside the bundle. */
function workerUrl(): URL | null {
  for (const name of ['./stage-worker.ts', './stage-worker.js']) {
    const url = new URL(name, import.meta.url);
    if (url.protocol === 'file:' && existsSync(fileURLToPath(url))) return url;
  }
  return null;
}
