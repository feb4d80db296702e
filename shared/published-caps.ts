import { TOOLS } from './catalogue/tools.ts';
import { GENERATED_CATALOGUE, generatedIdOf } from './catalogue/generated.ts';
import type { DailyCaps, PlanTier } from './service-limits.ts';

/**
 * The daily caps the service publishes (its rate-limits page, "Requests Per Day" by plan), as the
 * app's limiter keeps them: only the tools the page names, and no cap where it names none. The
 * page has two columns, Free and Premium; every plan tier the app knows (Business, Enterprise) is a
 * paid one, so the Premium column applies. The creative `image-upscaler`, style-transfer and
 * image-relight (1,250) and the classic generator (10,000) are tools generated from the reference;
 * the precision upscaler is another endpoint, with no published cap. The Sandbox's own
 * caps are shared/service-limits.ts (it checks the app, so it never reads this table).
 */
export const PUBLISHED_CAPS_SOURCE = 'https://docs.freepik.com/ratelimits';
export const PUBLISHED_CAPS_CHECKED = '2026-12-05';

/**
 * Premium caps the page names by service, kept by create path: whichever tool makes that create
 * (a curated one or one generated from the reference) gets the cap.
 */
function capsByPath(): DailyCaps {
  const byPath: Record<string, number> = {
    '/v1/ai/image-upscaler': 1250,
    '/v1/ai/image-style-transfer': 1250,
    '/v1/ai/image-relight': 1250,
    '/v1/ai/text-to-image': 10000,
  };
  // The zod-free parts of the catalogue: the limiter loads this in `mediadesk jobs list`.
  const curated = TOOLS.filter((t) => byPath[t.create] !== undefined);
  const generated = GENERATED_CATALOGUE.tools.filter(
    (op) => byPath[op.path] !== undefined && !curated.some((t) => t.create === op.path),
  );
  return Object.fromEntries([
    ...curated.map((t) => [t.id, byPath[t.create]]),
    ...generated.map((op) => [generatedIdOf(op, new Set(TOOLS.map((t) => t.id))), byPath[op.path]]),
  ]);
}

/** The service's plan columns: Free (lower caps or none) and Premium (paid plans). */
export const SERVICE_CAP_TIERS = ['free', 'premium'] as const;
export type ServiceCapTier = (typeof SERVICE_CAP_TIERS)[number];

export const PUBLISHED_DAILY_CAPS: Record<ServiceCapTier, DailyCaps> = {
  // Free: "N/A" for mystic (not offered), so nothing to cap.
  free: {},
  // Premium: mystic 6,000 a day at 2K and at 4K; the high-resolution generator is mystic.
  premium: { hires: 6000, ...capsByPath() },
};

/** The service's column a plan tier reads: every tier the app knows is paid. */
export const capTierOf = (plan: PlanTier): ServiceCapTier =>
  plan === 'business' || plan === 'enterprise' ? 'premium' : 'free';
