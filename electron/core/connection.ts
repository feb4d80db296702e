import { ApiClient, ApiError, type ApiTarget } from './api/client.ts';
import { readUploadTargets, REQUEST_URL_PATH } from './api/uploads.ts';
import type { KeySource } from './backend.ts';
import { keyFingerprint } from './secrets.ts';
import { DEFAULT_SLUGS, resolvePaths, TOOLS, type SlugKey, type Slugs } from '../../shared/catalogue/index.ts';
import { mapLimit } from '../../shared/concurrency.ts';
import type { ConnectionCheck, ConnectionTest } from '../../shared/contract/foundation.ts';
import { KEY_HEADERS, keyHeaderFor } from '../../shared/service-profile.ts';
import type { Settings } from '../../shared/settings.ts';
import { APP_FAMILIES, familyPaths } from './apps/family.ts';

/**
 * "Test connection" and `mediadesk doctor`: free requests only (the LoRA catalogue, each tool's
 * list path, PATHS_AT_ONCE at a time, then an upload URL), each finding with what to change. Never retried: a 429 or
 * 503 ends the round, as the service asked.
 */
export interface ConnectionDeps {
  target: () => Promise<ApiTarget>;
  /** Waits for a place in the service's rate windows before each request (ClientOptions.pace). */
  pace?: () => Promise<void>;
  source: () => Promise<KeySource>;
  /** backendLabel of the backend in use. */
  label: () => Promise<string>;
  slugs: () => Slugs;
  settings: () => Settings;
  env: NodeJS.ProcessEnv;
  /** Per request; the live service answers these in well under a second. */
  timeoutMs?: number;
}

const PATHS_AT_ONCE = 4;
const KEY_PATH = '/v1/ai/loras';

interface PathProbe {
  path: string;
  titles: string[];
  slugKeys: SlugKey[];
}

/** Every distinct list path of the catalogue with the slugs in use, the families that share it, and the slug settings in it. */
export function modelPaths(slugs: Slugs): PathProbe[] {
  const byPath = new Map<string, PathProbe>();
  for (const t of TOOLS) {
    const path = resolvePaths(t, slugs).list;
    const title = t.title.split(':')[0];
    const slugKeys = [...t.list.matchAll(/\{([a-z0-9_]+)\}/g)]
      .map((m) => m[1])
      .filter((k): k is SlugKey => Object.hasOwn(DEFAULT_SLUGS, k));
    const p = byPath.get(path);
    if (!p) byPath.set(path, { path, titles: [title], slugKeys });
    else {
      if (!p.titles.includes(title)) p.titles.push(title);
      for (const k of slugKeys) if (!p.slugKeys.includes(k)) p.slugKeys.push(k);
    }
  }
  return [...byPath.values()];
}

/** The header to try instead, and the choices said in words: the other one, or both when the one in use is neither. */
function headerChoice(header: string, baseUrl: string): { to: string; inWords: string } {
  if ((KEY_HEADERS as readonly string[]).includes(header)) {
    const to = KEY_HEADERS.find((x) => x !== header)!;
    return { to, inWords: `the other choice is ${to}` };
  }
  return { to: keyHeaderFor(baseUrl), inWords: `the choices are ${KEY_HEADERS.join(' and ')}` };
}
const busy = (e: ApiError) => e.kind === 'http' && (e.status === 429 || e.status === 503);
const laterFix = (e: ApiError) =>
  `Try again later${e.retryAfterSec !== undefined ? `: the service asked to wait ${Math.ceil(e.retryAfterSec)} s (Retry-After)` : ' (in a minute or so)'}; nothing is wrong with the settings for that.`;
const answered = (e: ApiError) => `${e.status} ${e.message}`;
const reached = (e: unknown): e is ApiError => e instanceof ApiError && (e.kind === 'http' || e.kind === 'parse');

