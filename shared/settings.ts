import { z } from 'zod';
import { DEFAULT_SLUGS, SLUG_KEYS, type SlugKey } from './catalogue/index.ts';
import { DEFAULT_BASE_URL, DEFAULT_KEY_HEADER, KEY_HEADERS, SLUG_RE } from './service-profile.ts';
import { templateNameProblem } from './file-names.ts';
import { isLoopbackUrl } from './loopback.ts';
import { PLAN_TIERS } from './service-limits.ts';
import { sinksSchema } from './audit-sinks.ts';

export const DEMO_KEY_NAMES = [
  'sandbox-owner',
  'sandbox-admin',
  'sandbox-member',
  'sandbox-business',
  'sandbox-noaudit',
] as const;

const slugOverrides = z
  .object(
    Object.fromEntries(
      SLUG_KEYS.map((k) => [
        k,
        z.string().regex(SLUG_RE, 'must be a path segment (letters, digits, . _ -)').optional(),
      ]),
    ) as Record<SlugKey, z.ZodOptional<z.ZodString>>,
  )
  .strict();

/** Why a team server URL cannot be used, or null: postgres:// or postgresql://, a host, a database, no password in it. */
export function teamServerUrlProblem(raw: string): string | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'must be a URL such as postgres://user@db.studio.lan/mediadesk';
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') return 'must start with postgres:// or postgresql://';
  if (!u.hostname) return 'must name the server (postgres://user@HOST/database)';
  if (u.pathname.length <= 1) return 'must name the database (postgres://user@host/DATABASE)';
  if (u.password) return 'must not hold the password: it is kept in the keychain (mediadesk team connect)';
  return null;
}

/** POSIX, drive-letter and UNC forms: the renderer checks it too, without node:path. */
export const isAbsolutePath = (p: string) => /^(\/|[A-Za-z]:[\\/]|\\\\)/.test(p);

/** zod's own enum message quotes its values as code ("system"|"light"); a setting's should read as a sentence. */
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `must be one of ${values.join(', ')}` });

const TEMPLATE_TOKENS = ['name', 'tool', 'ext', 'n', 'date', 'batch'];

