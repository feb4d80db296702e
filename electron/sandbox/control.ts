import type { TrainedLoras } from './loras.ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppCosts } from './apps.ts';
import type { AuditStore } from './audit-store.ts';
import { sendError, sendInvalid } from './errors.ts';
import { faultsPatchSchema, type FaultState } from './faults.ts';
import { DEMO_KEYS } from './keys.ts';
import { limitsOptionSchema, type ServiceLimits } from './limits.ts';
import type { DailyQuota, Stats } from './stats.ts';
import type { TaskStore } from './tasks.ts';
import type { Uploads } from './uploads.ts';

/** Stated limits of the control API. */
export const MAX_CONTROL_BYTES = 1024 * 1024;
export const MAX_BLOB_BYTES = 64 * 1024 ** 3;

export interface ControlDeps {
  faults: FaultState;
  appCosts: AppCosts;
  stats: Stats;
  quotas: DailyQuota[];
  limits: ServiceLimits;
  tasks: TaskStore;
  /** LoRAs trained here: forgotten with the tasks. */
  loras: TrainedLoras;
  audit: AuditStore;
  blobs: Map<string, number>;
  now: () => number;
  baseUrl: () => string;
  webhookSecret: string;
  renderer?: { stats(): unknown };
  uploads: Uploads;
}

const parseJson = (body: unknown): unknown => {
  if (!Buffer.isBuffer(body) || body.length === 0) return {};
  return JSON.parse(body.toString('utf8'));
};

/**
 * `/__sandbox/*`: the knobs tests and demos turn. Never authenticated, never faulted. It lives in
 * its own plugin so it can take bodies of any type without touching `/v1` parsing.
 */
