import type { HandlerMap } from '../../../shared/contract/define.ts';
import type { jobsCommands } from '../../../shared/contract/jobs.ts';
import type { EventPayload } from '../../../shared/contract/index.ts';
import { startEstimated, type BatchEstimator } from '../limits/estimate.ts';
import type { Engine } from './engine.ts';

export interface JobsHandlerDeps {
  /** Prices a batch before Start; a started batch stores its estimate (startEstimated). */
  estimator: BatchEstimator;
  /** A workflow app's name and cost, for apps.estimate (AppsService.get). */
  appOf: (id: string) => Promise<{ id: string; name: string; cost: number | null }>;
  onCheckProgress?: (p: EventPayload<'batches.checkProgress'>) => void;
}

/** The jobs area's commands over the engine; transports validate requests and responses. */
export function engineHandlers(engine: Engine, deps: JobsHandlerDeps): HandlerMap<typeof jobsCommands> {
  const { estimator } = deps;
  return {
    'batches.start': (req) =>
      startEstimated(
        estimator,
        req,
        (r) => engine.startBatch(r),
        (id, p) => engine.store.setEstimate(id, p.creditsEach, p.basis),
      ),
    'batches.check': (req) => engine.checkBatch(req, deps.onCheckProgress),
    'batches.estimate': ({ tool, params, creates, project }) => estimator.estimate(tool, params, creates, project),
    'apps.estimate': async ({ id, runs }) => estimator.appEstimate(await deps.appOf(id), runs),
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
