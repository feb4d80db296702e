/**
 * The service's published pacing limits (api-notes: bursts of about 50 requests/s over 5 s, about
 * 10 requests/s over 2 minutes) and the per-plan daily caps and credit prices the Sandbox serves.
 * The caps and prices are the Sandbox's own: the app's are shared/published-caps.ts and
 * shared/prices.ts, kept apart so the Sandbox checks the app rather than mirror its numbers.
 */
export interface RateLimits {
  burstPerSec: number;
  burstWindowSec: number;
  averagePerSec: number;
  averageWindowSec: number;
}

export const SERVICE_RATES: RateLimits = {
  burstPerSec: 50,
  burstWindowSec: 5,
  averagePerSec: 10,
  averageWindowSec: 120,
};

export const PLAN_TIERS = ['business', 'enterprise'] as const;
export type PlanTier = (typeof PLAN_TIERS)[number];

/** The built-in Sandbox's demo keys' plans (electron/sandbox/keys.ts serves them). */
export const DEMO_KEY_PLANS: Readonly<Record<string, PlanTier>> = {
  'sandbox-owner': 'enterprise',
  'sandbox-admin': 'enterprise',
  'sandbox-member': 'enterprise',
  'sandbox-business': 'business',
  'sandbox-noaudit': 'enterprise',
};

/** Whose daily caps apply: a demo key's own plan (only a Sandbox takes one), else the plan in Settings. */
export const planTierOf = (apiKey: string, settingsPlan: PlanTier): PlanTier => DEMO_KEY_PLANS[apiKey] ?? settingsPlan;

/** Creates per tool per UTC day, keyed by catalogue tool id; `*` is every tool not named. */
export type DailyCaps = Record<string, number>;

export const DEFAULT_DAILY_CAPS: Record<PlanTier, DailyCaps> = {
  business: {
    '*': 500,
    'upscaler-precision': 200,
    'video-upscaler': 50,
    'video-2x': 50,
    'video-25': 50,
    'i2v-endframe': 50,
    music: 100,
  },
  enterprise: {
    '*': 5000,
    'upscaler-precision': 2000,
    'video-upscaler': 500,
    'video-2x': 500,
    'video-25': 500,
    'i2v-endframe': 500,
    music: 1000,
  },
};

/** A tool's cap in a caps table: its own entry, else `*`, else none (Infinity). */
export function dailyCapOf(caps: DailyCaps, toolId: string): number {
  return caps[toolId] ?? caps['*'] ?? Infinity;
}

/** Credits per result, keyed by catalogue tool id; `*` is every tool not named. */
export const CREDIT_PRICES: Record<string, number> = {
  '*': 10,
  'image-to-prompt': 1,
  'skin-creative': 20,
  'skin-faithful': 20,
  'skin-flexible': 20,
  hires: 15,
  'change-camera': 15,
  'video-2x': 200,
  'video-25': 250,
  'i2v-endframe': 200,
  'video-upscaler': 150,
  music: 40,
  'music-instrumental': 40,
  'music-variants': 40,
};

/** The precision upscaler is priced by output area: this many credits per unit of input area. */
export const UPSCALER_CREDITS_PER_AREA = 5;

/**
 * Credits one accepted create is charged, from its tool and the parameters the service works
 * from: the upscaler by output area (scale factor squared), the quality tiers per image made.
 */
export function creditsOf(toolId: string, params: Record<string, unknown>): number {
  if (toolId === 'upscaler-precision') {
    const scale = Number(params.scale_factor ?? 2);
    return UPSCALER_CREDITS_PER_AREA * (Number.isFinite(scale) && scale > 0 ? scale * scale : 4);
  }
  const each = CREDIT_PRICES[toolId] ?? CREDIT_PRICES['*'];
  const images = typeof params.num_images === 'number' && params.num_images > 0 ? params.num_images : 1;
  return each * images;
}

const DAY_MS = 86_400_000;

/** The next 00:00 UTC after `nowMs`, when daily caps reset. */
export function nextUtcMidnight(nowMs: number): number {
  return (Math.floor(nowMs / DAY_MS) + 1) * DAY_MS;
}

/** The UTC day of `nowMs`, `YYYY-MM-DD`. */
export const utcDay = (nowMs: number) => new Date(nowMs).toISOString().slice(0, 10);
