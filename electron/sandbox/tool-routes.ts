import type { FastifyReply, FastifyRequest } from 'fastify';
import { bodyFields, DEFAULT_SLUGS, pathFields, resolvePaths, TOOLS, validateRequest, type ToolEntry } from '../../shared/catalogue/index.ts';
import type { DiskStore } from './blob-store.ts';
import { InvalidParamsError, sendError, sendInvalid } from './errors.ts';
import type { FaultState } from './faults.ts';
import type { Caller } from './keys.ts';
import { stylingProblems } from './loras.ts';
import { resolveInputs } from './media-input.ts';
import { describeImage } from './render.ts';
import { resultKindOf, resultPath } from './results.ts';
import { UUID_RE } from './rng.ts';
import type { Stats } from './stats.ts';
import { statusAt, type Task, type TaskStatus, type TaskStore } from './tasks.ts';
import type { WebhookDispatcher } from './webhooks.ts';

/**
 * A task list shows only the caller's newest tasks of the collection, at most this many, as the
 * live service may: its list endpoints declare no paging, so a client must ask about the rest by id.
 */
export const LIST_MAX_ITEMS = 50;

interface CreateRoute { tool: ToolEntry; pathParams: Record<string, string>; listPath: string }

/** Every concrete create and list path of the catalogue, path parameters (resolution) expanded. */
export function buildToolRoutes(slugs = DEFAULT_SLUGS) {
  const creates = new Map<string, CreateRoute>();
  const lists = new Map<string, ToolEntry[]>();
  for (const tool of TOOLS) {
    const combos: Record<string, string>[] = [{}];
    for (const f of pathFields(tool)) {
      const options = f.kind === 'enum' ? f.options : [];
      const next: Record<string, string>[] = [];
      for (const c of combos) for (const o of options) next.push({ ...c, [f.name]: o });
      combos.splice(0, combos.length, ...next);
    }
    for (const pathParams of combos) {
      const p = resolvePaths(tool, slugs, pathParams);
      creates.set(p.create, { tool, pathParams, listPath: p.list });
      const l = lists.get(p.list) ?? [];
      if (!l.includes(tool)) l.push(tool);
      lists.set(p.list, l);
    }
  }
  return { creates, lists };
}

/** The route pattern a request counts under in /__sandbox/stats (ids collapse to {task-id}). */
export function toolRouteKey(method: string, path: string, routes: ReturnType<typeof buildToolRoutes>): string | null {
  if (method === 'POST' && routes.creates.has(path)) return `POST ${path}`;
  if (method !== 'GET' && method !== 'HEAD') return null;
  if (routes.lists.has(path)) return `GET ${path}`;
  const cut = path.lastIndexOf('/');
  if (routes.lists.has(path.slice(0, cut))) return `GET ${path.slice(0, cut)}/{task-id}`;
  return null;
}

export interface ToolDeps {
  tasks: TaskStore;
  faults: FaultState;
  stats: Stats;
  disk: DiskStore;
  webhooks: WebhookDispatcher;
  now: () => number;
  baseUrl: () => string;
  callerOf: (req: FastifyRequest) => Caller;
}

export function taskEnvelope(task: Task, status: TaskStatus, baseUrl: string): { data: Record<string, unknown> } {
  const kind = resultKindOf(task);
  let generated: string[] = [];
  if (status === 'COMPLETED') {
    generated = kind === 'text' ? [task.text ?? ''] : Array.from({ length: task.resultCount }, (_, i) => baseUrl + resultPath(task, i, kind));
  }
  const data: Record<string, unknown> = { task_id: task.id, status, generated };
  // api-notes: the high-resolution generator adds has_nsfw on completion.
  if (task.toolId === 'hires' && status === 'COMPLETED') data.has_nsfw = generated.map(() => false);
  return { data };
}

/**
 * `page` and `per_page` are not declared by the list endpoints and change nothing here; the
 * service still refuses values below 1 (and non-integers), so those answer 400 as there.
 */
function pagingProblems(query: Record<string, unknown>): { field: string; reason: string }[] {
  const bad: { field: string; reason: string }[] = [];
  for (const name of ['page', 'per_page']) {
    const raw = query[name];
    if (raw === undefined) continue;
    if (typeof raw !== 'string' || !/^-?\d+$/.test(raw)) bad.push({ field: name, reason: 'must be an integer' });
    else if (Number(raw) < 1) bad.push({ field: name, reason: 'must be greater than 0' });
  }
  return bad;
}

