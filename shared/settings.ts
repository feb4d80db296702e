import { z } from 'zod';
import { DEFAULT_SLUGS, SLUG_KEYS, type SlugKey } from './catalogue/index.ts';

export const DEMO_KEY_NAMES = ['sandbox-owner', 'sandbox-admin', 'sandbox-member', 'sandbox-business', 'sandbox-noaudit'] as const;

const slugOverrides = z.object(Object.fromEntries(SLUG_KEYS.map((k) => [k, z.string().regex(/^[a-z0-9][a-z0-9._-]*$/i, 'must be a path segment').optional()])) as Record<SlugKey, z.ZodOptional<z.ZodString>>).strict();

const TEMPLATE_TOKENS = ['name', 'tool', 'ext', 'n', 'date', 'batch'];

/** Everything the user can set, with defaults. The API key is deliberately absent: it lives in the OS keychain. */
export const settingsSchema = z.object({
  /** 'sandbox' runs the built-in API in-process; 'live' uses baseUrl with the keychain's key. */
  backend: z.enum(['sandbox', 'live']).default('sandbox'),
  baseUrl: z.string().url('must be a URL').refine((u) => u.startsWith('https://') || /^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?(\/|$)/.test(u), 'must be https:// (or http:// on 127.0.0.1)').default('https://api.example.com'),
  /** Which demo identity the Sandbox backend uses (plans and roles differ). */
  sandboxKey: z.enum(DEMO_KEY_NAMES).default('sandbox-owner'),
  outputDir: z.string().default(''),
  namingTemplate: z.string().min(1).refine((t) => [...t.matchAll(/\{([a-z]+)\}/g)].every((m) => TEMPLATE_TOKENS.includes(m[1])), `may use only ${TEMPLATE_TOKENS.map((t) => `{${t}}`).join(' ')}`)
    .refine((t) => t.includes('{name}') || t.includes('{n}'), 'must contain {name} or {n} so results do not collide').default('{name}_{tool}.{ext}'),
  concurrency: z.number().int().min(1).max(32).default(4),
  perToolConcurrency: z.record(z.string(), z.number().int().min(1).max(32)).default({}),
  theme: z.enum(['system', 'light', 'dark']).default('system'),
  slugs: slugOverrides.default({}),
});

export type Settings = z.infer<typeof settingsSchema>;
export const settingsPatchSchema = settingsSchema.partial().strict();
export type SettingsPatch = z.infer<typeof settingsPatchSchema>;
export const DEFAULT_SETTINGS: Settings = settingsSchema.parse({});

export function effectiveSlugs(s: Settings): Record<SlugKey, string> {
  const out = { ...DEFAULT_SLUGS } as Record<SlugKey, string>;
  for (const k of SLUG_KEYS) if (s.slugs[k]) out[k] = s.slugs[k]!;
  return out;
}