export function registerControl(app: FastifyInstance, deps: ControlDeps): void {
  app.register(async (ctl) => {
    ctl.removeAllContentTypeParsers();
    ctl.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_CONTROL_BYTES }, (_req, body, done) =>
      done(null, body),
    );

    const jsonBody = (body: unknown): { ok: true; value: Record<string, unknown> } | { ok: false } => {
      try {
        const v = parseJson(body);
        return v && typeof v === 'object' && !Array.isArray(v)
          ? { ok: true, value: v as Record<string, unknown> }
          : { ok: false };
      } catch {
        return { ok: false };
      }
    };

    ctl.get('/__sandbox/faults', async () => deps.faults.current);
    ctl.post('/__sandbox/faults', async (req, reply) => {
      const b = jsonBody(req.body);
      if (!b.ok) return sendInvalid(reply, [{ field: 'body', reason: 'must be a JSON object' }]);
      const r = faultsPatchSchema.safeParse(b.value);
      if (!r.success)
        return sendInvalid(
          reply,
          r.error.issues.map((i) => ({
            field: i.path.join('.') || (i.code === 'unrecognized_keys' ? i.keys.join(',') : 'body'),
            reason: i.message,
          })),
        );
      return deps.faults.merge(r.data);
    });
    ctl.get('/__sandbox/limits', async () => deps.limits.current);
    ctl.post('/__sandbox/limits', async (req, reply) => {
      const b = jsonBody(req.body);
      const r = b.ok ? limitsOptionSchema.safeParse(b.value.limits) : undefined;
      if (!r?.success)
        return sendInvalid(reply, [
          {
            field: 'limits',
            reason:
              'must be "service", "off", or {burstPerSec, burstWindowSec, averagePerSec, averageWindowSec, caps: {business, enterprise}}',
          },
        ]);
      deps.limits.set(r.data);
      return deps.limits.current;
    });
    ctl.post('/__sandbox/apps/:appId/cost', async (req: FastifyRequest<{ Params: { appId: string } }>, reply) => {
      const b = jsonBody(req.body);
      const cost = b.ok ? b.value.cost : undefined;
      if (cost !== null && (typeof cost !== 'number' || !Number.isFinite(cost) || cost < 0))
        return sendInvalid(reply, [
          { field: 'cost', reason: 'must be a number of credits, 0 or more, or null for an app served without a cost' },
        ]);
      if (!deps.appCosts.set(req.params.appId, cost)) return sendError(reply, 404, `No app ${req.params.appId}`);
      return { id: req.params.appId, cost };
    });
    // What a task was made of: the body as the client sent it, and the parameters the Sandbox
    // worked from (defaults applied). Tests read what a client really sent.
    ctl.get('/__sandbox/tasks/:id', async (req: FastifyRequest<{ Params: { id: string } }>, reply) => {
      const t = deps.tasks.get(req.params.id);
      if (!t) return sendError(reply, 404, `No task ${req.params.id}`);
      return { task_id: t.id, tool: t.toolId, key: t.key, sent: t.sent ?? null, params: t.params };
    });
    // Every task and app run under way ends now, so a test can hold work as long as it needs
    // without waiting out a long duration afterwards.
    ctl.post('/__sandbox/tasks/finish', async () => ({ finished: deps.tasks.finishAll(deps.now()) }));
    // `{"tasks": true}` forgets the tasks too, so tests sharing one Sandbox each start with empty lists.
    ctl.post('/__sandbox/reset', async (req, reply) => {
      const b = jsonBody(req.body);
      const tasks = b.ok ? b.value.tasks : undefined;
      if (tasks !== undefined && typeof tasks !== 'boolean')
        return sendInvalid(reply, [{ field: 'tasks', reason: 'must be true or false' }]);
      if (tasks) {
        deps.tasks.clear();
        deps.loras.reset();
      }
      deps.faults.reset();
      deps.appCosts.reset();
      deps.stats.reset();
      for (const q of deps.quotas) q.reset();
      deps.limits.reset();
      return { ok: true, faults: deps.faults.current };
    });
    ctl.get('/__sandbox/stats', async () => ({
      requests: deps.stats.requests,
      creates: deps.stats.creates,
      auditSearches: deps.stats.auditSearches,
      listParams: deps.stats.listParams,
      charges: deps.stats.charges,
      uploads: deps.stats.uploads,
      limited: deps.limits.limited,
      tasks: deps.tasks.size,
      ...(deps.renderer ? { renders: deps.renderer.stats() } : {}),
    }));
    // Every asset URL handed out so far expires now: a queued job's upload must be asked for again.
    ctl.post('/__sandbox/assets/expire', async () => ({ expired: deps.uploads.expireAssets() }));
    ctl.get('/__sandbox/requests', async () => ({ requests: deps.stats.log }));
    ctl.post('/__sandbox/blobs', async (req, reply) => {
      const b = jsonBody(req.body);
      const bytes = b.ok ? b.value.bytes : undefined;
      if (typeof bytes !== 'number' || !Number.isInteger(bytes) || bytes < 0 || bytes > MAX_BLOB_BYTES) {
        return sendInvalid(reply, [{ field: 'bytes', reason: `must be an integer from 0 to ${MAX_BLOB_BYTES}` }]);
      }
      const id = `blob${deps.blobs.size + 1}_${bytes}`;
      deps.blobs.set(id, bytes);
      return { id, bytes, url: `${deps.baseUrl()}/blobs/${id}` };
    });
    ctl.post('/__sandbox/audit/events', async (req, reply) => {
      const b = jsonBody(req.body);
      const count = b.ok ? (b.value.count ?? 1) : undefined;
      if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > 10_000)
        return sendInvalid(reply, [{ field: 'count', reason: 'must be an integer from 1 to 10000' }]);
      const added = deps.audit.append(count, deps.now());
      return { added: added.length, total: deps.audit.events.length };
    });
    ctl.get('/__sandbox/webhook-secret', async () => ({ secret: deps.webhookSecret }));
    ctl.get('/__sandbox/keys', async () => ({ keys: DEMO_KEYS }));
    ctl.all('/__sandbox/*', async (_req, reply) => sendError(reply, 404, 'No such control route'));
  });
}
