import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { findOperation, requestProblems } from '../../shared/official/index.ts';
import { KEY_HEADERS } from '../../shared/service-profile.ts';
import type { DiskStore } from './blob-store.ts';
import { fileSource, sendBytes } from './download.ts';
import { sendError, sendInvalid } from './errors.ts';
import { holdAnswer, type FaultState } from './faults.ts';
import type { Stats } from './stats.ts';

/** The service's stated limits (docs "Upload files"): files up to 1 GiB, the PUT URL about 120 s, the asset about a day. */
export const MAX_UPLOAD_BYTES = 1024 ** 3;
export const UPLOAD_URL_TTL_SEC = 120;
export const ASSET_URL_TTL_SEC = 86_400;
export const REQUEST_URL_PATH = '/v1/ai/uploads/request-url';
/** Signed upload URLs cap the size with this header, as a storage bucket's signed PUT does. */
const LENGTH_RANGE = 'x-goog-content-length-range';

interface Issued {
  fileId: string;
  contentType: string;
  uploadExpiresAt: number;
  assetExpiresAt: number;
  stored: boolean;
}

export interface UploadDeps {
  disk: DiskStore;
  faults: FaultState;
  stats: Stats;
  now: () => number;
  baseUrl: () => string;
  seed: number;
}

/**
 * The service's upload flow: `request-url` (an API call, with the key) hands out a signed PUT URL
 * on the Sandbox's own "upload host", the headers to send with it and a public asset URL. The PUT
 * takes no key; the asset is served without one until it expires.
 */
export class Uploads {
  private readonly issued = new Map<string, Issued>();
  private readonly secret: Buffer;
  private readonly deps: UploadDeps;

  constructor(deps: UploadDeps) {
    this.deps = deps;
    this.secret = createHmac('sha256', 'mediadesk-sandbox-uploads').update(String(deps.seed)).digest();
  }

  private sign(kind: 'put' | 'get', fileId: string, expiresSec: number): string {
    return createHmac('sha256', this.secret).update(`${kind}\n${fileId}\n${expiresSec}`).digest('hex');
  }

  private signed(kind: 'put' | 'get', fileId: string, query: Record<string, unknown>): boolean {
    const expires = Number(query.expires);
    const sig = typeof query.signature === 'string' ? Buffer.from(query.signature) : Buffer.alloc(0);
    const want = Buffer.from(this.sign(kind, fileId, expires));
    return Number.isInteger(expires) && sig.length === want.length && timingSafeEqual(sig, want);
  }

  /** Every asset URL handed out so far answers as expired from now on. */
  expireAssets(): number {
    const now = this.deps.now();
    let n = 0;
    for (const f of this.issued.values())
      if (f.assetExpiresAt > now) {
        f.assetExpiresAt = now;
        n++;
      }
    return n;
  }

  requestUrls(contentTypes: readonly string[]) {
    const now = this.deps.now();
    const ttl = this.deps.faults.current.assetUrlExpiresInSec;
    return {
      files: contentTypes.map((contentType) => {
        const fileId = `${/^(video\/|application\/mp4)/i.test(contentType) ? 'upl_vid_' : 'upl_'}${randomBytes(9).toString('hex')}`;
        const putExpires = Math.floor(now / 1000) + UPLOAD_URL_TTL_SEC;
        const getExpires = Math.floor(now / 1000) + ttl;
        this.issued.set(fileId, {
          fileId,
          contentType,
          uploadExpiresAt: putExpires * 1000,
          assetExpiresAt: now + ttl * 1000,
          stored: false,
        });
        const base = this.deps.baseUrl();
        return {
          file_id: fileId,
          upload_url: `${base}/storage/uploads/${fileId}?expires=${putExpires}&signature=${this.sign('put', fileId, putExpires)}`,
          headers: { 'Content-Type': contentType, [LENGTH_RANGE]: `0,${MAX_UPLOAD_BYTES}` },
          expires_in: UPLOAD_URL_TTL_SEC,
          asset_url: `${base}/uploads/${fileId}?expires=${getExpires}&signature=${this.sign('get', fileId, getExpires)}`,
          asset_url_expires_in: ttl,
        };
      }),
    };
  }

