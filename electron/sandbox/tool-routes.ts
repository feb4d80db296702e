import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  bodyFields,
  DEFAULT_SLUGS,
  pathFields,
  resolvePaths,
  TOOLS,
  type ToolEntry,
} from '../../shared/catalogue/index.ts';
import {
  answersAtOnce,
  bodyContentTypeOf,
  OPERATIONS,
  requestProblems,
  type JsonSchema,
  type Operation,
  type ResultKind,
} from '../../shared/official/index.ts';
import { AtOnce } from './at-once.ts';
import type { DiskStore } from './blob-store.ts';
import { InvalidParamsError, sendError, sendInvalid } from './errors.ts';
import { creditsOf } from '../../shared/service-limits.ts';
import { FAULT_MESSAGES, type FaultState } from './faults.ts';
import type { ServiceLimits } from './limits.ts';
import type { Caller } from './keys.ts';
import type { TrainedLoras } from './loras.ts';
import { resolveInputs } from './media-input.ts';
import { describeImage, improvePrompt } from './render.ts';
import { resultPath } from './results.ts';
import { UUID_RE } from './rng.ts';
import { resolveSchemaMedia } from './schema-media.ts';
import type { Stats } from './stats.ts';
import { pollPathsOf, statusAt, type Task, type TaskStatus, type TaskStore } from './tasks.ts';
import type { WebhookDispatcher } from './webhooks.ts';

/**
 * A window a service might put on its lists (faults.listWindow; none by default: the description
 * says a list returns all the caller's tasks), for tests of a client that must ask the rest by id.
 */
export const LIST_WINDOW_FAULT = 50;

interface CreateRoute {
  op: Operation;
  /** What the task's `generated` holds, as the reference records it. */
  generates: ResultKind;
  /** The app's tool of this path, if any: only to decode inputs and pick how images are drawn, never to validate. */
  tool: ToolEntry | null;
  pathParams: Record<string, string>;
  listPath: string;
  /** Every list and by-id prefix that covers the create path: its tasks are listed and found under each. */
  pollPaths: string[];
  /** A create that answers its result at once (`answersAtOnce`): no task, no list. */
  atOnce: boolean;
}

const hasParam = (path: string) => path.includes('{');
/** A list or by-id prefix covers a create path that is itself or a variant of it ("-720p", "/turbo", "-pro"). */
export const covers = (prefix: string, create: string) =>
  create === prefix || create.startsWith(`${prefix}/`) || create.startsWith(`${prefix}-`);
/** Paths under /v1/ai/ that are no task tool: workflow apps, the LoRA catalogue, uploads (each its own routes). */
const notATool = (path: string) => /^\/v1\/ai\/(apps|flows|me|uploads|loras)(\/|$)/.test(path);
/**
 * Where a create's tasks are listed and found: its most specific covering by-id (kling-v2-1 for
 * kling-v2-1-pro, kling-elements for kling-elements-pro, seedance-2-pro for seedance-2-pro-720p),
 * and every covering list at least as specific (the family's and the per-resolution one), never a
 * broader family's (music-generation is a model of its own beside music-generation/lyria-3).
 * `listPath` is the most specific of those lists, or the create path where none is described.
 */
function pollingOf(
  create: string,
  lists: readonly string[],
  byIds: readonly string[],
): { listPath: string; pollPaths: string[] } {
  const longestFirst = (a: string, b: string) => b.length - a.length || a.localeCompare(b);
  const byId = byIds.filter((p) => covers(p, create)).sort(longestFirst)[0];
  const own = lists.filter((l) => covers(l, create) && (!byId || l.length >= byId.length)).sort(longestFirst);
  const listPath = own[0] ?? create;
  return { listPath, pollPaths: [...new Set([listPath, ...own, ...(byId ? [byId] : [])])].sort() };
}

/**
 * Every create and list path of the official reference. What a valid request is and what a task
 * generates come from the reference alone; the app's catalogue only says, for a path it also
 * names, how to decode its inputs and which tool's drawing its images get.
 */
