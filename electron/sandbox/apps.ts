import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { encodingOf } from '../../shared/catalogue/index.ts';
import type { MediaKind } from '../../shared/official/index.ts';
import { charCount } from '../../shared/catalogue/chars.ts';
import { sendError, sendInvalid, VALIDATION_MESSAGE, type InvalidParam } from './errors.ts';
import { holdAnswer } from './faults.ts';
import { generatedSize } from './render.ts';
import { APP_RESULT_TTL_HOURS, resultPath } from './results.ts';
import { UUID_RE } from './rng.ts';
import type { SandboxState } from './server.ts';
import { statusAt, type Task, type TaskStatus } from './tasks.ts';

type InputType = 'creation' | 'text' | 'number' | 'select';

/**
 * An input as the service describes it: `id` is what the run body is keyed by, `key` the name the
 * workflow canvas gave it, and each type's limits are in `config` (a select's choices in
 * `config.options`, a number's `min`/`max`, a text's `max_length`, a creation's `mediaType`).
 */
interface AppInput {
  id: string;
  key: string;
  type: InputType;
  label: string;
  config: { mediaType?: 'image'; max_length?: number; min?: number; max?: number; options?: string[] };
  required: boolean;
  default: string | number | null;
}

/**
 * An app as served (`sqid`, `name`, `tool_metadata`, and `inputs` in the definition) plus what
 * only the Sandbox knows: the kind of its results and the tool name its result items carry.
 */
interface App {
  sqid: string;
  name: string;
  output: MediaKind;
  tool: string;
  tool_metadata: ToolMetadata;
  inputs: AppInput[];
}
interface ToolMetadata {
  icon: string;
  description_key: string | null;
  translation_key: string | null;
  category: string;
  sort_order: number;
  total_cost?: number;
}

const metadata = (total_cost: number): ToolMetadata => ({
  icon: 'workflow',
  description_key: null,
  translation_key: null,
  category: 'general',
  sort_order: 999,
  total_cost,
});

/**
 * A few apps whose inputs, together, cover all four input types of the spec. Their ids are
 * readable (the service's are `input-<uuid>-<n>`) and differ from their keys, as the service's do.
 */
export const APPS: readonly App[] = [
  {
    sqid: 'pS7kQ2xa',
    name: 'Product shot studio',
    output: 'image',
    tool: 'text-to-image',
    tool_metadata: metadata(12),
    inputs: [
      {
        id: 'product_image',
        key: 'image',
        type: 'creation',
        label: 'Product photo',
        config: { mediaType: 'image' },
        required: true,
        default: null,
      },
      {
        id: 'scene',
        key: 'prompt',
        type: 'text',
        label: 'Scene description',
        config: { max_length: 2000 },
        required: true,
        default: null,
      },
      {
        id: 'variations',
        key: 'count',
        type: 'number',
        label: 'Variations',
        config: { min: 1, max: 4 },
        required: false,
        default: 1,
      },
      {
        id: 'style',
        key: 'look',
        type: 'select',
        label: 'Style',
        config: { options: ['studio', 'outdoor', 'minimal'] },
        required: false,
        default: 'studio',
      },
    ],
  },
  {
    sqid: 'tV3mW9rb',
    name: 'Teaser video',
    output: 'video',
    tool: 'image-to-video',
    tool_metadata: metadata(40),
    inputs: [
      {
        id: 'key_visual',
        key: 'image',
        type: 'creation',
        label: 'Key visual',
        config: { mediaType: 'image' },
        required: true,
        default: null,
      },
      {
        id: 'tagline',
        key: 'prompt',
        type: 'text',
        label: 'Tagline',
        config: { max_length: 200 },
        required: true,
        default: null,
      },
      {
        id: 'format',
        key: 'aspect_ratio',
        type: 'select',
        label: 'Format',
        config: { options: ['widescreen_16_9', 'social_story_9_16'] },
        required: false,
        default: 'widescreen_16_9',
      },
      {
        id: 'duration',
        key: 'seconds',
        type: 'number',
        label: 'Duration (s)',
        config: { min: 4, max: 15 },
        required: false,
        default: 6,
      },
    ],
  },
  {
    sqid: 'jM4nX8sc',
    name: 'Jingle maker',
    output: 'audio',
    tool: 'music-generation',
    tool_metadata: metadata(8),
    inputs: [
      {
        id: 'brief',
        key: 'prompt',
        type: 'text',
        label: 'Brief',
        config: { max_length: 1000 },
        required: true,
        default: null,
      },
      {
        id: 'mood',
        key: 'style',
        type: 'select',
        label: 'Mood',
        config: { options: ['upbeat', 'calm', 'epic'] },
        required: false,
        default: 'upbeat',
      },
      {
        id: 'length_seconds',
        key: 'length',
        type: 'number',
        label: 'Length (s)',
        config: { min: 10, max: 60 },
        required: false,
        default: 15,
      },
    ],
  },
];

