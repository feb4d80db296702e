/** Worker-thread entry of a staged or bulk import's reading (stage.ts): one message per batch, then exit. */
import { parentPort, workerData } from 'node:worker_threads';
import { stageFile, type StagedBatch, type StageTask } from './stage.ts';

/**
 * Batches of packed rows handed over and not yet taken: the reading waits beyond this, so a reading
 * thread far ahead of the importer does not hold the file in memory.
 */
const MAX_IN_FLIGHT = 3;

const task = (workerData as { auditStage?: StageTask } | undefined)?.auditStage;
if (parentPort && task) {
  const port = parentPort;
  let inFlight = 0;
  let wake: (() => void) | null = null;
  // The importer's one message: it has taken a batch of rows.
  port.on('message', () => {
    inFlight--;
    wake?.();
    wake = null;
  });
  const emit = (b: StagedBatch): Promise<void> | void => {
    const transfer = [b.ts.buffer as ArrayBuffer, ...(b.rows ? [b.rows.ts.buffer as ArrayBuffer] : [])];
    port.postMessage(b, transfer);
    if (b.rows && ++inFlight >= MAX_IN_FLIGHT) return new Promise((resolve) => (wake = resolve));
  };
  stageFile(task, emit).then(
    () => port.close(),
    (err: unknown) => port.postMessage({ kind: 'error', message: err instanceof Error ? err.message : String(err) }),
  );
}