export function buildToolRoutes() {
  const creates = new Map<string, CreateRoute>();
  const lists = new Map<string, Operation>();
  for (const op of OPERATIONS)
    if (op.method === 'GET' && !hasParam(op.path) && op.path.startsWith('/v1/ai/') && !notATool(op.path))
      lists.set(op.path, op);
  const withById = new Set(
    OPERATIONS.filter((op) => op.method === 'GET' && op.path.endsWith('/{task-id}')).map((op) =>
      op.path.slice(0, -'/{task-id}'.length),
    ),
  );
  const known = new Map<string, { tool: ToolEntry; pathParams: Record<string, string> }>();
  for (const tool of TOOLS) {
    let combos: Record<string, string>[] = [{}];
    for (const f of pathFields(tool))
      combos = combos.flatMap((c) => (f.kind === 'enum' ? f.options : []).map((o) => ({ ...c, [f.name]: o })));
    for (const pathParams of combos)
      known.set(resolvePaths(tool, DEFAULT_SLUGS, pathParams).create, { tool, pathParams });
  }
  for (const op of OPERATIONS) {
    if (op.method !== 'POST' || hasParam(op.path) || !op.path.startsWith('/v1/ai/') || notATool(op.path)) continue;
    const generates = op.generates;
    if (!generates) throw new Error(`the reference does not say what POST ${op.path} generates`);
    const atOnce = answersAtOnce(op);
    const { listPath, pollPaths } = atOnce
      ? { listPath: op.path, pollPaths: [] }
      : pollingOf(op.path, [...lists.keys()], [...withById]);
    const k = known.get(op.path);
    const tool = k?.tool ?? null;
    creates.set(op.path, { op, generates, tool, pathParams: k?.pathParams ?? {}, listPath, pollPaths, atOnce });
  }
  // A create whose collection the reference does not list (a path-only family) still polls there.
  for (const c of creates.values()) if (!c.atOnce && !lists.has(c.listPath)) lists.set(c.listPath, c.op);
  // By id under every list, and under the by-ids the reference has without a list (kling-elements).
  const byIds = new Set([...lists.keys(), ...withById]);
  return { creates, lists: new Map([...lists.keys()].map((l) => [l, true])), byIds };
}

/** Defaults the description states for top-level fields: the request as the service would run it. */
function withStatedDefaults(schema: JsonSchema | undefined, body: Record<string, unknown>): Record<string, unknown> {
  const out = { ...body };
  const props = (schema?.properties ?? {}) as Record<string, { default?: unknown }>;
  for (const [k, p] of Object.entries(props))
    if (out[k] === undefined && p.default !== undefined && p.default !== null) out[k] = p.default;
  for (const part of (schema?.allOf ?? []) as JsonSchema[]) Object.assign(out, withStatedDefaults(part, out));
  return out;
}

/** The route pattern a request counts under in /__sandbox/stats (ids collapse to {task-id}). */
export function toolRouteKey(method: string, path: string, routes: ReturnType<typeof buildToolRoutes>): string | null {
  if (method === 'POST' && routes.creates.has(path)) return `POST ${path}`;
  if (method !== 'GET' && method !== 'HEAD') return null;
  if (routes.lists.has(path)) return `GET ${path}`;
  const cut = path.lastIndexOf('/');
  if (routes.byIds.has(path.slice(0, cut))) return `GET ${path.slice(0, cut)}/{task-id}`;
  return null;
}

export interface ToolDeps {
  tasks: TaskStore;
  faults: FaultState;
  stats: Stats;
  limits: ServiceLimits;
  disk: DiskStore;
  webhooks: WebhookDispatcher;
  now: () => number;
  baseUrl: () => string;
  callerOf: (req: FastifyRequest) => Caller;
  loras: TrainedLoras;
}