/** What a result item says of its media: the files the Sandbox serves (render.ts) measure so. */
const MEDIA: Record<
  App['output'],
  (t: Task) => { duration: number | null; width: number | null; height: number | null }
> = {
  image: (t) => ({ duration: null, ...generatedSize(t.params) }),
  // resources/sandbox/sample.mp4 and sample.mp3 (ffprobe).
  video: () => ({ duration: 2, width: 320, height: 240 }),
  audio: () => ({ duration: 3, width: null, height: null }),
};

/** Run statuses are lowercase (api-notes); `completed_with_errors` and `cancelled` come from the run's ending (faults). */
export const RUN_STATUS: Record<TaskStatus, string> = {
  CREATED: 'pending',
  IN_PROGRESS: 'running',
  COMPLETED: 'completed',
  FAILED: 'failed',
};

/** A run that ends with errors still delivers what its other steps made: one result fewer, at least one. */
function deliveredResults(t: Task): number {
  if (t.appEnding === 'cancelled') return 0;
  return t.appEnding === 'completed_with_errors' ? Math.max(1, t.resultCount - 1) : t.resultCount;
}
/** Runs are one collection, whichever family made them or asks for them. */
const RUNS_PATH = '/v1/ai/apps/runs';

/** The newer official description serves apps as `flows`; the earlier one as `apps`. Both are served, same bodies. */
export const APP_FAMILIES = ['flows', 'apps'] as const;

/**
 * What each app costs on this server now. The service may reprice an app between the moment a
 * client reads it and the moment its user confirms a run, or serve one without a cost: a control
 * route sets either, so clients can be tested against both.
 */
export class AppCosts {
  private readonly changed = new Map<string, number | null>();

  /** false: no such app. null: the app is served without `tool_metadata.total_cost`. */
  set(appId: string, cost: number | null): boolean {
    if (!APPS.some((a) => a.sqid === appId)) return false;
    this.changed.set(appId, cost);
    return true;
  }

  reset(): void {
    this.changed.clear();
  }

  /** The app's `tool_metadata` as served now. */
  metadata(a: App): ToolMetadata {
    if (!this.changed.has(a.sqid)) return a.tool_metadata;
    const { total_cost: _, ...rest } = a.tool_metadata;
    const cost = this.changed.get(a.sqid);
    return cost === null ? rest : { ...rest, total_cost: cost };
  }
}

/** A list item of `GET /v1/ai/flows` (and `/v1/ai/apps`): `sqid`, `name`, `tool_metadata` (no `id`, no inputs). */
const listItem = (a: App, costs: AppCosts) => ({ sqid: a.sqid, name: a.name, tool_metadata: costs.metadata(a) });
/** The definition of `GET /v1/ai/apps/{app-id}`: the list item and its inputs. */
const definition = (a: App, costs: AppCosts) => ({
  sqid: a.sqid,
  name: a.name,
  inputs: a.inputs,
  tool_metadata: costs.metadata(a),
});

/**
 * The problems of a run body's input values (each named `inputs.<input id>`), answered with 422:
 * an id the app has not, a value of the wrong type, a required one missing, a select value not in
 * `config.options`, a number out of `config.min`..`config.max`, a text over `config.max_length`.
 */
