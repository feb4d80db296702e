import { KEY_HEADERS } from '../../shared/service-profile.ts';

/**
 * Why MEDIADESK_API_URL and MEDIADESK_API_KEY cannot be used (one without the other, a URL that does
 * not parse, a key with a line end), or null. Every host refuses to start with this reason rather
 * than fall back silently; both empty counts as both unset.
 */
export function apiEnvProblem(env: NodeJS.ProcessEnv): string | null {
  const url = env.MEDIADESK_API_URL ?? '';
  const key = env.MEDIADESK_API_KEY ?? '';
  if (!url && !key) return null;
  if (!key.trim())
    return "MEDIADESK_API_URL is set but MEDIADESK_API_KEY is empty: set both to use that server, or neither (the keychain's key, or the built-in Sandbox)";
  if (!url.trim())
    return "MEDIADESK_API_KEY is set but MEDIADESK_API_URL is empty: set both to use a server, or neither (the keychain's key, or the built-in Sandbox)";
  // Sent as a header, where undici refuses a line end: every create then failed on this machine,
  // and the queue took each for one that may have been charged.
  if (/[\s\x00-\x1f\x7f]/.test(key))
    return 'MEDIADESK_API_KEY holds a space, line end or other control character (read from a file with its line end?): give the key alone';
  const header = env.MEDIADESK_API_KEY_HEADER;
  if (header && !(KEY_HEADERS as readonly string[]).includes(header))
    return `MEDIADESK_API_KEY_HEADER must be one of ${KEY_HEADERS.join(', ')}, got ${JSON.stringify(header.slice(0, 100))}`;
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    // reported below
  }
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:'))
    return `MEDIADESK_API_URL must be an http(s) URL such as https://api.magnific.com, got ${JSON.stringify(url.slice(0, 200))}`;
  return null;
}
