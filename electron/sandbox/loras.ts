import type { FastifyInstance, FastifyRequest } from 'fastify';
import { findOperation, requestProblems } from '../../shared/official/index.ts';
import { bufferSource, sendBytes } from './download.ts';
import { drawPrompt } from './render.ts';
import type { SandboxState } from './server.ts';
import { InvalidParamsError, sendError, sendInvalid, type InvalidParam } from './errors.ts';
import { resolveSchemaMedia } from './schema-media.ts';
import { statusAt, type Task, type TaskStatus } from './tasks.ts';

interface LoraSeed {
  id: number;
  name: string;
  description: string;
  category: string;
  type: 'style' | 'character' | 'product';
  scale: number;
}

const DEFAULT_LORAS: readonly LoraSeed[] = [
  {
    id: 1,
    name: 'Watercolor',
    description: 'Soft washes and paper texture.',
    category: 'illustration',
    type: 'style',
    scale: 0.8,
  },
  {
    id: 2,
    name: 'Film noir',
    description: 'High-contrast black and white.',
    category: 'photography',
    type: 'style',
    scale: 1,
  },
  { id: 3, name: 'Isometric 3D', description: 'Clean isometric renders.', category: '3d', type: 'style', scale: 0.9 },
  { id: 4, name: 'Vintage poster', description: '', category: 'illustration', type: 'style', scale: 0.7 },
  {
    id: 5,
    name: 'Explorer Mara',
    description: 'A recurring adventurer character.',
    category: 'people',
    type: 'character',
    scale: 1,
  },
  {
    id: 6,
    name: 'Robot Pip',
    description: 'A small friendly robot.',
    category: 'characters',
    type: 'character',
    scale: 0.85,
  },
  {
    id: 7,
    name: 'Ceramic mug',
    description: 'Product shots of a matte mug.',
    category: 'products',
    type: 'product',
    scale: 1,
  },
  {
    id: 8,
    name: 'Sneaker line',
    description: 'Consistent sneaker renders.',
    category: 'products',
    type: 'product',
    scale: 0.95,
  },
];

/** Custom LoRAs belong to one caller (the spec: `customs` are the caller's own). */
const CUSTOM_LORAS: Record<string, readonly LoraSeed[]> = {
  'sandbox-owner': [
    { id: 1001, name: 'Brand palette', description: 'Our brand colours.', category: 'custom', type: 'style', scale: 1 },
    { id: 1002, name: 'Mascot Ollie', description: '', category: 'custom', type: 'character', scale: 0.9 },
  ],
  'sandbox-admin': [
    {
      id: 1101,
      name: 'Store interior',
      description: 'Flagship store look.',
      category: 'custom',
      type: 'style',
      scale: 0.8,
    },
  ],
};

export const allLoraIds = (): number[] => [...DEFAULT_LORAS, ...Object.values(CUSTOM_LORAS).flat()].map((l) => l.id);

/** A LoRA a caller trained here (POST /v1/ai/loras/styles or characters): listed among its customs, usable once completed. */
interface Trained extends LoraSeed {
  quality: string;
  task: Task;
}

/** What `training.status` says while a LoRA trains: the task's status in lower case ("completed" as the catalogue shows). */
const TRAINING_STATUS: Record<TaskStatus, string> = {
  CREATED: 'created',
  IN_PROGRESS: 'in_progress',
  COMPLETED: 'completed',
  FAILED: 'failed',
};

/** The LoRAs trained on this Sandbox, per caller; ids from 5001 on, past every seeded one. */
export class TrainedLoras {
  private readonly byKey = new Map<string, Trained[]>();
  private nextId = 5001;

  of(key: string): readonly Trained[] {
    return this.byKey.get(key) ?? [];
  }

  all(): Trained[] {
    return [...this.byKey.values()].flat();
  }

  add(key: string, seed: Omit<Trained, 'id'>): Trained {
    const t = { ...seed, id: this.nextId++ };
    this.byKey.set(key, [...this.of(key), t]);
    return t;
  }

  /** The caller's trained LoRAs that finished training: the ones a generator may name. */
  usable(key: string, now: number): Trained[] {
    return this.of(key).filter((t) => statusAt(t.task, now) === 'COMPLETED');
  }

  reset(): void {
    this.byKey.clear();
  }

  /** A generator's `styling` checked against the caller's catalogue, its trained LoRAs included. */
  stylingProblems(key: string, styling: unknown, now: number): InvalidParam[] {
    return stylingProblems(key, styling, 'styling', this.usable(key, now));
  }
}

/**
 * A generator's `styling` applies LoRAs of the caller's catalogue (the spec: an id "from the LoRA
 * catalogue"; `customs` are the caller's own): styles by name, characters by id. One it does not
 * list (a typo, another user's custom LoRA) is a 400 naming the entry, not a silent plain render.
 */