function checkInputs(app: App, values: Record<string, unknown>, callerTasks: (id: string) => boolean): InvalidParam[] {
  const bad: InvalidParam[] = [];
  for (const k of Object.keys(values))
    if (!app.inputs.some((i) => i.id === k))
      bad.push({ field: `inputs.${k}`, reason: `is not an input of app ${app.sqid}` });
  for (const input of app.inputs) {
    const v = values[input.id];
    const field = `inputs.${input.id}`;
    const { config } = input;
    if (v === undefined || v === null || v === '') {
      if (input.required) bad.push({ field, reason: 'is required' });
      continue;
    }
    if (input.type === 'creation') {
      const ok = typeof v === 'string' && (encodingOf(v) !== null || (UUID_RE.test(v) && callerTasks(v)));
      if (!ok)
        bad.push({ field, reason: 'must be an image URL, a base64-encoded image or the id of one of your creations' });
    } else if (input.type === 'text') {
      if (typeof v !== 'string') bad.push({ field, reason: 'must be text' });
      else if (config.max_length !== undefined && charCount(v) > config.max_length)
        bad.push({ field, reason: `must be at most ${config.max_length} characters` });
    } else if (input.type === 'number') {
      if (typeof v !== 'number' || !Number.isFinite(v)) bad.push({ field, reason: 'must be a number' });
      else if (v < (config.min ?? -Infinity) || v > (config.max ?? Infinity))
        bad.push({ field, reason: `must be from ${config.min} to ${config.max}` });
    } else if (typeof v !== 'string' || !config.options!.includes(v))
      bad.push({ field, reason: `must be one of ${config.options!.join(', ')}` });
  }
  return bad;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Flows the caller made but never published as tools: `GET /v1/ai/me/flows` lists them with the
 * published ones ("including drafts and unpublished workflows"), `{sqid, name}` each.
 */
const DRAFT_FLOWS: readonly { sqid: string; name: string }[] = [
  { sqid: 'uqzQLDr2Aw', name: 'My Custom Sketch to Image' },
  { sqid: 'dF6hK3nq', name: 'Catalogue cut-outs (work in progress)' },
];

/** The caller's own flows, drafts included; the description opens them to subscription plans as well as Enterprise. */
function registerOwnFlows(app: FastifyInstance, state: SandboxState): void {
  for (const family of APP_FAMILIES)
    app.get(`/v1/ai/me/${family}`, async (_req, reply) => {
      if (state.faults.current.missingAppFamily === family) return sendError(reply, 404, 'Not found');
      return { data: [...APPS.map((a) => ({ sqid: a.sqid, name: a.name })), ...DRAFT_FLOWS] };
    });
}

export function registerApps(app: FastifyInstance, state: SandboxState): void {
  registerOwnFlows(app, state);
  const enterpriseOnly = (req: FastifyRequest, reply: FastifyReply): boolean => {
    if (state.callerOf(req).plan === 'enterprise') return true;
    sendError(reply, 403, 'Workflow apps are available to Enterprise customers only.');
    return false;
  };
  /**
   * The run detail, `{data: {run_id, status, app_id, started_at, completed_at, error_message,
   * result}}`; `result` holds `images`, `videos` and `audios` once the run has ended with results
   * (null before, and for a failed or cancelled run). It is also the body of the run's webhooks.
   */
  const runView = (t: Task, status: TaskStatus) => {
    const ended = status === 'COMPLETED' && t.appEnding ? t.appEnding : RUN_STATUS[status];
    const final = status === 'COMPLETED' || status === 'FAILED';
    const endedAt = t.createdAt + t.durationMs;
    const kind = t.resultKind as MediaKind;
    const a = APPS.find((x) => `app:${x.sqid}` === t.toolId);
    const items = Array.from({ length: status === 'COMPLETED' ? deliveredResults(t) : 0 }, (_, i) => ({
      id: `${t.id.slice(0, 8)}-${i + 1}`,
      url: state.baseUrl() + resultPath(t, i, kind),
      tool: a?.tool ?? 'workflow',
      ...MEDIA[kind](t),
      created_at: iso(endedAt),
    }));
    let error_message: string | null = null;
    if (status === 'FAILED')
      error_message =
        state.faults.current.appRunFailureMessage ??
        'A step of the workflow failed (injected by the Sandbox failure rate).';
    else if (ended === 'completed_with_errors')
      error_message = 'One step of the workflow failed (injected by the Sandbox); the other results are ready.';
    return {
      data: {
        run_id: t.id,
        status: ended,
        app_id: t.toolId.slice(4),
        started_at: status === 'CREATED' ? null : iso(t.createdAt + t.durationMs / 5),
        completed_at: final ? iso(endedAt) : null,
        error_message,
        result: items.length
          ? {
              images: kind === 'image' ? items : [],
              videos: kind === 'video' ? items : [],
              audios: kind === 'audio' ? items : [],
            }
          : null,
      },
    };
  };

  for (const family of APP_FAMILIES) {
    const base = `/v1/ai/${family}`;
    const notFound = family === 'flows' ? 'Flow not found' : 'App not found';
    /** The family answers as a path the server does not have (faults.missingAppFamily), else for Enterprise only. */
    const served = (req: FastifyRequest, reply: FastifyReply): boolean => {
      if (state.faults.current.missingAppFamily !== family) return enterpriseOnly(req, reply);
      sendError(reply, 404, 'Not found');
      return false;
    };
    app.get(base, async (req, reply) => {
      if (!served(req, reply)) return reply;
      return { data: APPS.map((a) => listItem(a, state.appCosts)) };
    });
    app.get(`${base}/:appId`, async (req: FastifyRequest<{ Params: { appId: string } }>, reply) => {
      if (!served(req, reply)) return reply;
      await holdAnswer(() => state.faults.current.appDetailDelayMs);
      const a = APPS.find((x) => x.sqid === req.params.appId);
      return a ? { data: definition(a, state.appCosts) } : sendError(reply, 404, notFound);
    });
    app.post(`${base}/:appId/run`, async (req: FastifyRequest<{ Params: { appId: string } }>, reply) => {
      if (!served(req, reply)) return reply;
      const a = APPS.find((x) => x.sqid === req.params.appId);
      if (!a) return sendError(reply, 404, notFound);
      const caller = state.callerOf(req);
      const body = (req.body ?? {}) as Record<string, unknown>;
      // A body the service cannot read is a 400; input values it can read but not accept, a 422.
      const malformed: InvalidParam[] = [];
      if (body.inputs === null || typeof body.inputs !== 'object' || Array.isArray(body.inputs))
        malformed.push({ field: 'inputs', reason: 'must be an object keyed by input id' });
      if (body.webhook !== undefined && (typeof body.webhook !== 'string' || encodingOf(body.webhook) !== 'url'))
        malformed.push({ field: 'webhook', reason: 'must be an HTTPS URL' });
      if (malformed.length) return sendInvalid(reply, malformed);
      const inputs = body.inputs as Record<string, unknown>;
      const bad = checkInputs(a, inputs, (id) => state.tasks.get(id)?.key === caller.key);
      if (bad.length) return sendInvalid(reply, bad, VALIDATION_MESSAGE, 422);
      const text = a.inputs
        .filter((i) => i.type === 'text')
        .map((i) => String(inputs[i.id] ?? ''))
        .join(' ');
      const task: Task = {
        id: state.tasks.newId(),
        toolId: `app:${a.sqid}`,
        listPath: RUNS_PATH,
        key: caller.key,
        userId: caller.userId,
        createdAt: state.now(),
        durationMs: state.faults.current.taskDurationMs,
        fails: state.faults.failsNext(),
        params: {
          prompt: `${a.name}: ${text} ${String(inputs.style ?? '')}`.trim(),
          resolution: '1k',
          aspect_ratio: 'square_1_1',
        },
        resultCount: typeof inputs.variations === 'number' ? inputs.variations : 1,
        resultKind: a.output,
        ttlHours: APP_RESULT_TTL_HOURS,
        reached: 0,
        ...(state.faults.current.appRunEnding === 'completed' ? {} : { appEnding: state.faults.current.appRunEnding }),
      };
      state.tasks.add(task);
      state.stats.create(task.toolId, caller.key);
      if (typeof body.webhook === 'string') state.webhooks.watch(task, body.webhook, runView);
      await holdAnswer(() => state.faults.current.appRunAnswerDelayMs);
      return reply.code(202).send({ status: RUN_STATUS.CREATED, workflow_run_identifier: task.id });
    });
    app.get(`${base}/runs/:runId`, async (req: FastifyRequest<{ Params: { runId: string } }>, reply) => {
      if (!served(req, reply)) return reply;
      const t = state.tasks.get(req.params.runId);
      if (!t || t.listPath !== RUNS_PATH || t.key !== state.callerOf(req).key)
        return sendError(reply, 404, 'Run not found');
      return runView(t, statusAt(t, state.now()));
    });
  }
}
