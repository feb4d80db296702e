import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { encodingOf } from '../../shared/catalogue/index.ts';
import { charCount } from '../../shared/catalogue/chars.ts';
import { sendError, sendInvalid, type InvalidParam } from './errors.ts';
import { resultPath } from './results.ts';
import { UUID_RE } from './rng.ts';
import type { SandboxState } from './server.ts';
import { statusAt, type Task, type TaskStatus } from './tasks.ts';
import { APP_RESULT_TTL_HOURS } from './results.ts';

type AppInput =
  | { id: string; type: 'creation'; label: string; required: boolean }
  | { id: string; type: 'text'; label: string; required: boolean; max_length: number }
  | { id: string; type: 'number'; label: string; required: boolean; min: number; max: number; default: number }
  | { id: string; type: 'select'; label: string; required: boolean; options: string[]; default: string };

interface App { id: string; name: string; description: string; output: 'image' | 'video' | 'audio'; tool_metadata: { total_cost: number }; inputs: AppInput[] }

/** A few apps whose inputs, together, cover all four input types of the spec. */
export const APPS: readonly App[] = [
  {
    id: 'pS7kQ2xa', name: 'Product shot studio', description: 'Places a product photo in a generated scene.', output: 'image', tool_metadata: { total_cost: 12 },
    inputs: [
      { id: 'product_image', type: 'creation', label: 'Product photo', required: true },
      { id: 'scene', type: 'text', label: 'Scene description', required: true, max_length: 2000 },
      { id: 'variations', type: 'number', label: 'Variations', required: false, min: 1, max: 4, default: 1 },
      { id: 'style', type: 'select', label: 'Style', required: false, options: ['studio', 'outdoor', 'minimal'], default: 'studio' },
    ],
  },
  {
    id: 'tV3mW9rb', name: 'Teaser video', description: 'A short teaser from a key visual and a tagline.', output: 'video', tool_metadata: { total_cost: 40 },
    inputs: [
      { id: 'key_visual', type: 'creation', label: 'Key visual', required: true },
      { id: 'tagline', type: 'text', label: 'Tagline', required: true, max_length: 200 },
      { id: 'format', type: 'select', label: 'Format', required: false, options: ['widescreen_16_9', 'social_story_9_16'], default: 'widescreen_16_9' },
      { id: 'duration', type: 'number', label: 'Duration (s)', required: false, min: 4, max: 15, default: 6 },
    ],
  },
  {
    id: 'jM4nX8sc', name: 'Jingle maker', description: 'A short jingle from a brief.', output: 'audio', tool_metadata: { total_cost: 8 },
    inputs: [
      { id: 'brief', type: 'text', label: 'Brief', required: true, max_length: 1000 },
      { id: 'mood', type: 'select', label: 'Mood', required: false, options: ['upbeat', 'calm', 'epic'], default: 'upbeat' },
      { id: 'length_seconds', type: 'number', label: 'Length (s)', required: false, min: 10, max: 60, default: 15 },
    ],
  },
];

/** Run statuses are lowercase (api-notes); `completed_with_errors` and `cancelled` come from the run's ending (faults). */
export const RUN_STATUS: Record<TaskStatus, string> = { CREATED: 'pending', IN_PROGRESS: 'running', COMPLETED: 'completed', FAILED: 'failed' };

/** A run that ends with errors still delivers what its other steps made: one result fewer, at least one. */
function deliveredResults(t: Task): number {
  if (t.appEnding === 'cancelled') return 0;
  return t.appEnding === 'completed_with_errors' ? Math.max(1, t.resultCount - 1) : t.resultCount;
}
const RUNS_PATH = '/v1/ai/apps/runs';

/**
 * What each app costs on this server now. The service may reprice an app between the moment a
 * client reads it and the moment its user confirms a run, or serve one without a cost: a control
 * route sets either, so clients can be tested against both.
 */
export class AppCosts {
  private readonly changed = new Map<string, number | null>();

  /** false: no such app. null: the app is served without `tool_metadata.total_cost`. */
  set(appId: string, cost: number | null): boolean {
    if (!APPS.some((a) => a.id === appId)) return false;
    this.changed.set(appId, cost);
    return true;
  }

  reset(): void {
    this.changed.clear();
  }

  /** The app as served, with its cost now. */
  served<T extends Pick<App, 'id' | 'tool_metadata'>>(a: T): Omit<T, 'tool_metadata'> & { tool_metadata: { total_cost?: number } } {
    if (!this.changed.has(a.id)) return a;
    const cost = this.changed.get(a.id);
    return { ...a, tool_metadata: cost === null ? {} : { total_cost: cost! } };
  }
}