// eslint-disable-next-line max-lines-per-function -- one connection test's checks (host, key, families, uploads) in the order they are run
export async function testConnection(deps: ConnectionDeps): Promise<ConnectionTest> {
  const env = deps.env;
  const settings = deps.settings();
  const source = await deps.source();
  const backend = await deps.label();
  let target: ApiTarget;
  try {
    target = await deps.target();
  } catch (err) {
    // Only the built-in Sandbox is started on demand: a live target is read from settings and the keychain.
    const why = err instanceof Error ? err.message : String(err);
    return {
      backend,
      baseUrl: 'in-process',
      checks: [
        {
          name: 'Host',
          ok: false,
          detail: `the built-in Sandbox could not start: ${why}`,
          fix: 'Restart MediaDesk; if it still cannot start, choose the live service in Settings > Backend with an API key.',
        },
      ],
    };
  }
  const baseUrl = target.baseUrl.replace(/\/+$/, '');
  const header = target.keyHeader ?? keyHeaderFor(baseUrl);
  const client = new ApiClient(() => target, { retries: 0, timeoutMs: deps.timeoutMs ?? 10_000, pace: deps.pace });

  const { baseUrlFix, keyName, replaceKey } = {
    environment: {
      baseUrlFix: `Check MEDIADESK_API_URL (now ${baseUrl}) and this machine's network.`,
      keyName: `the API key ${keyFingerprint(target.apiKey)} from MEDIADESK_API_KEY`,
      replaceKey: 'set MEDIADESK_API_KEY to a valid key',
    },
    keychain: {
      baseUrlFix: `Check the base URL setting (now ${baseUrl}): Settings > Backend > Base URL, or mediadesk settings set baseUrl=URL; and this machine's network.`,
      keyName: `the API key ${keyFingerprint(target.apiKey)} from the keychain`,
      replaceKey: 'replace it under Settings > API key, or with echo "$KEY" | mediadesk key set',
    },
    sandbox: {
      baseUrlFix: `The built-in Sandbox at ${baseUrl} did not answer: restart MediaDesk.`,
      keyName: `the Sandbox identity ${target.apiKey}`,
      replaceKey: 'choose another Sandbox identity in Settings > Backend',
    },
  }[source];
  const choice = headerChoice(header, baseUrl);
  const headerSetting =
    source === 'environment'
      ? `MEDIADESK_API_KEY_HEADER (now ${header}${env.MEDIADESK_API_KEY_HEADER ? '' : ', the one of this host when unset'}; ${choice.inWords})`
      : `the API key header setting (now ${header}; ${choice.inWords}): Settings > Backend > API key header, or mediadesk settings set keyHeader=${choice.to}`;

  const checks: ConnectionCheck[] = [];
  // Host and key, from one request.
  const started = performance.now();
  let keyError: ApiError | null = null;
  try {
    await client.get(KEY_PATH);
  } catch (err) {
    if (!reached(err)) {
      const detail = err instanceof ApiError ? err.message : String(err);
      checks.push({
        name: 'Host',
        ok: false,
        detail: `${baseUrl} (${backend}) could not be reached: ${detail}`,
        fix: baseUrlFix,
      });
      return { backend, baseUrl, checks };
    }
    keyError = err;
  }
  checks.push({
    name: 'Host',
    ok: true,
    detail: `${baseUrl} (${backend}) answered in ${Math.round(performance.now() - started)} ms`,
  });
  const keyCheck = keyFinding(keyError, { keyName, header, replaceKey, headerSetting, baseUrlFix });
  checks.push(keyCheck);
  if (!keyCheck.ok) {
    keyCheck.detail += '; the model paths are checked once this passes';
    return { backend, baseUrl, checks };
  }

  checks.push(await appFamilyFinding(client, baseUrlFix));

  // Every family's list path: a plain GET, as the app's polling sends it, without query parameters.
  let stopped: ApiError | null = null;
  const overrides = settings.slugs;
  const slugs = deps.slugs();
  const found = await mapLimit(modelPaths(slugs), PATHS_AT_ONCE, async (p): Promise<ConnectionCheck> => {
    const name = p.titles.join(', ');
    if (stopped)
      return {
        name,
        ok: false,
        detail: `GET ${p.path}: not checked, the service answered ${answered(stopped)} before`,
        fix: laterFix(stopped),
      };
    try {
      await client.get(p.path);
      return { name, ok: true, detail: `GET ${p.path}: the model path exists` };
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (busy(err)) {
        stopped ??= err;
        return { name, ok: false, detail: `GET ${p.path}: the service is busy (${answered(err)})`, fix: laterFix(err) };
      }
      if (err.kind !== 'http')
        return {
          name,
          ok: false,
          detail: `GET ${p.path}: ${err.message}`,
          fix: err.kind === 'parse' ? baseUrlFix : laterFix(err),
        };
      const status = err.status!;
      if (status === 404)
        return {
          name,
          ok: false,
          detail: `GET ${p.path}: ${answered(err)}, the service has no such model path`,
          fix: slugFix(p, slugs, overrides, baseUrl),
        };
      // The path exists; this key's plan or role may not use it. A fact about the account, not the profile.
      if (status === 403)
        return {
          name,
          ok: true,
          detail: `GET ${p.path}: the model path exists, but this key's plan or role may not use it (${answered(err)})`,
        };
      if (status === 401)
        return {
          name,
          ok: false,
          detail: `GET ${p.path}: ${answered(err)}`,
          fix: `The key was taken for ${KEY_PATH} but not here: ${replaceKey}.`,
        };
      // 400, 405, 422: routed, so the path is there; it only did not like the bare GET.
      if (status < 500)
        return { name, ok: true, detail: `GET ${p.path}: the model path exists (it answered ${answered(err)})` };
      return { name, ok: false, detail: `GET ${p.path}: ${answered(err)}`, fix: laterFix(err) };
    }
  });
  checks.push(...found);
  checks.push(await uploadsFinding(client, stopped));
  return { backend, baseUrl, checks };
}

