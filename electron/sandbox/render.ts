import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp, { type Sharp } from 'sharp';
import type { DiskStore } from './blob-store.ts';
import { intBetween, rngFrom, seedOf } from './rng.ts';

/** Stated limit: the upscaler's output is capped at this many pixels on its long side. */
export const UPSCALE_MAX_SIDE = 4096;

// libvips' operation cache would keep decoded inputs of thousands of tasks alive; results have
// their own small LRU (results.ts), so memory stays bounded without it.
sharp.cache(false);
/** Shapes are laid out on a grid of this long side and drawn at the size asked (viewBox), so a
 * picture is the same at any size; librsvg drawing 4K costs less than drawing small and resizing. */
const DRAW_SIDE = 512;

export const RESOURCES_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'resources', 'sandbox');
export const VIDEO_ASSET = join(RESOURCES_DIR, 'sample.mp4');
export const AUDIO_ASSET = join(RESOURCES_DIR, 'sample.mp3');

export type ImageOp = 'generate' | 'skin' | 'camera' | 'upscale' | 'edit';

/** What each image tool does to produce its result; tools not listed generate from the prompt. */
export const IMAGE_OPS: Record<string, ImageOp> = {
  'skin-creative': 'skin',
  'skin-faithful': 'skin',
  'skin-flexible': 'skin',
  'change-camera': 'camera',
  'upscaler-precision': 'upscale',
  editor: 'edit',
  'quality-edit': 'edit',
  'image50-edit': 'edit',
};

/** The image format a task asked for (`output_format`): JPEG or WebP where named, else PNG. */
export function imageFormatOf(params: Record<string, unknown>): 'png' | 'jpeg' | 'webp' {
  return params.output_format === 'jpeg' || params.output_format === 'webp' ? params.output_format : 'png';
}

const RESOLUTION_SIDE: Record<string, number> = { '1k': 1024, '1.5k': 1536, '2k': 2048, '4k': 4096 };

/** `widescreen_16_9`, `16:9` or `smartphone_vertical_9_20` -> width/height ratio. */
export function aspectRatioOf(name: unknown): number {
  const m = typeof name === 'string' ? /(\d+)[_:](\d+)$/.exec(name) : null;
  return m ? Number(m[1]) / Number(m[2]) : 1;
}

/** The output size a generator was asked for: explicit width/height, else resolution x aspect. */
export function generatedSize(params: Record<string, unknown>): { width: number; height: number } {
  if (typeof params.width === 'number' && typeof params.height === 'number')
    return { width: params.width, height: params.height };
  const side = RESOLUTION_SIDE[String(params.resolution)] ?? 1024;
  const r = aspectRatioOf(params.aspect_ratio);
  return r >= 1 ? { width: side, height: Math.round(side / r) } : { width: Math.round(side * r), height: side };
}

function hsl(h: number, s: number, l: number): string {
  return `hsl(${Math.round(h) % 360},${s}%,${l}%)`;
}

