import { Client as EsClient, errors as esErrors } from '@elastic/elasticsearch';
import { Client as OsClient, errors as osErrors } from '@opensearch-project/opensearch';
import type { SinkConfig } from '../../../../../shared/audit-sinks.ts';
import type { Clock } from '../../../clock.ts';
import type { OutEvent } from '../read.ts';
import { retryableStatus, retryAfterMs, SinkFailure, type SendResult, type Sink } from '../sink.ts';

type BulkConfig = Extract<SinkConfig, { kind: 'opensearch' | 'elasticsearch' }>;
type Item = { status: number; error?: { type?: string; reason?: string } };
interface ErrorLike {
  statusCode?: number;
  headers?: Record<string, string | string[] | undefined>;
  body?: unknown;
  message: string;
}

/**
 * OpenSearch or Elasticsearch `_bulk` through the official client: each event a `create` with
 * `_id` = event_id, so a batch sent again cannot index an event twice, and its 409 (already there)
 * counts as delivered. An item's 429 or 5xx is sent again; its other 4xx is a refusal.
 */
export class BulkSink implements Sink {
  readonly id: string;
  private readonly cfg: BulkConfig;
  private readonly clock: Clock;
  private readonly bulk: (
    operations: string[],
    signal: AbortSignal,
  ) => Promise<{ errors: boolean; items: Record<string, Item>[] }>;
  private readonly closeClient: () => Promise<void>;

  constructor(cfg: BulkConfig, secret: string | null, clock: Clock) {
    this.id = cfg.id;
    this.cfg = cfg;
    this.clock = clock;
    // The clients' own retries are off: the forwarder waits with jitter and keeps the watermark.
    if (cfg.kind === 'elasticsearch') {
      let auth: { username: string; password: string } | { apiKey: string } | undefined;
      if (secret) auth = cfg.username ? { username: cfg.username, password: secret } : { apiKey: secret };
      const client = new EsClient({ node: cfg.url, auth, maxRetries: 0, requestTimeout: 120_000 });
      this.bulk = (operations, signal) =>
        client.bulk({ index: cfg.index, operations: operations as never }, { signal }) as never;
      this.closeClient = () => client.close();
    } else {
      const auth = secret && cfg.username ? { username: cfg.username, password: secret } : undefined;
      const client = new OsClient({ node: cfg.url, auth, maxRetries: 0, requestTimeout: 120_000 });
      this.bulk = async (operations, signal) => {
        const req = client.bulk({ index: cfg.index, body: operations as never });
        const abort = () => req.abort();
        signal.addEventListener('abort', abort);
        try {
          return (await req).body as never;
        } finally {
          signal.removeEventListener('abort', abort);
        }
      };
      this.closeClient = () => client.close();
    }
  }

  sizeOf(e: OutEvent): number {
    return Buffer.byteLength(e.json) + e.eventId.length + 30;
  }

  async send(batch: readonly OutEvent[], signal: AbortSignal): Promise<SendResult> {
    const operations: string[] = [];
    for (const e of batch) operations.push(JSON.stringify({ create: { _id: e.eventId } }), e.json);
    let answer: { errors: boolean; items: Record<string, Item>[] };
    try {
      answer = await this.bulk(operations, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      throw this.failure(err as ErrorLike);
    }
    const result: SendResult = { refused: new Map(), retry: [] };
    if (!answer.errors) return result;
    answer.items.forEach((wrapped, i) => {
      const item = Object.values(wrapped)[0];
      if (!item || item.status < 300 || item.status === 409) return;
      if (retryableStatus(item.status)) result.retry.push(i);
      else result.refused.set(i, `${item.status} ${item.error?.type ?? ''}: ${item.error?.reason ?? ''}`.trim());
    });
    return result;
  }

  private failure(err: ErrorLike): SinkFailure {
    const isResponse = err instanceof esErrors.ResponseError || err instanceof osErrors.ResponseError;
    const status = isResponse ? (err.statusCode ?? 0) : 0;
    if (!status) return new SinkFailure(`${this.cfg.kind} at ${this.cfg.url}: ${err.message}`, true);
    const reason = (err.body as { error?: { reason?: string } } | undefined)?.error?.reason ?? err.message;
    return new SinkFailure(
      `${this.cfg.kind} _bulk ${status}: ${reason}`,
      retryableStatus(status),
      retryAfterMs(err.headers?.['retry-after'], this.clock.now()),
    );
  }

  close(): Promise<void> {
    return this.closeClient();
  }
}
