import { createHash } from 'node:crypto';
import type { ApiClient } from '../api/client.ts';
import { uploadBytes } from '../api/uploads.ts';
import type { Db } from '../db/open.ts';

/**
 * How long before its end an asset URL is no longer sent: the service fetches an input when it
 * runs the task, which may wait in its queue a while after the create.
 */
export const ASSET_URL_MARGIN_MS = 2 * 3_600_000;

/**
 * Local files for URL-only fields, uploaded through the service's flow and recorded (migration 10)
 * before any create names them: the same bytes are uploaded once per backend while their asset URL
 * has more than the margin left; one nearer its end is asked for again.
 */
export class Uploader {
  private readonly stmts;
  private readonly api: ApiClient;
  /** Uploads under way, by scope and content: jobs sharing a reference wait for the one upload. */
  private readonly inFlight = new Map<string, Promise<string>>();
  private readonly marginMs: number;

  constructor(db: Db, api: ApiClient, marginMs = ASSET_URL_MARGIN_MS) {
    this.api = api;
    this.marginMs = marginMs;
    this.stmts = {
      get: db.prepare(
        'SELECT asset_url AS assetUrl, expires_at AS expiresAt FROM uploads WHERE scope = ? AND sha256 = ? AND content_type = ?',
      ),
      put: db.prepare(
        'INSERT OR REPLACE INTO uploads (scope, sha256, content_type, file_id, asset_url, expires_at, uploaded_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      prune: db.prepare('DELETE FROM uploads WHERE expires_at < ?'),
    };
  }

  /**
   * The asset URL to send for these bytes: recorded for this backend (Backend.identity and base URL)
   * and fresh enough, or uploaded now. `beforeRequest` paces request-url.
   */
  async assetUrl(
    backend: string | null,
    bytes: Buffer,
    contentType: string,
    beforeRequest?: () => void | Promise<void>,
  ): Promise<string> {
    const scope = `${backend ?? ''} ${await this.api.baseUrl()}`;
    const sha = createHash('sha256').update(bytes).digest('hex');
    const known = this.stmts.get.get(scope, sha, contentType) as { assetUrl: string; expiresAt: number } | undefined;
    if (known && known.expiresAt - Date.now() > this.marginMs) return known.assetUrl;
    const key = `${scope}\u0000${sha}\u0000${contentType}`;
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = uploadBytes(this.api, bytes, contentType, beforeRequest)
        .then((up) => {
          this.stmts.prune.run(Date.now());
          this.stmts.put.run(scope, sha, contentType, up.fileId, up.assetUrl, up.assetExpiresAt, Date.now());
          return up.assetUrl;
        })
        .finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }
}