  /** The PUT to a signed upload URL: refused, as a storage host would, with 403 for what the signature does not allow. */
  async put(req: FastifyRequest<{ Params: { fileId: string } }>, reply: FastifyReply) {
    const { stats, faults, now, disk } = this.deps;
    const refuse = (status: number, why: string, message: string) => {
      stats.uploadRefused(why);
      return sendError(reply, status, message);
    };
    const f = this.issued.get(req.params.fileId);
    if (!f || !this.signed('put', f.fileId, req.query as Record<string, unknown>))
      return refuse(403, 'signature', 'The request signature does not match this upload URL.');
    if (KEY_HEADERS.some((h) => req.headers[h] !== undefined))
      return refuse(403, 'api_key', 'An upload URL is signed already: send it no API key.');
    if (now() >= f.uploadExpiresAt) return refuse(403, 'expired', 'This upload URL has expired; ask for a new one.');
    const type = String(req.headers['content-type'] ?? '').split(';')[0];
    if (type !== f.contentType)
      return refuse(403, 'headers', `Content-Type must be ${f.contentType}, the type this upload URL was signed for.`);
    if (req.headers[LENGTH_RANGE] !== `0,${MAX_UPLOAD_BYTES}`)
      return refuse(
        403,
        'headers',
        `The header ${LENGTH_RANGE} this upload URL was signed with is missing or changed.`,
      );
    if (faults.current.failPuts > 0) {
      faults.merge({ failPuts: faults.current.failPuts - 1 });
      return refuse(503, 'fault', 'Service Unavailable. Please try again later.');
    }
    const bytes = req.body;
    if (!Buffer.isBuffer(bytes) || bytes.length === 0) return refuse(400, 'empty', 'The upload has no bytes.');
    disk.putInput(bytes, f.contentType, f.fileId);
    f.stored = true;
    stats.uploadStored();
    await holdAnswer(() => faults.current.putAnswerDelayMs);
    return reply.code(200).send();
  }

  get(req: FastifyRequest<{ Params: { fileId: string } }>, reply: FastifyReply) {
    const f = this.issued.get(req.params.fileId);
    const stored = f?.stored ? this.deps.disk.get(f.fileId) : undefined;
    if (!f || !stored || !this.signed('get', f.fileId, req.query as Record<string, unknown>))
      return sendError(reply, 404, 'No such upload');
    if (this.deps.now() >= f.assetExpiresAt)
      return sendError(reply, 410, 'This asset URL has expired; upload the file again.');
    sendBytes(req, reply, fileSource(stored.path, stored.size, stored.contentType), null);
  }
}

/** The API call and the two routes of the upload host: PUT (raw bytes of any type, up to 1 GiB) and the public asset. */
export function registerUploads(app: FastifyInstance, uploads: Uploads): void {
  const op = findOperation('POST', REQUEST_URL_PATH);
  if (!op) throw new Error(`the reference has no POST ${REQUEST_URL_PATH}`);
  app.post(REQUEST_URL_PATH, async (req, reply) => {
    const problems = requestProblems(op, req.body);
    if (problems.length) return sendInvalid(reply, problems);
    const { files } = req.body as { files: { content_type: string }[] };
    return reply.send(uploads.requestUrls(files.map((f) => f.content_type)));
  });
  app.get('/uploads/:fileId', (req: FastifyRequest<{ Params: { fileId: string } }>, reply) => uploads.get(req, reply));
  app.register(async (host) => {
    host.removeAllContentTypeParsers();
    host.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_UPLOAD_BYTES }, (_req, body, done) =>
      done(null, body),
    );
    host.put('/storage/uploads/:fileId', (req: FastifyRequest<{ Params: { fileId: string } }>, reply) =>
      uploads.put(req, reply),
    );
  });
}