/**
 * One handler for every task tool: the catalogue says which paths exist, what a valid body is
 * and what the result looks like, so tools are data here.
 */
export function toolHandler(deps: ToolDeps) {
  const routes = buildToolRoutes();
  // Only the quality tiers make several images per request (num_images).
  const countResults = (body: Record<string, unknown>) => (typeof body.num_images === 'number' ? body.num_images : 1);

  async function create(req: FastifyRequest, reply: FastifyReply, route: CreateRoute) {
    const caller = deps.callerOf(req);
    const raw = req.body;
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return sendInvalid(reply, [{ field: 'body', reason: 'must be a JSON object' }]);
    // A path field sent in the body too (resolution of a video family) would be overridden by the path unseen.
    const twice = pathFields(route.tool).filter((f) => f.name in raw).map((f) => ({ field: f.name, reason: `is chosen by the create path (here ${route.pathParams[f.name]}), not sent in the body` }));
    const v = validateRequest(route.tool, { ...(raw as Record<string, unknown>), ...route.pathParams });
    if (!v.ok || twice.length) return sendInvalid(reply, [...twice, ...v.invalid]);
    const loras = route.tool.fields.flatMap((f) => (f.kind === 'styling' ? stylingProblems(caller.key, v.body[f.name], f.name) : []));
    if (loras.length) return sendInvalid(reply, loras);
    let params: Record<string, unknown>;
    try {
      params = await resolveInputs(route.tool.id, bodyFields(route.tool), v.body, deps.disk);
    } catch (err) {
      if (err instanceof InvalidParamsError) return sendInvalid(reply, err.params);
      throw err;
    }
    const sent = { ...params };
    // Defaults are applied so rendering sees what the service would have used.
    for (const f of route.tool.fields) if ('default' in f && f.default !== undefined && params[f.name] === undefined) params[f.name] = f.default;
    Object.assign(params, route.pathParams);
    const task: Task = {
      id: deps.tasks.newId(), toolId: route.tool.id, listPath: route.listPath, key: caller.key, userId: caller.userId,
      createdAt: deps.now(), durationMs: deps.faults.current.taskDurationMs, fails: deps.faults.failsNext(),
      params, sent, resultCount: countResults(params), reached: 0,
    };
    if (route.tool.result === 'text') task.text = await describeImage(String(params.image), deps.disk);
    deps.tasks.add(task);
    deps.stats.create(route.tool.id, caller.key);
    const hook = params.webhook_url;
    if (typeof hook === 'string') {
      task.webhookUrl = hook;
      deps.webhooks.watch(task, hook, (t, s) => taskEnvelope(t, s, deps.baseUrl()));
    }
    return reply.code(200).send(taskEnvelope(task, 'CREATED', deps.baseUrl()));
  }

  function list(req: FastifyRequest, reply: FastifyReply, listPath: string) {
    const caller = deps.callerOf(req);
    const query = req.query as Record<string, unknown>;
    deps.stats.listRequest(Object.keys(query));
    const bad = pagingProblems(query);
    if (bad.length) return sendInvalid(reply, bad);
    const items = deps.tasks.newest(caller.key, listPath, LIST_MAX_ITEMS);
    const now = deps.now();
    return reply.send({ data: items.map((t) => taskEnvelope(t, statusAt(t, now), deps.baseUrl()).data) });
  }

  function byId(req: FastifyRequest, reply: FastifyReply, listPath: string, id: string) {
    const caller = deps.callerOf(req);
    const task = UUID_RE.test(id) ? deps.tasks.get(id) : undefined;
    // Another caller's task is indistinguishable from a missing one (no cross-user access).
    if (!task || task.key !== caller.key || task.listPath !== listPath) return sendError(reply, 404, 'Task not found');
    return reply.send(taskEnvelope(task, statusAt(task, deps.now()), deps.baseUrl()));
  }

  return {
    routes,
    async handle(req: FastifyRequest, reply: FastifyReply) {
      const path = decodeURI(new URL(req.url, 'http://sandbox').pathname).replace(/\/+$/, '');
      if (req.method === 'POST') {
        const route = routes.creates.get(path);
        if (route) return create(req, reply, route);
      } else if (req.method === 'GET') {
        if (routes.lists.has(path)) return list(req, reply, path);
        const cut = path.lastIndexOf('/');
        const prefix = path.slice(0, cut);
        if (routes.lists.has(prefix)) return byId(req, reply, prefix, path.slice(cut + 1));
      }
      return sendError(reply, 404, 'Not found');
    },
  };
}