/** Every setting's rule, without defaults (so a partial patch stays partial). The API key is deliberately absent: it lives in the OS keychain. */
const fields = {
  /** 'sandbox' runs the built-in API in-process; 'live' uses baseUrl with the keychain's key. */
  backend: oneOf(['sandbox', 'live']),
  baseUrl: z
    .string()
    .url('must be a URL')
    .refine((u) => u.startsWith('https://') || isLoopbackUrl(u), 'must be https:// (or http:// on 127.0.0.1)'),
  /** Which demo identity the Sandbox backend uses (plans and roles differ). */
  /** The header the live service reads the key from (the legacy host takes its own). */
  keyHeader: oneOf(KEY_HEADERS),
  sandboxKey: oneOf(DEMO_KEY_NAMES),
  /** Empty: the default folder. A relative path would depend on where the app was started from. */
  outputDir: z
    .string()
    .refine(
      (d) => d === '' || isAbsolutePath(d),
      'must be a full path (such as /Users/you/MediaDesk or C:\\Users\\you\\MediaDesk), or empty for the default folder',
    ),
  namingTemplate: z
    .string()
    .min(1, 'must not be empty')
    .max(60, 'must be at most 60 characters')
    .refine(
      (t) => [...t.matchAll(/\{([a-z]+)\}/g)].every((m) => TEMPLATE_TOKENS.includes(m[1])),
      `may use only ${TEMPLATE_TOKENS.map((t) => `{${t}}`).join(' ')}`,
    )
    .refine((t) => t.includes('{name}') || t.includes('{n}'), 'must contain {name} or {n} so results do not collide')
    .refine((t) => !/[\\/]/.test(t), 'must be a file name, without / or \\ (results go in the output folder)')
    .refine((t) => !t.startsWith('.'), 'must not start with a dot (the files would be hidden)')
    .superRefine((t, ctx) => {
      const problem = templateNameProblem(t);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  concurrency: z
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(32, 'must be at most 32'),
  perToolConcurrency: z.record(
    z.string(),
    z.number().int('must be a whole number').min(1, 'must be at least 1').max(32, 'must be at most 32'),
  ),
  theme: oneOf(['system', 'light', 'dark']),
  slugs: slugOverrides,
  /** The live account's plan, whose daily caps per tool the queue keeps to (on the Sandbox, the demo key's plan). */
  planTier: z.enum(PLAN_TIERS, {
    error: `must be the account's plan: ${PLAN_TIERS.join(' or ')} (it decides the daily limits per tool)`,
  }),
  /** The installed desktop app looks for a new release at start and downloads it in the background. */
  autoUpdate: z.boolean({ error: 'must be true or false' }),
  /** A result keeps its source's EXIF (orientation, camera, dates), colour profile, IPTC and XMP. */
  keepMetadata: z.boolean({ error: 'must be true or false' }),
  /** A result records how it was made (tool, model path, parameters, task, date, app version) in its XMP. */
  writeProvenance: z.boolean({ error: 'must be true or false' }),
  /** The same record beside the result, as `<result>.json`. */
  provenanceSidecar: z.boolean({ error: 'must be true or false' }),
  /** A system notification when a batch, an app run or a hot folder's files end, or a job needs the person. */
  notifications: z.boolean({ error: 'must be true or false' }),
  /** "Process with MediaDesk" in the file manager's menu (Windows Explorer, Nautilus, Dolphin, Nemo). */
  osContextMenu: z.boolean({ error: 'must be true or false' }),
  /** Windows: MediaDesk in Explorer's Send To menu. */
  osSendTo: z.boolean({ error: 'must be true or false' }),
  /** macOS: the Finder Quick Action "Process with MediaDesk". */
  osQuickAction: z.boolean({ error: 'must be true or false' }),
  /** mediadesk:// links open the app (they never start work by themselves). */
  osLinks: z.boolean({ error: 'must be true or false' }),
  /** Where the audit log is forwarded from the cache (audit-sinks.ts); tokens are in the keychain. */
  auditSinks: sinksSchema,
  /** Forward to every enabled sink after each audit sync or import. */
  forwardAfterAuditSync: z.boolean({ error: 'must be true or false' }),
  /** The team server (PostgreSQL) shared by the studio's machines, without its password (kept in the keychain); empty: none. */
  teamServer: z.string().superRefine((u, ctx) => {
    const problem = u === '' ? null : teamServerUrlProblem(u);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }),
  /** The tools the person starred, in the order starred: every tool list shows them first. */
  favouriteTools: z
    .array(z.string().min(1, 'must be a tool id').max(120, 'must be a tool id'), {
      error: 'must be a list of tool ids',
    })
    .max(500, 'at most 500 tools'),
};

const DEFAULTS = {
  backend: 'sandbox',
  baseUrl: DEFAULT_BASE_URL,
  keyHeader: DEFAULT_KEY_HEADER,
  sandboxKey: 'sandbox-owner',
  outputDir: '',
  namingTemplate: '{name}_{tool}.{ext}',
  concurrency: 4,
  perToolConcurrency: {},
  theme: 'system',
  slugs: {},
  planTier: 'business',
  autoUpdate: true,
  keepMetadata: true,
  writeProvenance: true,
  provenanceSidecar: false,
  notifications: true,
  osContextMenu: true,
  osSendTo: true,
  osQuickAction: true,
  osLinks: true,
  auditSinks: [],
  forwardAfterAuditSync: false,
  teamServer: '',
} as const;

export const settingsSchema = z.object({
  backend: fields.backend.default(DEFAULTS.backend),
  baseUrl: fields.baseUrl.default(DEFAULTS.baseUrl),
  keyHeader: fields.keyHeader.default(DEFAULTS.keyHeader),
  sandboxKey: fields.sandboxKey.default(DEFAULTS.sandboxKey),
  outputDir: fields.outputDir.default(DEFAULTS.outputDir),
  namingTemplate: fields.namingTemplate.default(DEFAULTS.namingTemplate),
  concurrency: fields.concurrency.default(DEFAULTS.concurrency),
  perToolConcurrency: fields.perToolConcurrency.default(DEFAULTS.perToolConcurrency),
  theme: fields.theme.default(DEFAULTS.theme),
  slugs: fields.slugs.default(DEFAULTS.slugs),
  planTier: fields.planTier.default(DEFAULTS.planTier),
  autoUpdate: fields.autoUpdate.default(DEFAULTS.autoUpdate),
  keepMetadata: fields.keepMetadata.default(DEFAULTS.keepMetadata),
  writeProvenance: fields.writeProvenance.default(DEFAULTS.writeProvenance),
  provenanceSidecar: fields.provenanceSidecar.default(DEFAULTS.provenanceSidecar),
  notifications: fields.notifications.default(DEFAULTS.notifications),
  osContextMenu: fields.osContextMenu.default(DEFAULTS.osContextMenu),
  osSendTo: fields.osSendTo.default(DEFAULTS.osSendTo),
  osQuickAction: fields.osQuickAction.default(DEFAULTS.osQuickAction),
  osLinks: fields.osLinks.default(DEFAULTS.osLinks),
  auditSinks: fields.auditSinks.default([]),
  forwardAfterAuditSync: fields.forwardAfterAuditSync.default(DEFAULTS.forwardAfterAuditSync),
  teamServer: fields.teamServer.default(DEFAULTS.teamServer),
  favouriteTools: fields.favouriteTools.default([]),
});

export type Settings = z.infer<typeof settingsSchema>;
export const settingsPatchSchema = z.object(fields).partial().strict();
export type SettingsPatch = z.infer<typeof settingsPatchSchema>;
export const DEFAULT_SETTINGS: Settings = settingsSchema.parse({});

/** What a result carries besides its pixels: frozen into each job when it is queued. */
export const METADATA_SETTINGS = ['keepMetadata', 'writeProvenance', 'provenanceSidecar'] as const;
export type MetadataSettings = Pick<Settings, (typeof METADATA_SETTINGS)[number]>;
export const metadataSettingsOf = (s: MetadataSettings): MetadataSettings => ({
  keepMetadata: s.keepMetadata,
  writeProvenance: s.writeProvenance,
  provenanceSidecar: s.provenanceSidecar,
});

export function effectiveSlugs(s: Settings): Record<SlugKey, string> {
  const out = { ...DEFAULT_SLUGS } as Record<SlugKey, string>;
  for (const k of SLUG_KEYS) if (s.slugs[k]) out[k] = s.slugs[k]!;
  return out;
}