export function stylingProblems(
  key: string,
  styling: unknown,
  field: string,
  trained: readonly LoraSeed[] = [],
): InvalidParam[] {
  const own = [...DEFAULT_LORAS, ...(CUSTOM_LORAS[key] ?? []), ...trained];
  const s = (styling ?? {}) as { styles?: { name: string }[]; characters?: { id: string | number }[] };
  const bad: InvalidParam[] = [];
  s.styles?.forEach((x, i) => {
    if (!own.some((l) => l.name === x.name))
      bad.push({
        field: `${field}.styles.${i}.name`,
        reason: `"${x.name}" is not a LoRA of your catalogue (GET /v1/ai/loras)`,
      });
  });
  s.characters?.forEach((x, i) => {
    if (!own.some((l) => String(l.id) === String(x.id)))
      bad.push({
        field: `${field}.characters.${i}.id`,
        reason: `${x.id} is not the id of a LoRA of your catalogue (GET /v1/ai/loras)`,
      });
  });
  return bad;
}

const TRAINING_PATHS = { style: '/v1/ai/loras/styles', character: '/v1/ai/loras/characters' } as const;

/**
 * Training a style or character LoRA: the body is checked against the reference's operation, each
 * training image fetched and read as an image; the answer is the task (`{data: {task_id, status,
 * generated}}`), and the LoRA is listed among the caller's customs at once, its `training.status`
 * following the task ("check the status of the training calling v1/ai/loras", the description says).
 */
function registerTraining(app: FastifyInstance, state: SandboxState): void {
  for (const [type, path] of Object.entries(TRAINING_PATHS) as [Trained['type'], string][]) {
    const op = findOperation('POST', path);
    if (!op) throw new Error(`the reference has no POST ${path}`);
    app.post(path, async (req, reply) => {
      const caller = state.callerOf(req);
      const body = req.body;
      if (body === null || typeof body !== 'object' || Array.isArray(body))
        return sendInvalid(reply, [{ field: 'body', reason: 'must be a JSON object' }]);
      const problems = requestProblems(op, body);
      if (problems.length) return sendInvalid(reply, problems);
      const b = body as { name: string; description?: string; quality: string };
      const own = [...(CUSTOM_LORAS[caller.key] ?? []), ...state.loras.of(caller.key)];
      if (own.some((l) => l.name === b.name))
        return sendInvalid(reply, [{ field: 'name', reason: `"${b.name}" is already the name of one of your LoRAs` }]);
      try {
        await resolveSchemaMedia(op, body as Record<string, unknown>, state.disk);
      } catch (err) {
        if (err instanceof InvalidParamsError) return sendInvalid(reply, err.params);
        throw err;
      }
      const task: Task = {
        id: state.tasks.newId(),
        toolId: `lora:${type}`,
        listPath: '/v1/ai/loras',
        key: caller.key,
        userId: caller.userId,
        createdAt: state.now(),
        durationMs: state.faults.current.taskDurationMs,
        fails: state.faults.failsNext(),
        params: {},
        resultCount: 0,
        resultKind: 'image',
        reached: 0,
      };
      state.loras.add(caller.key, {
        name: b.name,
        description: b.description ?? '',
        category: 'custom',
        type,
        scale: 1,
        quality: b.quality,
        task,
      });
      state.stats.create(task.toolId, caller.key);
      return reply.code(200).send({ data: { task_id: task.id, status: 'CREATED', generated: [] } });
    });
  }
}

export function registerLoras(app: FastifyInstance, state: SandboxState): void {
  const view = (l: LoraSeed, custom: boolean) => ({
    id: l.id,
    name: l.name,
    description: l.description,
    category: l.category,
    type: l.type,
    preview: `${state.baseUrl()}/previews/loras/${l.id}.png`,
    training: { status: 'completed', defaultScale: l.scale, ...(custom ? { quality: null } : {}) },
  });
  const trainedView = (t: Trained) => ({
    ...view(t, true),
    training: { status: TRAINING_STATUS[statusAt(t.task, state.now())], defaultScale: t.scale, quality: t.quality },
  });
  app.get('/v1/ai/loras', async (req) => {
    const caller = state.callerOf(req);
    // The declared schema's shape (its example shows one object instead; clients read both).
    return {
      data: [
        {
          default: DEFAULT_LORAS.map((l) => view(l, false)),
          customs: [
            ...(CUSTOM_LORAS[caller.key] ?? []).map((l) => view(l, true)),
            ...state.loras.of(caller.key).map(trainedView),
          ],
        },
      ],
    };
  });
  registerTraining(app, state);
  const previews = new Map<number, Buffer>();
  // Previews are public URLs like result URLs (no key header), small, rendered once.
  app.get('/previews/loras/:file', async (req: FastifyRequest<{ Params: { file: string } }>, reply) => {
    const id = Number(/^(\d+)\.png$/.exec(req.params.file)?.[1]);
    const lora = [...DEFAULT_LORAS, ...Object.values(CUSTOM_LORAS).flat(), ...state.loras.all()].find(
      (l) => l.id === id,
    );
    if (!lora) return sendError(reply, 404, 'No such preview');
    let png = previews.get(id);
    if (!png)
      previews.set(id, (png = await (await drawPrompt(`${lora.name} ${lora.type}`, id, 256, 256)).png().toBuffer()));
    sendBytes(req, reply, bufferSource(png, 'image/png'), null);
  });
}