/** Whether workflow apps answer as flows (the newer description) or as apps (before it): the run path the app will use. */
async function appFamilyFinding(client: ApiClient, baseUrlFix: string): Promise<ConnectionCheck> {
  const name = 'Workflow apps';
  const seen: string[] = [];
  for (const family of APP_FAMILIES) {
    const path = familyPaths(family).list;
    try {
      await client.get(path);
      return { name, ok: true, detail: [...seen, `GET ${path}: workflow apps answer as ${family}`].join('; ') };
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.kind === 'http' && err.status === 404) {
        seen.push(`GET ${path} answered ${answered(err)}`);
        continue;
      }
      if (err.kind === 'http' && err.status === 403)
        return {
          name,
          ok: true,
          detail: [
            ...seen,
            `GET ${path}: workflow apps answer as ${family}, but not to this key's plan (${answered(err)})`,
          ].join('; '),
        };
      return {
        name,
        ok: false,
        detail: [...seen, `GET ${path}: ${answered(err)}`].join('; '),
        fix: busy(err) ? laterFix(err) : baseUrlFix,
      };
    }
  }
  return {
    name,
    ok: false,
    detail: `${seen.join('; ')}: neither flows nor apps are served`,
    fix: `Workflow apps cannot be run on this backend. If it is not the service, change the base URL. ${baseUrlFix}`,
  };
}

/**
 * Whether local files can reach URL-only fields: request-url is free and answers a signed URL. No
 * bytes are PUT: a probe would leave a file on the account for days, and a PUT that fails later is
 * named on its job, which waits unpaid.
 */
