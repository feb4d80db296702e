/**
 * The live service as data: where it is, which header carries the key, and the model path of
 * every tool family. The defaults are the real service's (api-notes, "The live service"); a user
 * may edit the host, header and slugs in Settings, and the CLI reads the same settings.
 */

export const LIVE_HOSTS = [
  { baseUrl: 'https://api.magnific.com', keyHeader: 'x-magnific-api-key', name: 'Magnific' },
  { baseUrl: 'https://api.freepik.com', keyHeader: 'x-freepik-api-key', name: 'Freepik (legacy host)' },
] as const;

export const KEY_HEADERS = LIVE_HOSTS.map((h) => h.keyHeader) as unknown as readonly [
  'x-magnific-api-key',
  'x-freepik-api-key',
];
export type KeyHeader = (typeof KEY_HEADERS)[number];
export const DEFAULT_BASE_URL = LIVE_HOSTS[0].baseUrl;
export const DEFAULT_KEY_HEADER: KeyHeader = LIVE_HOSTS[0].keyHeader;

/** The header a host expects when the user has not chosen one: its own, else the default. */
export function keyHeaderFor(baseUrl: string): KeyHeader {
  const origin = safeOrigin(baseUrl);
  return LIVE_HOSTS.find((h) => h.baseUrl === origin)?.keyHeader ?? DEFAULT_KEY_HEADER;
}

function safeOrigin(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

/**
 * Model path segments, one per family placeholder of the catalogue's paths. `basis` says where the
 * value was read: the official description, the service's public documentation, or the spec alone.
 */
export const MODEL_SLUGS = {
  premium_generator: { slug: 'mystic', basis: 'official' },
  context_model: { slug: 'flux-kontext-pro', basis: 'official' },
  editor_model: { slug: 'seedream-v4-5-edit', basis: 'official' },
  quality_model: { slug: 'gpt-image-2', basis: 'docs' },
  image50_model: { slug: 'seedream-v5-lite', basis: 'official' },
  flex_model: { slug: 'flux-2-flex', basis: 'docs' },
  video2x_model: { slug: 'seedance-2-pro', basis: 'official' },
  video25_model: { slug: 'seedance-2-5-pro', basis: 'spec' },
  i2v_model: { slug: 'veo-3-1', basis: 'official' },
  lite_model: { slug: 'veo-3-1-lite', basis: 'docs' },
  upscaler_vendor: { slug: 'topaz', basis: 'docs' },
  instrumental_model: { slug: 'google-lyria', basis: 'docs' },
  variants_model: { slug: 'lyria-3', basis: 'docs' },
} as const satisfies Record<string, { slug: string; basis: 'official' | 'docs' | 'spec' }>;

export type Basis = 'official' | 'docs' | 'spec';
export type SlugKey = keyof typeof MODEL_SLUGS;

/** How a tool's request was verified, in words a user reads beside the tool. */
export const BASIS_WORDS: Record<Basis, string> = {
  official: "Checked against the service's official API description.",
  docs: "Follows the service's public documentation; not in its official API description.",
  spec: 'Follows the API spec alone: the service documents no fields for it, so a request may still be refused.',
};
export const SLUG_KEYS = Object.keys(MODEL_SLUGS) as SlugKey[];
export const DEFAULT_SLUGS = Object.fromEntries(SLUG_KEYS.map((k) => [k, MODEL_SLUGS[k].slug])) as {
  readonly [K in SlugKey]: (typeof MODEL_SLUGS)[K]['slug'];
};
export const SLUG_RE = /^[a-z0-9][a-z0-9._-]*$/i;