/** A deterministic picture of a prompt: palette from its words, shapes from prompt + seed. */
export async function drawPrompt(prompt: string, seed: number, width: number, height: number): Promise<Sharp> {
  const rng = rngFrom(seedOf(prompt, seed));
  const words = prompt.toLowerCase().split(/\W+/).filter(Boolean);
  const hues = (words.length ? words : ['empty']).slice(0, 6).map((w) => seedOf(w) % 360);
  const scale = DRAW_SIDE / Math.max(width, height);
  const w = Math.max(8, Math.round(width * scale));
  const h = Math.max(8, Math.round(height * scale));
  const shapes: string[] = [];
  for (let i = 0; i < 14; i++) {
    const hue = hues[i % hues.length] + intBetween(rng, -20, 20);
    const x = Math.round(rng() * w);
    const y = Math.round(rng() * h);
    const r = Math.round((0.05 + rng() * 0.25) * Math.max(w, h));
    shapes.push(
      rng() < 0.6
        ? `<circle cx="${x}" cy="${y}" r="${r}" fill="${hsl(hue, 70, 55)}" fill-opacity="0.55"/>`
        : `<rect x="${x - r}" y="${y - r / 2}" width="${2 * r}" height="${r}" transform="rotate(${intBetween(rng, 0, 90)} ${x} ${y})" fill="${hsl(hue, 60, 45)}" fill-opacity="0.5"/>`,
    );
  }
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${w} ${h}" preserveAspectRatio="none">
    <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="${hsl(hues[0], 55, 25)}"/><stop offset="1" stop-color="${hsl(hues[hues.length - 1] + 40, 65, 70)}"/></linearGradient></defs>
    <rect width="100%" height="100%" fill="url(#g)"/>${shapes.join('')}</svg>`;
  return sharp(Buffer.from(svg));
}

type Params = Record<string, unknown>;
function num(v: unknown, d: number): number {
  if (typeof v === 'number') return v;
  return typeof v === 'string' && v !== '' ? Number(v) : d;
}

async function loadInput(ref: unknown, disk: DiskStore): Promise<Buffer> {
  const f = typeof ref === 'string' ? disk.get(ref) : undefined;
  if (!f) throw new Error('input is gone');
  return readFile(f.path);
}

/** Skin tools: a smoothing/colour filter whose strength follows the sliders and the preset. */
function skin(img: Sharp, toolId: string, p: Params): Sharp {
  if (toolId === 'skin-faithful') img = img.blur(0.3 + (100 - num(p.skin_detail, 80)) / 40);
  else if (toolId === 'skin-creative') img = img.blur(1.2).modulate({ saturation: 1.25, brightness: 1.04 });
  else {
    const preset = String(p.optimized_for ?? 'enhance_skin');
    if (preset === 'enhance_skin') img = img.blur(0.8).modulate({ saturation: 1.05 });
    if (preset === 'improve_lighting') img = img.normalise().gamma(1.8);
    if (preset === 'enhance_everything') img = img.normalise().modulate({ saturation: 1.2 });
    if (preset === 'transform_to_real') img = img.modulate({ saturation: 0.9 }).sharpen({ sigma: 1 });
    if (preset === 'no_make_up') img = img.modulate({ saturation: 0.7 });
  }
  const sharpen = num(p.sharpen, 0);
  if (sharpen > 0) img = img.sharpen({ sigma: 0.5 + sharpen / 50 });
  return img;
}

/** Change camera: turning round mirrors, angles shear, zoom crops in (or pads out) about the centre. */
async function camera(bytes: Buffer, p: Params): Promise<Sharp> {
  // The picture as shown: a phone photo is stored landscape with an EXIF rotation.
  const { width: W, height: H } = (await sharp(bytes).metadata()).autoOrient;
  const hRad = (num(p.horizontal_angle, 0) * Math.PI) / 180;
  const v = num(p.vertical_angle, 0);
  const zoom = num(p.zoom, 5);
  let img = sharp(bytes).rotate();
  if (Math.cos(hRad) < 0) img = img.flop();
  const sx = Math.sin(hRad) * 0.3;
  const sy = v / 300;
  if (sx !== 0 || sy !== 0)
    img = img.affine(
      [
        [1, sx],
        [sy, 1],
      ],
      { background: '#202020' },
    );
  let buf = await img.png().toBuffer();
  const turned = await sharp(buf).metadata();
  const factor = 0.75 + zoom * 0.05; // zoom 5 keeps the framing
  const cw = Math.max(1, Math.min(turned.width!, Math.round(turned.width! / factor)));
  const ch = Math.max(1, Math.min(turned.height!, Math.round(turned.height! / factor)));
  buf = await sharp(buf)
    .extract({
      left: Math.floor((turned.width! - cw) / 2),
      top: Math.floor((turned.height! - ch) / 2),
      width: cw,
      height: ch,
    })
    .png()
    .toBuffer();
  const fit = factor < 1 ? 'contain' : 'cover';
  return sharp(buf).resize(W, H, { fit, background: '#202020' });
}

async function upscale(bytes: Buffer, p: Params): Promise<Sharp> {
  // Sizes as shown (after the EXIF rotation that .rotate() applies), or a portrait photo is stretched to landscape.
  const meta = (await sharp(bytes).metadata()).autoOrient;
  const factor = num(p.scale_factor, 2);
  const cap = Math.min(factor, UPSCALE_MAX_SIDE / Math.max(meta.width!, meta.height!));
  const s = Math.max(1, cap);
  let img = sharp(bytes).rotate();
  if (p.flavor === 'photo_denoiser') img = img.median(3);
  img = img.resize(Math.round(meta.width! * s), Math.round(meta.height! * s), { kernel: 'lanczos3', fit: 'fill' });
  if (num(p.sharpen, 7) > 0) img = img.sharpen({ sigma: 0.5 + num(p.sharpen, 7) / 50 });
  return img;
}

export interface Rendered {
  bytes: Buffer;
  contentType: string;
}

/** The image result `index` of an image task, rendered now. */
export async function renderImage(
  toolId: string,
  taskId: string,
  params: Params,
  index: number,
  disk: DiskStore,
  inputImage?: string,
): Promise<Rendered> {
  const op = IMAGE_OPS[toolId] ?? 'generate';
  const format = imageFormatOf(params);
  let img: Sharp;
  if (op === 'skin') img = skin(sharp(await loadInput(params.image, disk)).rotate(), toolId, params);
  else if (op === 'camera') img = await camera(await loadInput(params.image, disk), params);
  else if (op === 'upscale') img = await upscale(await loadInput(params.image, disk), params);
  else if (op === 'edit') {
    const refs = params.reference_images as unknown[];
    const { width, height } = generatedSize(params);
    // Recoloured no larger than the reference, then enlarged: the LCh round trip costs more than the resize at 4K.
    const { data, info } = await sharp(await loadInput(refs[index % refs.length], disk))
      .rotate()
      .resize(width, height, { fit: 'cover', withoutEnlargement: true })
      .modulate({ hue: seedOf(params.prompt, index) % 90, saturation: 1.1 })
      .raw()
      .toBuffer({ resolveWithObject: true });
    img = sharp(data, { raw: info }).resize(width, height, { fit: 'cover' });
  } else if (inputImage) {
    // A tool the catalogue does not name, with an image input: that image, recoloured by prompt and index.
    img = sharp(await loadInput(inputImage, disk))
      .rotate()
      .modulate({ hue: seedOf(params.prompt, index) % 90, saturation: 1.1 });
  } else {
    const { width, height } = generatedSize(params);
    const seed = typeof params.seed === 'number' ? params.seed : seedOf(taskId);
    img = await drawPrompt(String(params.prompt ?? ''), seed + index, width, height);
  }
  const encoded = {
    jpeg: () => img.jpeg({ quality: 85 }),
    // libwebp's least effort: a third of the default's CPU at 4K, a somewhat larger file.
    webp: () => img.webp({ quality: 85, effort: 0 }),
    png: () => img.png({ compressionLevel: 1, adaptiveFiltering: false }),
  }[format]();
  const bytes = await encoded.toBuffer();
  return { bytes, contentType: `image/${format}` };
}

/** Improve-prompt: the prompt with the detail a generator of its type does well with, deterministic. */
export function improvePrompt(prompt: string, type: unknown, language: unknown): string {
  const base = prompt.trim().replace(/[.\s]+$/, '') || 'An untitled scene';
  const detail =
    type === 'video'
      ? 'smooth camera motion, natural pacing, consistent lighting across the shot, cinematic framing'
      : 'balanced composition, soft natural light, rich detail, sharp focus, high resolution';
  const lang = typeof language === 'string' && language !== 'en' ? ` (written for language "${language}")` : '';
  return `${base}, ${detail}${lang}.`;
}

const BRIGHTNESS = ['very dark', 'dim', 'softly lit', 'bright', 'high-key'];
const COLOR_NAMES: [number, string][] = [
  [15, 'red'],
  [45, 'orange'],
  [70, 'yellow'],
  [160, 'green'],
  [200, 'teal'],
  [260, 'blue'],
  [300, 'purple'],
  [345, 'magenta'],
  [360, 'red'],
];

/** Image-to-prompt: a prompt derived from what the image measurably is (size, tone, colour). */
export async function describeImage(ref: string, disk: DiskStore): Promise<string> {
  const bytes = await loadInput(ref, disk);
  const meta = await sharp(bytes).metadata();
  const { width, height } = meta.autoOrient;
  // Measured on 8-bit sRGB without alpha: the raw channels of a 16-bit PNG run to 65535, a CMYK
  // JPEG's are ink (C, M, Y), and a grey image with alpha has two (grey, alpha). stats() reads the
  // input, not the pipeline, so the normalised pixels are materialised first.
  const { data, info } = await sharp(bytes)
    .removeAlpha()
    .toColourspace('srgb')
    .raw()
    .toBuffer({ resolveWithObject: true });
  const { dominant, channels } = await sharp(data, {
    raw: { width: info.width, height: info.height, channels: info.channels },
  }).stats();
  const { r, g, b } = dominant;
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  let hue = 0;
  if (max !== min) {
    if (max === r) hue = (60 * ((g - b) / (max - min)) + 360) % 360;
    else if (max === g) hue = 60 * ((b - r) / (max - min)) + 120;
    else hue = 60 * ((r - g) / (max - min)) + 240;
  }
  const colour = colourName(min, max, hue);
  const mean = channels.slice(0, 3).reduce((s, c) => s + c.mean, 0) / 3;
  const contrast = channels.slice(0, 3).reduce((s, c) => s + c.stdev, 0) / 3;
  let orientation = 'square';
  if (width > height * 1.1) orientation = 'landscape';
  else if (height > width * 1.1) orientation = 'portrait';
  return (
    `A ${BRIGHTNESS[Math.min(4, Math.floor(mean / 52))]} ${orientation} image (${width}x${height}) dominated by ${colour} tones, ` +
    `${contrastWord(contrast)} contrast, ${meta.hasAlpha ? 'with transparency, ' : ''}photographic composition, detailed, sharp focus`
  );
}

function colourName(min: number, max: number, hue: number): string {
  if (max - min >= 20) return COLOR_NAMES.find(([limit]) => hue <= limit)![1];
  // Too little saturation for a hue: named by lightness.
  if (max < 80) return 'black';
  return max > 200 ? 'white' : 'grey';
}

function contrastWord(contrast: number): string {
  if (contrast > 60) return 'high';
  return contrast > 30 ? 'moderate' : 'low';
}
