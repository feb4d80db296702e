import { creditFigure } from './cost-words.ts';

/**
 * The app's price table: credits per create of each tool as the service publishes them, with where
 * and when each was read. The service's credit usage reports by category ("AI Image Models"), never
 * per tool, so a price cannot be learned from it: it comes from here, or from the user's own
 * (prices_own, set in Settings › Prices or `mediadesk prices set`). Where no price in credits was
 * found it says so (credits null) rather than guess. The Sandbox's own prices are
 * shared/service-limits.ts: it checks the app, so it never reads this table.
 */
export const PRICES_CHECKED = '2026-12-05';

/** How a price moves with the request: by output area (a factor squared), per image asked, or by a field's value. */
export type PriceScale =
  | { kind: 'area'; field: string; from: number }
  | { kind: 'count'; field: string }
  | { kind: 'value'; field: string; times: Record<string, number> };

export interface PriceEntry {
  tool: string;
  /** Credits per create at the reference `unit` describes; null: the service publishes none in credits. */
  credits: number | null;
  /** What one price is for, in words: "an image at ×2 from an input of about 1.2 MP". */
  unit: string;
  scales: PriceScale[];
  /** Where the price (or the lack of one) was read. */
  source: string;
  /** The day it was read, YYYY-MM-DD. */
  checked: string;
  /** What else the source says: a price in another currency, or how sure the figure is. */
  note?: string;
  /** The figure is a review's report of the service's pricing, not the service's own page. */
  reported?: boolean;
}

const PRICING_PAGE = 'https://docs.magnific.com/pricing-credit-based';
const NO_CREDITS = "the service's pricing pages give no credit price for this tool that could be read";

const unknownPrice = (tool: string, unit = 'a result', scales: PriceScale[] = []): PriceEntry => ({
  tool,
  credits: null,
  unit,
  scales,
  source: PRICING_PAGE,
  checked: PRICES_CHECKED,
  note: NO_CREDITS,
});

const images: PriceScale = { kind: 'count', field: 'num_images' };

/** Keyed by catalogue tool id; a tool not listed has no known price. */
export const PUBLISHED_PRICES: Readonly<Record<string, PriceEntry>> = Object.fromEntries(
  (
    [
      {
        tool: 'upscaler-precision',
        credits: 5,
        unit: 'an image at ×2 from about 1.2 MP',
        scales: [{ kind: 'area', field: 'scale_factor', from: 2 }],
        source:
          'https://www.bestaiweb.ai/how-to-upscale-images-with-real-esrgan-magnific-v2-and-tiled-comfyui-pipelines-in-2026/',
        checked: PRICES_CHECKED,
        note: "a review of the service's pricing: about 5 credits for ×2 of a 1450×850 image, about 20 for ×4 (about 1 credit per output megapixel)",
        reported: true,
      },
      {
        ...unknownPrice('hires', 'an image', [images]),
        source: 'https://docs.freepik.com/api-reference/mystic/post-mystic',
        note: 'the service publishes €0.10 an image at 2K and €0.32 at 4K, in euros, not credits',
      },
      {
        ...unknownPrice('i2v-endframe', 'a 5 s video', [{ kind: 'value', field: 'duration', times: { '8': 2 } }]),
        source: '/work/ref/magnific-api-v1-openapi-1373326.yaml (veo-3-1: "8s videos cost double")',
      },
      unknownPrice('skin-creative', 'an image'),
      unknownPrice('skin-faithful', 'an image'),
      unknownPrice('skin-flexible', 'an image'),
      unknownPrice('change-camera', 'an image'),
      unknownPrice('image-to-prompt', 'a prompt'),
      unknownPrice('context-t2i', 'an image', [images]),
      unknownPrice('editor', 'an image', [images]),
      unknownPrice('quality-image', 'an image', [images]),
      unknownPrice('quality-edit', 'an image', [images]),
      unknownPrice('image50', 'an image', [images]),
      unknownPrice('image50-edit', 'an image', [images]),
      unknownPrice('flex-image', 'an image', [images]),
      unknownPrice('video-2x', 'a video'),
      unknownPrice('video-25', 'a video'),
      unknownPrice('video-upscaler', 'a video'),
      unknownPrice('music', 'a track'),
      unknownPrice('music-instrumental', 'a track'),
      unknownPrice('music-variants', 'a track'),
    ] satisfies PriceEntry[]
  ).map((p) => [p.tool, p]),
);

/** The table's entry of a tool, or one saying none is known. */
export const publishedPriceOf = (tool: string): PriceEntry => PUBLISHED_PRICES[tool] ?? unknownPrice(tool);

/** How many times the reference price a request costs, and in words why ("×4: 4 times the area of ×2"). */
export function scaleOf(entry: PriceEntry, params: Record<string, unknown>): { times: number; words: string[] } {
  let times = 1;
  const words: string[] = [];
  for (const s of entry.scales) {
    const raw = params[s.field];
    if (s.kind === 'area') {
      const to = Number(raw ?? s.from);
      if (to > 0 && to !== s.from) {
        const t = (to / s.from) ** 2;
        times *= t;
        words.push(`at ×${to}: ${creditFigure(t)} times the area of ×${s.from}`);
      }
    } else if (s.kind === 'count') {
      const n = typeof raw === 'number' && raw > 1 ? raw : 1;
      if (n > 1) {
        times *= n;
        words.push(`${n} images each`);
      }
    } else {
      const t = raw === undefined ? undefined : s.times[String(raw)];
      if (t !== undefined && t !== 1) {
        times *= t;
        words.push(`${s.field} ${String(raw)}: ${creditFigure(t)} times`);
      }
    }
  }
  return { times, words };
}

/** A tool's price as the app uses it: the user's own over the published one. */
export interface ToolPrice extends PriceEntry {
  /** Credits per create at the reference in use: the user's own, else the published. */
  effective: number | null;
  own: number | null;
}

export const toolPriceOf = (tool: string, own: number | null): ToolPrice => {
  const entry = publishedPriceOf(tool);
  return { ...entry, own, effective: own ?? entry.credits };
};

/** Credits one create of a tool costs with these params, with its basis in words, or why it is unknown. */
export function priceOfCreate(
  price: ToolPrice,
  params: Record<string, unknown>,
): { creditsEach: number | null; basis: string } {
  if (price.effective === null)
    return {
      creditsEach: null,
      basis: `cost unknown: ${price.note ?? NO_CREDITS}; set a price in Settings › Prices or with mediadesk prices set`,
    };
  const { times, words } = scaleOf(price, params);
  const each = price.effective * times;
  let by = `the service's published price, read ${price.checked}`;
  if (price.own !== null) by = 'your own price';
  else if (price.reported) by = `the service's price as a review reports it, read ${price.checked}`;
  const scaled = words.length ? `; ${words.join(', ')}` : '';
  return {
    creditsEach: each,
    basis: `${creditFigure(each)} each by ${by}: ${creditFigure(price.effective)} for ${price.unit}${scaled}`,
  };
}