function checkInputs(app: App, inputs: unknown, callerTasks: (id: string) => boolean): InvalidParam[] {
  if (inputs === null || typeof inputs !== 'object' || Array.isArray(inputs)) return [{ field: 'inputs', reason: 'must be an object keyed by input id' }];
  const values = inputs as Record<string, unknown>;
  const bad: InvalidParam[] = [];
  for (const k of Object.keys(values)) if (!app.inputs.some((i) => i.id === k)) bad.push({ field: `inputs.${k}`, reason: `is not an input of app ${app.id}` });
  for (const input of app.inputs) {
    const v = values[input.id];
    const field = `inputs.${input.id}`;
    if (v === undefined || v === null || v === '') {
      if (input.required) bad.push({ field, reason: 'is required' });
      continue;
    }
    if (input.type === 'creation') {
      const ok = typeof v === 'string' && (encodingOf(v) !== null || (UUID_RE.test(v) && callerTasks(v)));
      if (!ok) bad.push({ field, reason: 'must be an image URL, a base64-encoded image or the id of one of your creations' });
    } else if (input.type === 'text') {
      if (typeof v !== 'string') bad.push({ field, reason: 'must be text' });
      else if (charCount(v) > input.max_length) bad.push({ field, reason: `must be at most ${input.max_length} characters` });
    } else if (input.type === 'number') {
      if (typeof v !== 'number' || !Number.isFinite(v)) bad.push({ field, reason: 'must be a number' });
      else if (v < input.min || v > input.max) bad.push({ field, reason: `must be from ${input.min} to ${input.max}` });
    } else if (!input.options.includes(String(v))) bad.push({ field, reason: `must be one of ${input.options.join(', ')}` });
  }
  return bad;
}

export function registerApps(app: FastifyInstance, state: SandboxState): void {
  const enterpriseOnly = (req: FastifyRequest, reply: FastifyReply): boolean => {
    if (state.callerOf(req).plan === 'enterprise') return true;
    sendError(reply, 403, 'Workflow apps are available to Enterprise customers only.');
    return false;
  };
  const runView = (t: Task, status: TaskStatus) => {
    const ended = status === 'COMPLETED' && t.appEnding ? t.appEnding : RUN_STATUS[status];
    return {
      workflow_run_identifier: t.id,
      app_id: t.toolId.slice(4),
      status: ended,
      created_at: new Date(t.createdAt).toISOString(),
      results: status === 'COMPLETED' ? Array.from({ length: deliveredResults(t) }, (_, i) => state.baseUrl() + resultPath(t, i, t.resultKind ?? 'image')) : [],
      ...(status === 'FAILED' ? { error_message: state.faults.current.appRunFailureMessage ?? 'A step of the workflow failed (injected by the Sandbox failure rate).' } : {}),
      ...(ended === 'completed_with_errors' ? { error_message: 'One step of the workflow failed (injected by the Sandbox); the other results are ready.' } : {}),
    };
  };

  app.get('/v1/ai/apps', async (req, reply) => {
    if (!enterpriseOnly(req, reply)) return reply;
    return { data: APPS.map(({ id, name, description, output, tool_metadata }) => state.appCosts.served({ id, name, description, output, tool_metadata })) };
  });
  app.get('/v1/ai/apps/:appId', async (req: FastifyRequest<{ Params: { appId: string } }>, reply) => {
    if (!enterpriseOnly(req, reply)) return reply;
    const hold = state.faults.current.appDetailDelayMs;
    if (hold > 0) await new Promise((res) => setTimeout(res, hold));
    const a = APPS.find((x) => x.id === req.params.appId);
    return a ? { data: state.appCosts.served(a) } : sendError(reply, 404, 'App not found');
  });
  app.post('/v1/ai/apps/:appId/run', async (req: FastifyRequest<{ Params: { appId: string } }>, reply) => {
    if (!enterpriseOnly(req, reply)) return reply;
    const a = APPS.find((x) => x.id === req.params.appId);
    if (!a) return sendError(reply, 404, 'App not found');
    const caller = state.callerOf(req);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const bad = checkInputs(a, body.inputs, (id) => state.tasks.get(id)?.key === caller.key);
    if (body.webhook !== undefined && (typeof body.webhook !== 'string' || encodingOf(body.webhook) !== 'url')) bad.push({ field: 'webhook', reason: 'must be an HTTPS URL' });
    if (bad.length) return sendInvalid(reply, bad);
    const inputs = body.inputs as Record<string, unknown>;
    const text = a.inputs.filter((i) => i.type === 'text').map((i) => String(inputs[i.id] ?? '')).join(' ');
    const task: Task = {
      id: state.tasks.newId(), toolId: `app:${a.id}`, listPath: RUNS_PATH, key: caller.key, userId: caller.userId,
      createdAt: state.now(), durationMs: state.faults.current.taskDurationMs, fails: state.faults.failsNext(),
      params: { prompt: `${a.name}: ${text} ${String(inputs.style ?? '')}`.trim(), resolution: '1k', aspect_ratio: 'square_1_1' },
      resultCount: typeof inputs.variations === 'number' ? inputs.variations : 1,
      resultKind: a.output, ttlHours: APP_RESULT_TTL_HOURS, reached: 0,
      ...(state.faults.current.appRunEnding === 'completed' ? {} : { appEnding: state.faults.current.appRunEnding }),
    };
    state.tasks.add(task);
    state.stats.create(task.toolId, caller.key);
    if (typeof body.webhook === 'string') state.webhooks.watch(task, body.webhook, runView);
    const hold = state.faults.current.appRunAnswerDelayMs;
    if (hold > 0) await new Promise((res) => setTimeout(res, hold));
    return reply.code(202).send({ status: RUN_STATUS.CREATED, workflow_run_identifier: task.id });
  });
  app.get('/v1/ai/apps/runs/:runId', async (req: FastifyRequest<{ Params: { runId: string } }>, reply) => {
    if (!enterpriseOnly(req, reply)) return reply;
    const t = state.tasks.get(req.params.runId);
    if (!t || t.listPath !== RUNS_PATH || t.key !== state.callerOf(req).key) return sendError(reply, 404, 'Run not found');
    return runView(t, statusAt(t, state.now()));
  });
}