async function uploadsFinding(client: ApiClient, stopped: ApiError | null): Promise<ConnectionCheck> {
  const name = 'Uploads';
  const what = `POST ${REQUEST_URL_PATH}`;
  if (stopped)
    return {
      name,
      ok: false,
      detail: `${what}: not checked, the service answered ${answered(stopped)} before`,
      fix: laterFix(stopped),
    };
  try {
    const [t] = readUploadTargets(await client.query(REQUEST_URL_PATH, { files: [{ content_type: 'image/png' }] }));
    return {
      name,
      ok: true,
      detail: `${what}: local files can be uploaded (to ${new URL(t.uploadUrl).host}; asset URLs last ${Math.round(t.assetExpiresInSec / 3600)} h)`,
    };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const fix =
      err.kind === 'http' && !busy(err) && err.status! < 500
        ? 'Local files cannot go to fields that take only a URL (Change camera, the video upscaler, workflow-app images) with this key or host; give those fields HTTPS URLs instead.'
        : laterFix(err);
    return { name, ok: false, detail: `${what}: ${err.kind === 'http' ? answered(err) : err.message}`, fix };
  }
}

function keyFinding(
  err: ApiError | null,
  wording: { keyName: string; header: string; replaceKey: string; headerSetting: string; baseUrlFix: string },
): ConnectionCheck {
  const name = 'API key';
  const sent = `${wording.keyName}, sent in ${wording.header}`;
  if (!err) return { name, ok: true, detail: `${sent}: accepted (GET ${KEY_PATH})` };
  if (err.kind === 'parse')
    return {
      name,
      ok: false,
      detail: `GET ${KEY_PATH} answered with something that is not JSON: this does not look like the service`,
      fix: wording.baseUrlFix,
    };
  if (busy(err))
    return {
      name,
      ok: false,
      detail: `${sent}: not known yet, the service is busy (${answered(err)})`,
      fix: laterFix(err),
    };
  if (err.status === 401) {
    if (/missing/i.test(err.message)) {
      return {
        name,
        ok: false,
        detail: `${sent}: ${answered(err)}`,
        fix: `The service found no API key in the header ${wording.header}: check ${wording.headerSetting}.`,
      };
    }
    return {
      name,
      ok: false,
      detail: `${sent}: refused (${answered(err)})`,
      fix: `The service refused ${wording.keyName} ("${err.message}"), sent in ${wording.header}: ${wording.replaceKey}.`,
    };
  }
  // The key is known; the catalogue is not for this plan or role. Said, not failed.
  if (err.status === 403)
    return {
      name,
      ok: true,
      detail: `${sent}: accepted; the LoRA catalogue is not open to this plan or role (${answered(err)})`,
    };
  if (err.status === 404)
    return {
      name,
      ok: false,
      detail: `GET ${KEY_PATH}: ${answered(err)}: this does not look like the service`,
      fix: wording.baseUrlFix,
    };
  return {
    name,
    ok: false,
    detail: `GET ${KEY_PATH}: ${answered(err)}`,
    fix: (err.status ?? 0) >= 500 ? laterFix(err) : wording.baseUrlFix,
  };
}

/** What to change when a model path is not there: the slug setting in it, by name and value, where to change it and the command that does. */
function slugFix(p: PathProbe, slugs: Slugs, overrides: Settings['slugs'], baseUrl: string): string {
  if (!p.slugKeys.length) {
    return `This path is not a setting (the catalogue fixes it): ${baseUrl} does not serve it, so its tools cannot be used there. If ${baseUrl} is not the service, change the base URL.`;
  }
  return p.slugKeys
    .map((key) => {
      const value = slugs[key];
      const def = DEFAULT_SLUGS[key];
      const overridden = overrides[key] !== undefined && overrides[key] !== def;
      const others = Object.fromEntries(Object.entries(overrides).filter(([k, v]) => k !== key && v !== undefined));
      // `settings set slugs=…` replaces every override: the command keeps the others.
      if (overridden) {
        return `The model path segment ${key} is "${value}" (the default is "${def}"): clear ${key} under Settings > Model path segments to use the default, or run mediadesk settings set 'slugs=${JSON.stringify(others)}'.`;
      }
      return `The model path segment ${key} is "${value}" (the default): enter the segment the service's documentation names for this model under ${key} in Settings > Model path segments, or run mediadesk settings set 'slugs=${JSON.stringify({ ...others, [key]: 'SEGMENT' })}'.`;
    })
    .join(' ');
}
