import type { OutEvent } from './read.ts';

/** What a sink made of one request: the events it refused (4xx for them alone) and those to send again. */
export interface SendResult {
  /** Index in the batch -> the sink's reason. */
  refused: Map<number, string>;
  /** Indexes the sink did not take this time (an item's 429 or 5xx): sent again after a wait. */
  retry: number[];
  /** Resolves once the server confirms the events it took are stored (HEC's indexer ack); rejects with a SinkFailure. */
  confirm?: () => Promise<void>;
}

/** A whole request that failed: `retryable` (429, 5xx, the network) waits and tries again; otherwise the sink stops. */
export class SinkFailure extends Error {
  override name = 'SinkFailure';
  readonly retryable: boolean;
  /** The server's Retry-After, in ms. */
  readonly retryAfterMs: number | null;
  constructor(message: string, retryable: boolean, retryAfterMs: number | null = null) {
    super(message);
    this.retryable = retryable;
    this.retryAfterMs = retryAfterMs;
  }
}

export interface Sink {
  readonly id: string;
  /** The size of one event in a request (bytes), for the 5 MB bound. */
  sizeOf(e: OutEvent): number;
  /** A request never holds events of two of these (the file sink: one file per hour). */
  groupOf?(e: OutEvent): string;
  send(batch: readonly OutEvent[], signal: AbortSignal): Promise<SendResult>;
  close(): Promise<void>;
}

export const allTaken = (): SendResult => ({ refused: new Map(), retry: [] });

/** Retry-After as seconds or an HTTP date, in ms; null when absent or unreadable. */
export function retryAfterMs(value: string | string[] | null | undefined, now: number): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v === null || v === '') return null;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** Whether an HTTP status is worth sending again after a wait. */
export const retryableStatus = (status: number) => status === 408 || status === 429 || status >= 500;
