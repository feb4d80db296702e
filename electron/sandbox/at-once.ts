import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import sharp from 'sharp';
import type { DiskStore } from './blob-store.ts';
import { bufferSource, sendBytes } from './download.ts';
import { InvalidParamsError, sendError } from './errors.ts';
import type { FaultState } from './faults.ts';
import { mediaBytes, storeImage } from './media-input.ts';
import { aspectRatioOf, drawPrompt } from './render.ts';
import { seedOf } from './rng.ts';

/**
 * The creates that answer their result at once (`answersAtOnce`): background removal, the
 * classifier and the classic text-to-image, each in the shape of its documented 200.
 */
export const REMOVE_BACKGROUND = '/v1/ai/beta/remove-background';
export const CLASSIFIER = '/v1/ai/classifier/image';
export const CLASSIC_TEXT_TO_IMAGE = '/v1/ai/text-to-image';

/** The description: "The URLs in the response are temporary and valid for 5 minutes only". */
export const CUTOUT_URL_TTL_MS = 5 * 60_000;
/** The description's preview: "up to 0.25 megapixels". */
export const PREVIEW_PIXELS = 250_000;
/** Cut-outs kept for download; older ones answer 404 (they would have expired long before). */
const CUTOUTS_KEPT = 200;
/** The classic text-to-image draws at this long side (the description's meta caps width and height at 1792). */
const CLASSIC_SIDE = 1024;

interface Cutout {
  createdAt: number;
  files: Map<string, { bytes: Buffer; type: string }>;
}

export interface AtOnceDeps {
  disk: DiskStore;
  faults: FaultState;
  now: () => number;
  baseUrl: () => string;
}

/** The most frequent colour of the image's border (4 bits a channel): what the cut-out takes for background. */
function borderColour(px: Buffer, width: number, height: number): [number, number, number] {
  const counts = new Map<number, { n: number; sum: [number, number, number] }>();
  const at = (x: number, y: number) => {
    const i = (y * width + x) * 4;
    const key = ((px[i] >> 4) << 8) | ((px[i + 1] >> 4) << 4) | (px[i + 2] >> 4);
    const c = counts.get(key) ?? counts.set(key, { n: 0, sum: [0, 0, 0] }).get(key)!;
    c.n++;
    for (let k = 0; k < 3; k++) c.sum[k] += px[i + k];
  };
  for (let x = 0; x < width; x++) {
    at(x, 0);
    at(x, height - 1);
  }
  for (let y = 0; y < height; y++) {
    at(0, y);
    at(width - 1, y);
  }
  const best = [...counts.values()].sort((a, b) => b.n - a.n)[0];
  return best.sum.map((s) => Math.round(s / best.n)) as [number, number, number];
}

/** A PNG with alpha: pixels near the border's colour become transparent, with a soft edge. */
export async function cutOut(bytes: Buffer): Promise<Buffer> {
  const { data, info } = await sharp(bytes).rotate().ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const [r, g, b] = borderColour(data, info.width, info.height);
  for (let i = 0; i < data.length; i += 4) {
    const d = Math.hypot(data[i] - r, data[i + 1] - g, data[i + 2] - b);
    data[i + 3] = Math.round(255 * Math.min(1, Math.max(0, (d - 40) / 60)));
  }
  return sharp(data, { raw: { width: info.width, height: info.height, channels: 4 } })
    .png()
    .toBuffer();
}

export class AtOnce {
  private readonly cutouts = new Map<string, Cutout>();
  private readonly deps: AtOnceDeps;

  constructor(deps: AtOnceDeps) {
    this.deps = deps;
  }

  /** The documented 200 of a synchronous create, for a body the reference already validated. */
  async answer(path: string, body: Record<string, unknown>): Promise<unknown> {
    if (path === REMOVE_BACKGROUND) return this.removeBackground(body);
    if (path === CLASSIFIER) return this.classify(body);
    if (path === CLASSIC_TEXT_TO_IMAGE) return this.textToImage(body);
    throw new Error(`no synchronous answer for POST ${path}`);
  }

