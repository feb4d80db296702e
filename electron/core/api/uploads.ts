import { ApiError, placeTaken, type ApiClient } from './client.ts';

/** The service's upload flow (docs "Upload files"): ask for a signed URL, PUT the bytes, send the asset URL. */
export const REQUEST_URL_PATH = '/v1/ai/uploads/request-url';

/** One file's place to upload to, as request-url answers it. */
export interface UploadTarget {
  fileId: string;
  uploadUrl: string;
  /** Sent with the PUT exactly as given. */
  headers: Record<string, string>;
  expiresInSec: number;
  assetUrl: string;
  assetExpiresInSec: number;
}

const fail = (field: string, reason: string) =>
  new ApiError({
    kind: 'parse',
    message: `the upload answer is not what the service documents: ${field} ${reason}`,
    method: 'POST',
    path: REQUEST_URL_PATH,
    mayHaveReachedServer: false,
  });

/** The answer of request-url, unwrapped as public clients read it or under `data`; a broken field is named. */
export function readUploadTargets(body: unknown): UploadTarget[] {
  const root = body as { files?: unknown; data?: { files?: unknown } } | null;
  const files = root?.files ?? root?.data?.files;
  if (!Array.isArray(files) || files.length === 0) throw fail('files', 'must be a non-empty list');
  return files.map((raw: unknown, i) => {
    const f = (raw ?? {}) as Record<string, unknown>;
    const text = (name: string) => {
      const v = f[name];
      if (typeof v !== 'string' || v === '') throw fail(`files.${i}.${name}`, 'must be a non-empty string');
      return v;
    };
    const seconds = (name: string) => {
      const v = f[name];
      if (typeof v !== 'number' || !(v > 0)) throw fail(`files.${i}.${name}`, 'must be a number of seconds above 0');
      return v;
    };
    const headers = f.headers ?? {};
    if (
      typeof headers !== 'object' ||
      Array.isArray(headers) ||
      Object.values(headers).some((v) => typeof v !== 'string')
    )
      throw fail(`files.${i}.headers`, 'must be an object of header names to strings');
    for (const name of ['upload_url', 'asset_url'])
      if (!/^https?:\/\//i.test(text(name))) throw fail(`files.${i}.${name}`, 'must be an http(s) URL');
    return {
      fileId: text('file_id'),
      uploadUrl: text('upload_url'),
      headers: headers as Record<string, string>,
      expiresInSec: seconds('expires_in'),
      assetUrl: text('asset_url'),
      assetExpiresInSec: seconds('asset_url_expires_in'),
    };
  });
}

export interface Uploaded {
  fileId: string;
  assetUrl: string;
  /** When the asset URL stops working (ms since the epoch), by the service's own count. */
  assetExpiresAt: number;
}

/**
 * One file through the flow: request-url (an API request, free: `beforeRequest` paces it), then the
 * PUT to the upload host with the given headers and no key. A PUT refused because its short-lived
 * URL expired meanwhile gets one new URL.
 */
export async function uploadBytes(
  api: ApiClient,
  bytes: Buffer,
  contentType: string,
  beforeRequest?: () => void | Promise<void>,
): Promise<Uploaded> {
  const ask = () => api.query(REQUEST_URL_PATH, { files: [{ content_type: contentType }] });
  for (let tries = 0; ; tries++) {
    // A caller that took the place itself (the submitter's grant) keeps the client from taking another.
    await beforeRequest?.();
    const asked = Date.now();
    const [target] = readUploadTargets(await (beforeRequest ? placeTaken(ask) : ask()));
    try {
      await api.put(target.uploadUrl, bytes, target.headers);
    } catch (err) {
      const late = Date.now() >= asked + target.expiresInSec * 1000;
      if (tries === 0 && err instanceof ApiError && err.status === 403 && late) continue;
      throw err;
    }
    return {
      fileId: target.fileId,
      assetUrl: target.assetUrl,
      assetExpiresAt: asked + target.assetExpiresInSec * 1000,
    };
  }
}