export function taskEnvelope(task: Task, status: TaskStatus, baseUrl: string): { data: Record<string, unknown> } {
  const kind = task.resultKind;
  let generated: string[] = [];
  if (status === 'COMPLETED') {
    generated =
      kind === 'text'
        ? [task.text ?? '']
        : Array.from({ length: task.resultCount }, (_, i) => baseUrl + resultPath(task, i, kind));
  }
  const data: Record<string, unknown> = { task_id: task.id, status, generated };
  // api-notes: the high-resolution generator adds has_nsfw on completion.
  if (task.listPath === '/v1/ai/mystic' && status === 'COMPLETED') data.has_nsfw = generated.map(() => false);
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
 * A body's media inputs as stored inputs: the catalogue's media fields by its rules, any other the
 * schema has by the schema. `firstImage`: a create the catalogue does not name draws from it.
 */
async function decodeInputs(route: CreateRoute, body: Record<string, unknown>, disk: DiskStore) {
  if (!route.tool) return resolveSchemaMedia(route.op, body, disk);
  const fields = bodyFields(route.tool);
  // resolveInputs decodes images and videos; an audio field is left to the schema's check.
  const decoded = new Set(
    fields.filter((f) => (f.kind === 'media' || f.kind === 'mediaList') && f.media !== 'audio').map((f) => f.name),
  );
  const params = await resolveInputs(route.tool.id, fields, body, disk);
  return { params: (await resolveSchemaMedia(route.op, params, disk, decoded)).params, firstImage: undefined };
}

/** The text a finished text task holds: a prompt read from its image, or its prompt improved. */
async function textOf(params: Record<string, unknown>, firstImage: string | undefined, disk: DiskStore) {
  const image = typeof params.image === 'string' && disk.get(params.image) ? params.image : firstImage;
  if (image) return describeImage(image, disk);
  return improvePrompt(String(params.prompt ?? ''), params.type, params.language);
}

/**
 * One handler for every task tool: the reference says which paths exist and what a valid body is,
 * so tools are data here.
 */
export function toolHandler(deps: ToolDeps) {
  const routes = buildToolRoutes();
  // Only the quality tiers make several images per request (num_images).
  const countResults = (body: Record<string, unknown>) => (typeof body.num_images === 'number' ? body.num_images : 1);
  const atOnce = new AtOnce(deps);

  /** A synchronous create: charged and counted like a task, answered with its result in the documented shape. */
  async function createAtOnce(req: FastifyRequest, reply: FastifyReply, route: CreateRoute, caller: Caller) {
    const body = req.body as Record<string, unknown>;
    const toolId = route.tool?.id ?? route.op.path;
    let answer: unknown;
    try {
      answer = await atOnce.answer(route.op.path, withStatedDefaults(route.op.body, body));
    } catch (err) {
      if (err instanceof InvalidParamsError) return sendInvalid(reply, err.params);
      throw err;
    }
    // Taken from the day's cap only once the input proved good: a 400 takes nothing.
    const cap = deps.limits.create(caller.key, caller.plan, toolId, deps.now());
    if (!cap.ok) return sendError(reply, 429, FAULT_MESSAGES[429], { 'Retry-After': String(cap.retryAfterSec) });
    const charge = { tool: route.op.path.slice('/v1/ai/'.length), credits: creditsOf(toolId, body) };
    deps.tasks.chargeInstant({ key: caller.key, userId: caller.userId, createdAt: deps.now(), charge });
    deps.stats.create(toolId, caller.key);
    deps.stats.charge(toolId, charge.credits);
    return reply.code(200).send(answer);
  }

  async function create(req: FastifyRequest, reply: FastifyReply, route: CreateRoute) {
    const caller = deps.callerOf(req);
    const raw = req.body;
    const form = bodyContentTypeOf(route.op) === 'application/x-www-form-urlencoded';
    const sentType = String(req.headers['content-type'] ?? '')
      .split(';')[0]
      .trim();
    if (form && sentType !== 'application/x-www-form-urlencoded')
      return sendInvalid(reply, [{ field: 'body', reason: 'must be application/x-www-form-urlencoded, as described' }]);
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
      return sendInvalid(reply, [{ field: 'body', reason: 'must be a JSON object' }]);
    const problems = requestProblems(route.op, raw);
    if (problems.length) return sendInvalid(reply, problems);
    if (route.atOnce) return createAtOnce(req, reply, route, caller);
    const body = raw as Record<string, unknown>;
    const loras = 'styling' in body ? deps.loras.stylingProblems(caller.key, body.styling, deps.now()) : [];
    if (loras.length) return sendInvalid(reply, loras);
    let params: Record<string, unknown>;
    let firstImage: string | undefined;
    try {
      ({ params, firstImage } = await decodeInputs(route, body, deps.disk));
    } catch (err) {
      if (err instanceof InvalidParamsError) return sendInvalid(reply, err.params);
      throw err;
    }
    const sent = { ...params };
    // Defaults are applied so rendering sees what the service would have used.
    params = { ...withStatedDefaults(route.op.body, params), ...route.pathParams };
    const toolId = route.tool?.id ?? route.op.path;
    const cap = deps.limits.create(caller.key, caller.plan, toolId, deps.now());
    if (!cap.ok) return sendError(reply, 429, FAULT_MESSAGES[429], { 'Retry-After': String(cap.retryAfterSec) });
    const task: Task = {
      id: deps.tasks.newId(),
      toolId,
      listPath: route.listPath,
      pollPaths: route.pollPaths,
      key: caller.key,
      userId: caller.userId,
      createdAt: deps.now(),
      durationMs: deps.faults.current.taskDurationMs,
      fails: deps.faults.failsNext(),
      params,
      sent,
      resultCount: countResults(params),
      reached: 0,
      resultKind: route.generates,
      charge: { tool: route.op.path.slice('/v1/ai/'.length), credits: creditsOf(toolId, params) },
      ...(firstImage ? { inputImage: firstImage } : {}),
    };
    if (task.resultKind === 'text') task.text = await textOf(params, firstImage, deps.disk);
    deps.tasks.add(task);
    deps.stats.create(task.toolId, caller.key);
    deps.stats.charge(task.toolId, task.charge!.credits);
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
    const { listWindow, listNotFound } = deps.faults.current;
    if (listNotFound.includes('*') || listNotFound.includes(listPath)) return sendError(reply, 404, 'Not found');
    const bad = pagingProblems(query);
    if (bad.length) return sendInvalid(reply, bad);
    const items = deps.tasks.newest(caller.key, listPath, listWindow ?? Infinity);
    const now = deps.now();
    return reply.send({ data: items.map((t) => taskEnvelope(t, statusAt(t, now), deps.baseUrl()).data) });
  }

  function byId(req: FastifyRequest, reply: FastifyReply, listPath: string, id: string) {
    const caller = deps.callerOf(req);
    const task = UUID_RE.test(id) ? deps.tasks.get(id) : undefined;
    // Another caller's task is indistinguishable from a missing one (no cross-user access).
    if (!task || task.key !== caller.key || !pollPathsOf(task).includes(listPath))
      return sendError(reply, 404, 'Task not found');
    return reply.send(taskEnvelope(task, statusAt(task, deps.now()), deps.baseUrl()));
  }

  return {
    routes,
    atOnce,
    async handle(req: FastifyRequest, reply: FastifyReply) {
      const path = decodeURI(new URL(req.url, 'http://sandbox').pathname).replace(/\/+$/, '');
      if (req.method === 'POST') {
        const route = routes.creates.get(path);
        if (route) return create(req, reply, route);
      } else if (req.method === 'GET') {
        if (routes.lists.has(path)) return list(req, reply, path);
        const cut = path.lastIndexOf('/');
        const prefix = path.slice(0, cut);
        if (routes.byIds.has(prefix)) return byId(req, reply, prefix, path.slice(cut + 1));
      }
      return sendError(reply, 404, 'Not found');
    },
  };
}