  private async removeBackground(body: Record<string, unknown>) {
    // The schema marks nothing required; the description's words do: "an image provided via a URL".
    if (typeof body.image_url !== 'string' || body.image_url === '')
      throw new InvalidParamsError([{ field: 'image_url', reason: 'is required' }]);
    const bytes = await mediaBytes(body.image_url, 'image_url', this.deps.disk);
    let meta;
    try {
      meta = await sharp(bytes).metadata();
    } catch {
      throw new InvalidParamsError([{ field: 'image_url', reason: 'is not a readable image (JPG or PNG)' }]);
    }
    if (meta.format !== 'jpeg' && meta.format !== 'png')
      throw new InvalidParamsError([{ field: 'image_url', reason: `is ${meta.format}; the service takes JPG or PNG` }]);
    const high = await cutOut(bytes);
    const side = Math.sqrt(PREVIEW_PIXELS / Math.max(1, meta.width! * meta.height!));
    const preview =
      side < 1
        ? await sharp(high)
            .resize(Math.max(1, Math.floor(meta.width! * side)), Math.max(1, Math.floor(meta.height! * side)))
            .png()
            .toBuffer()
        : high;
    const id = createHash('sha256').update(bytes).update(String(this.deps.now())).digest('hex').slice(0, 24);
    const original = meta.format === 'png' ? 'original.png' : 'original.jpg';
    this.cutouts.set(id, {
      createdAt: this.deps.now(),
      files: new Map([
        [original, { bytes, type: `image/${meta.format}` }],
        ['high.png', { bytes: high, type: 'image/png' }],
        ['preview.png', { bytes: preview, type: 'image/png' }],
      ]),
    });
    for (const old of this.cutouts.keys()) {
      if (this.cutouts.size <= CUTOUTS_KEPT) break;
      this.cutouts.delete(old);
    }
    const url = (file: string) => `${this.deps.baseUrl()}/beta-images/${id}/${file}`;
    return {
      original: url(original),
      high_resolution: url('high.png'),
      preview: url('preview.png'),
      url: url('high.png'),
    };
  }

  private async classify(body: Record<string, unknown>) {
    const ref = await storeImage(String(body.image), 'image', this.deps.disk, () => []);
    // Deterministic per image: the same picture is always judged the same.
    const ai = Math.round((seedOf('classifier', ref) / 2 ** 32) * 1e6) / 1e6;
    const classes = [
      { class_name: 'not_ai', probability: Math.round((1 - ai) * 1e6) / 1e6 },
      { class_name: 'ai', probability: ai },
    ];
    return { data: classes.sort((a, b) => b.probability - a.probability) };
  }

  private async textToImage(body: Record<string, unknown>) {
    const prompt = String(body.prompt);
    const size = String((body.image as { size?: unknown } | undefined)?.size ?? 'square_1_1');
    const r = aspectRatioOf(size);
    const width = r >= 1 ? CLASSIC_SIDE : Math.round(CLASSIC_SIDE * r);
    const height = r >= 1 ? Math.round(CLASSIC_SIDE / r) : CLASSIC_SIDE;
    const seed = typeof body.seed === 'number' ? body.seed : seedOf(prompt) % 1_000_001;
    const count = typeof body.num_images === 'number' ? body.num_images : 1;
    const data = await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const png = await (await drawPrompt(prompt, seed + i, width, height)).png().toBuffer();
        return { base64: png.toString('base64'), has_nsfw: false };
      }),
    );
    const guidance_scale = typeof body.guidance_scale === 'number' ? body.guidance_scale : 1;
    return { data, meta: { prompt, seed, num_inference_steps: 8, guidance_scale, image: { size, width, height } } };
  }

  /** GET /beta-images/:id/:file: a cut-out's files, keyless, for five minutes. */
  serve(req: FastifyRequest<{ Params: { id: string; file: string } }>, reply: FastifyReply) {
    const c = this.cutouts.get(req.params.id);
    const f = c?.files.get(req.params.file);
    if (!c || !f) return sendError(reply, 404, 'No such image');
    if (this.deps.faults.current.expireResultUrls || this.deps.now() > c.createdAt + CUTOUT_URL_TTL_MS)
      return sendError(reply, 410, 'This URL has expired; the URLs of a background removal last 5 minutes.');
    sendBytes(req, reply, bufferSource(f.bytes, f.type), this.deps.faults.current);
  }
}
