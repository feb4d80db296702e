import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { SinkConfig } from '../../../../../shared/audit-sinks.ts';
import { sleepOn, type Clock } from '../../../clock.ts';
import type { OutEvent } from '../read.ts';
import { allTaken, retryableStatus, retryAfterMs, SinkFailure, type SendResult, type Sink } from '../sink.ts';

type HecConfig = Extract<SinkConfig, { kind: 'splunk-hec' }>;

/** How long a batch's indexer acknowledgement is waited for before the batch is sent again. */
const ACK_TIMEOUT_MS = 120_000;

/**
 * Splunk HTTP Event Collector: events as concatenated JSON envelopes {time, host, source,
 * sourcetype, event} to /services/collector/event, `Authorization: Splunk <token>`. Each request
 * carries a channel; when the server answers with an ackId (indexer acknowledgement on), the batch
 * counts as delivered only once /services/collector/ack confirms it (the forwarder sends the next
 * ones meanwhile).
 */
export class HecSink implements Sink {
  readonly id: string;
  private readonly cfg: HecConfig;
  private readonly token: string;
  private readonly clock: Clock;
  private readonly channel = randomUUID();
  private readonly prefix: string;

  constructor(cfg: HecConfig, token: string, clock: Clock) {
    this.id = cfg.id;
    this.cfg = cfg;
    this.token = token;
    this.clock = clock;
    const head = {
      host: cfg.host ?? hostname(),
      source: cfg.source,
      sourcetype: cfg.sourcetype,
      ...(cfg.index ? { index: cfg.index } : {}),
    };
    // Everything but time and event, once: `,"host":…,"event":` then the event's JSON text as stored.
    this.prefix = JSON.stringify(head).slice(1, -1);
  }

  private envelope(e: OutEvent): string {
    return `{"time":${(e.ts / 1000).toFixed(3)},${this.prefix},"event":${e.json}}`;
  }

  sizeOf(e: OutEvent): number {
    return Buffer.byteLength(e.json) + this.prefix.length + 40;
  }

  private async post(
    path: string,
    body: string,
    signal: AbortSignal,
  ): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }> {
    let res: Response;
    try {
      res = await fetch(new URL(path, this.cfg.url), {
        method: 'POST',
        headers: {
          authorization: `Splunk ${this.token}`,
          'content-type': 'application/json',
          'x-splunk-request-channel': this.channel,
        },
        body,
        signal,
      });
    } catch (err) {
      if (signal.aborted) throw err;
      throw new SinkFailure(
        `HEC at ${this.cfg.url} unreachable: ${(err as Error).cause ?? (err as Error).message}`,
        true,
      );
    }
    const text = await res.text();
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      json = { text: text.slice(0, 200) };
    }
    return { status: res.status, json, headers: res.headers };
  }

  async send(batch: readonly OutEvent[], signal: AbortSignal): Promise<SendResult> {
    const r = await this.post('/services/collector/event', batch.map((e) => this.envelope(e)).join('\n'), signal);
    const why = `HEC ${r.status}: ${String(r.json.text ?? '')} (code ${String(r.json.code ?? '?')})`;
    if (r.status === 400 && typeof r.json['invalid-event-number'] === 'number') {
      // One event refused: the others are sent again (Splunk may have indexed those before it).
      const bad = r.json['invalid-event-number'];
      if (bad >= 0 && bad < batch.length)
        return { refused: new Map([[bad, why]]), retry: batch.map((_, i) => i).filter((i) => i !== bad) };
    }
    if (r.status !== 200)
      throw new SinkFailure(
        why,
        retryableStatus(r.status),
        retryAfterMs(r.headers.get('retry-after'), this.clock.now()),
      );
    const ackId = r.json.ackId;
    if (typeof ackId === 'number') return { ...allTaken(), confirm: () => this.awaitAck(ackId, signal) };
    return allTaken();
  }

  /** Polls the ack endpoint until the batch is indexed; a batch never confirmed is sent again. */
  private async awaitAck(ackId: number, signal: AbortSignal): Promise<void> {
    const start = this.clock.now();
    for (let wait = 0; ; wait = Math.min(2000, Math.max(25, wait * 2))) {
      if (wait) await sleepOn(this.clock, wait);
      if (signal.aborted) throw signal.reason;
      const r = await this.post('/services/collector/ack', JSON.stringify({ acks: [ackId] }), signal);
      if (r.status !== 200)
        throw new SinkFailure(
          `HEC ack ${r.status}: ${String(r.json.text ?? '')}`,
          retryableStatus(r.status),
          retryAfterMs(r.headers.get('retry-after'), this.clock.now()),
        );
      if ((r.json.acks as Record<string, boolean> | undefined)?.[String(ackId)] === true) return;
      if (this.clock.now() - start > ACK_TIMEOUT_MS)
        throw new SinkFailure(`HEC did not acknowledge batch ${ackId} within ${ACK_TIMEOUT_MS / 1000} s`, true);
    }
  }

  async close(): Promise<void> {}
}
