import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { AuditStore } from './audit-store.ts';
import { registerAuditRoute } from './audit-route.ts';
import { DiskStore } from './blob-store.ts';
import { registerControl } from './control.ts';
import { bufferSource, generatedSource, sendBytes, type ByteSource } from './download.ts';
import { echoKeyInto } from './echo.ts';
import { FAULT_MESSAGES, FaultState } from './faults.ts';
import { sendError, sendInvalid } from './errors.ts';
import { callerOf, type Caller } from './keys.ts';
import { KEY_HEADERS } from '../../shared/service-profile.ts';
import { RenderAbandonedError, resultExpiresAt, ResultRenderer, type RenderMode } from './results.ts';
import { DailyQuota, Stats } from './stats.ts';
import { buildTeam, type Team } from './team.ts';
import { statusAt, TaskStore } from './tasks.ts';
import { toolHandler, toolRouteKey } from './tool-routes.ts';
import { webhookSecret, WebhookDispatcher } from './webhooks.ts';
import { registerAnalytics } from './analytics.ts';
import { AppCosts, registerApps } from './apps.ts';
import { registerCreations } from './creations.ts';
import { registerIconRender } from './icon-render.ts';
import { registerLoras, TrainedLoras } from './loras.ts';
import { ServiceLimits, type LimitsOption } from './limits.ts';
import { registerUploads, Uploads } from './uploads.ts';
import { registerSiem, SiemStandIns } from './siem.ts';

/** Stated limit: JSON bodies on /v1 (base64 inputs included). */
export const MAX_JSON_BYTES = 64 * 1024 * 1024;
export const AUDIT_DAILY_LIMIT = 500;
export const CREDIT_USAGE_DAILY_LIMIT = 100;

export interface SandboxOptions {
  seed: number;
  taskDurationMs?: number;
  now: () => number;
  /** Benchmark aid: `fast` serves a fixed tiny image for every image result (README). */
  renderMode?: RenderMode;
  /** A file keeping the tasks across restarts (TaskStore); none: they live as long as the Sandbox. */
  taskJournal?: string;
  /** The service's rates and daily caps: `off` (the default), `service`, or numbers of one's own. */
  limits?: LimitsOption;
  /** Audit events seeded at the start, at least (AuditStore); SEEDED_EVENT_COUNT when not given. */
  auditEvents?: number;
}

/** Everything one running Sandbox holds; routes get the parts they need. */
export interface SandboxState {
  seed: number;
  now: () => number;
  baseUrl: () => string;
  team: Team;
  audit: AuditStore;
  tasks: TaskStore;
  faults: FaultState;
  appCosts: AppCosts;
  /** LoRAs callers trained here (POST /v1/ai/loras/styles and characters). */
  loras: TrainedLoras;
  stats: Stats;
  disk: DiskStore;
  renderer: ResultRenderer;
  webhooks: WebhookDispatcher;
  auditQuota: DailyQuota;
  creditQuota: DailyQuota;
  limits: ServiceLimits;
  callerOf: (req: FastifyRequest) => Caller;
}

/** Result downloads suffer the faults too (LoRA previews and uploads do not: see faults.failPuts). */
const DOWNLOAD_PREFIXES = ['/results/', '/blobs/'];

