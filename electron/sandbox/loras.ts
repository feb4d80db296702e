import type { FastifyInstance, FastifyRequest } from 'fastify';
import { bufferSource, sendBytes } from './download.ts';
import { drawPrompt } from './render.ts';
import type { SandboxState } from './server.ts';
import { sendError, type InvalidParam } from './errors.ts';

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

/**
 * A generator's `styling` applies LoRAs of the caller's catalogue (the spec: an id "from the LoRA
 * catalogue"; `customs` are the caller's own): styles by name, characters by id. One it does not
 * list (a typo, another user's custom LoRA) is a 400 naming the entry, not a silent plain render.
 */
export function stylingProblems(key: string, styling: unknown, field: string): InvalidParam[] {
  const own = [...DEFAULT_LORAS, ...(CUSTOM_LORAS[key] ?? [])];
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
  app.get('/v1/ai/loras', async (req) => {
    const caller = state.callerOf(req);
    // The declared schema's shape (its example shows one object instead; clients read both).
    return {
      data: [
        {
          default: DEFAULT_LORAS.map((l) => view(l, false)),
          customs: (CUSTOM_LORAS[caller.key] ?? []).map((l) => view(l, true)),
        },
      ],
    };
  });
  const previews = new Map<number, Buffer>();
  // Previews are public URLs like result URLs (no key header), small, rendered once.
  app.get('/previews/loras/:file', async (req: FastifyRequest<{ Params: { file: string } }>, reply) => {
    const id = Number(/^(\d+)\.png$/.exec(req.params.file)?.[1]);
    const lora = [...DEFAULT_LORAS, ...Object.values(CUSTOM_LORAS).flat()].find((l) => l.id === id);
    if (!lora) return sendError(reply, 404, 'No such preview');
    let png = previews.get(id);
    if (!png)
      previews.set(id, (png = await (await drawPrompt(`${lora.name} ${lora.type}`, id, 256, 256)).png().toBuffer()));
    sendBytes(req, reply, bufferSource(png, 'image/png'), null);
  });
}
