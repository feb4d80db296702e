/** Worker-thread entry of a bulk import's stage (stage.ts): one message per staged batch, then exit. */
import { parentPort, workerData } from 'node:worker_threads';
import { stageFile, type StageTask } from './stage.ts';

const task = (workerData as { auditStage?: StageTask } | undefined)?.auditStage;
if (parentPort && task) {
  const port = parentPort;
  stageFile(task, (b) => port.postMessage(b, [b.ts.buffer as ArrayBuffer])).then(
    () => port.close(),
    (err: unknown) => port.postMessage({ kind: 'error', message: err instanceof Error ? err.message : String(err) }),
  );
}