// eslint-disable-next-line max-lines-per-function -- the route table: one line or a few per official endpoint, read as a list
export function buildServer(opts: SandboxOptions): {
  app: FastifyInstance;
  state: SandboxState;
  setBaseUrl: (u: string) => void;
  shutdown: () => Promise<void>;
} {
  let base = 'http://127.0.0.1';
  const callers = new WeakMap<FastifyRequest, Caller>();
  const disk = new DiskStore();
  const team = buildTeam(opts.seed);
  const secret = webhookSecret(opts.seed);
  const state: SandboxState = {
    seed: opts.seed,
    now: opts.now,
    baseUrl: () => base,
    team,
    audit: new AuditStore(team, opts.seed, opts.now(), opts.auditEvents),
    tasks: new TaskStore(opts.seed, opts.taskJournal),
    faults: new FaultState(opts.seed, opts.taskDurationMs),
    appCosts: new AppCosts(),
    loras: new TrainedLoras(),
    stats: new Stats(),
    disk,
    renderer: new ResultRenderer(disk, opts.renderMode),
    webhooks: new WebhookDispatcher(secret, opts.now),
    auditQuota: new DailyQuota(AUDIT_DAILY_LIMIT),
    creditQuota: new DailyQuota(CREDIT_USAGE_DAILY_LIMIT),
    limits: new ServiceLimits(opts.limits),
    callerOf: (req) => {
      const c = callers.get(req);
      if (!c) throw new Error('route reached without authentication');
      return c;
    },
  };
  const blobs = new Map<string, number>();

  const app = Fastify({
    logger: false,
    bodyLimit: MAX_JSON_BYTES,
    forceCloseConnections: true,
    routerOptions: { maxParamLength: 500 },
  });
  const tools = toolHandler({ ...state });
  // Background removal's body is a form, as its description says; fields arrive as strings.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) =>
    done(null, Object.fromEntries(new URLSearchParams(String(body)))),
  );

  app.addHook('onRequest', async (req, reply) => {
    const path = req.url.split('?')[0];
    const pattern = req.routeOptions.url;
    const key = pattern === '/v1/*' ? toolRouteKey(req.method, path.replace(/\/+$/, ''), tools.routes) : null;
    state.stats.request(key ?? `${req.method} ${pattern ?? '(unmatched)'}`);
    if (!path.startsWith('/__sandbox/')) state.stats.logRequest(req.method, path);
    const isApi = path.startsWith('/v1/') || path === '/v1';
    if (isApi) {
      // The live service's headers only: a client sending anything else gets the live answer, 401.
      const sent = KEY_HEADERS.map((h) => req.headers[h]).filter((v) => v !== undefined && v !== '');
      if (sent.length === 0) return sendError(reply, 401, 'Missing API key');
      const header = sent[0];
      const caller = typeof header === 'string' ? callerOf(header) : undefined;
      if (!caller) return sendError(reply, 401, 'Invalid API key');
      callers.set(req, caller);
      if (state.faults.current.echoKey && req.method === 'POST') {
        return sendInvalid(
          reply,
          [{ field: 'prompt', reason: `was refused for the key ${caller.key}` }],
          `Request with API key ${caller.key} is not valid.`,
        );
      }
      const pace = state.limits.request(caller.key, state.now());
      if (!pace.ok) return sendError(reply, 429, FAULT_MESSAGES[429], { 'Retry-After': String(pace.retryAfterSec) });
    }
    // Faults hit the API and downloads only; the control API must keep working to turn them off.
    if (isApi || DOWNLOAD_PREFIXES.some((p) => path.startsWith(p))) {
      if (state.faults.hangs(path)) {
        // Taken and never answered: the socket stays open until the client gives up or the Sandbox closes.
        reply.hijack();
        return reply;
      }
      const fault = state.faults.draw();
      if (fault?.kind === 'reset') {
        reply.hijack();
        req.raw.socket.destroy();
        return reply;
      }
      if (fault?.kind === 'status') {
        const headers: Record<string, string> =
          fault.status === 429 ? { 'Retry-After': String(state.faults.current.retryAfterSec) } : {};
        return sendError(reply, fault.status, FAULT_MESSAGES[fault.status], headers);
      }
    }
  });

  app.addHook('onSend', async (req, reply, payload) => {
    const caller = callers.get(req);
    if (!state.faults.current.echoKeyInAnswers || !caller || reply.statusCode >= 300 || typeof payload !== 'string')
      return payload;
    if (!String(reply.getHeader('content-type') ?? '').includes('json')) return payload;
    return JSON.stringify(echoKeyInto(JSON.parse(payload), caller.key));
  });

  app.setErrorHandler((err: Error & { statusCode?: number; code?: string }, _req, reply) => {
    const status = err.statusCode ?? 500;
    if (status === 400) return sendInvalid(reply, [{ field: 'body', reason: err.message }]);
    if (status >= 500) return sendError(reply, 500, 'Internal server error');
    return sendError(reply, status, err.message);
  });
  app.setNotFoundHandler((_req, reply) => sendError(reply, 404, 'Not found'));

  registerAuditRoute(app, {
    store: state.audit,
    quota: state.auditQuota,
    now: state.now,
    callerOf: state.callerOf as (r: unknown) => Caller,
    delayMs: () => state.faults.current.auditDelayMs,
    counted: (key) => state.stats.auditSearch(key),
  });
  registerLoras(app, state);
  registerApps(app, state);
  registerAnalytics(app, state);
  registerCreations(app, state);
  registerIconRender(app, state);
  const uploads = new Uploads({ ...state });
  registerUploads(app, uploads);
  app.route({
    method: ['GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'PATCH'],
    url: '/v1/*',
    handler: (req, reply) => tools.handle(req, reply),
  });

  const serveResult = async (
    req: FastifyRequest<{ Params: { taskId: string; file: string } }>,
    reply: FastifyReply,
  ) => {
    const task = state.tasks.get(req.params.taskId);
    const index = Number(/^(\d+)\./.exec(req.params.file)?.[1] ?? NaN);
    const now = state.now();
    if (!task || !(index >= 0 && index < task.resultCount) || statusAt(task, now) !== 'COMPLETED')
      return sendError(reply, 404, 'No such result');
    if (state.faults.current.expireResultUrls || now > resultExpiresAt(task))
      return sendError(reply, 410, 'This result URL has expired; results must be downloaded within their lifetime.');
    // A client that gives up (timeout, abort) must not leave its render queued for nobody.
    const gone = new AbortController();
    const onClose = () => {
      if (!reply.raw.writableFinished) gone.abort();
    };
    reply.raw.on('close', onClose);
    let src: ByteSource;
    try {
      const damaged = state.faults.current.damagedMedia && (task.resultKind === 'video' || task.resultKind === 'audio');
      src = damaged
        ? bufferSource(Buffer.from('not a playable file'), task.resultKind === 'video' ? 'video/mp4' : 'audio/mpeg')
        : await state.renderer.source(task, index, task.resultKind, gone.signal);
    } catch (err) {
      if (!(err instanceof RenderAbandonedError)) throw err;
      reply.hijack();
      return void reply.raw.destroy();
    } finally {
      reply.raw.off('close', onClose);
    }
    sendBytes(req, reply, src, state.faults.current);
  };
  app.get('/results/:taskId/:file', serveResult);
  app.get('/beta-images/:id/:file', (req: FastifyRequest<{ Params: { id: string; file: string } }>, reply) =>
    tools.atOnce.serve(req, reply),
  );

  app.get('/blobs/:id', async (req: FastifyRequest<{ Params: { id: string } }>, reply) => {
    const size = blobs.get(req.params.id);
    if (size === undefined) return sendError(reply, 404, 'No such blob');
    if (state.faults.current.expireResultUrls)
      return sendError(reply, 410, 'This result URL has expired; results must be downloaded within their lifetime.');
    sendBytes(req, reply, generatedSource(size, size % 1_048_573), state.faults.current);
  });

  registerSiem(app, { faults: state.faults, siem: new SiemStandIns() });
  registerControl(app, {
    faults: state.faults,
    appCosts: state.appCosts,
    stats: state.stats,
    quotas: [state.auditQuota, state.creditQuota],
    limits: state.limits,
    tasks: state.tasks,
    loras: state.loras,
    audit: state.audit,
    blobs,
    now: state.now,
    baseUrl: state.baseUrl,
    webhookSecret: secret,
    renderer: state.renderer,
    uploads,
  });

  return {
    app,
    state,
    setBaseUrl: (u) => {
      base = u;
    },
    shutdown: async () => {
      await state.webhooks.close();
      await app.close();
      disk.close();
    },
  };
}
