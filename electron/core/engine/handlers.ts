import type { HandlerMap } from '../../../shared/contract/define.ts';
import type { jobsCommands } from '../../../shared/contract/jobs.ts';
import type { EventPayload } from '../../../shared/contract/index.ts';
import type { Engine } from './engine.ts';

/** The renderer's commands over the engine (createCore adds the estimates); transports validate requests and responses. */
export function engineHandlers(
  engine: Engine,
  onCheckProgress?: (p: EventPayload<'batches.checkProgress'>) => void,
): Omit<HandlerMap<typeof jobsCommands>, 'batches.estimate' | 'apps.estimate'> {
  return {
    'batches.start': (req) => engine.startBatch(req),
    'batches.check': (req) => engine.checkBatch(req, onCheckProgress),
    'batches.list': (req) => engine.listBatches(req.limit, req.offset),
    'batches.cancel': ({ id }) => engine.cancelBatch(id),
    'batches.retry': ({ id, states }) => engine.retryBatch(id, states),
    'batches.setBudget': ({ id, budget }) => engine.setBudget(id, budget),
    'jobs.list': (req) => engine.listJobs(req),
    'jobs.pause': () => engine.pause(),
    'jobs.resume': () => engine.resume(),
    'jobs.status': () => engine.statusNow(),
    'jobs.cancel': ({ id }) => engine.cancelJob(id),
    'jobs.retry': ({ id }) => engine.retryJob(id),
  };
}
