import type { Clock } from '../../clock.ts';
import { wholeNumberFromEnv } from '../../env-number.ts';
import type { OutEvent, ArchiveReader } from './read.ts';
import { SinkFailure, type SendResult, type Sink } from './sink.ts';
import type { DeadLetter, Watermarks } from './watermarks.ts';

/** The bounds of one request (issue #46): at most 1,000 events or 5 MB. */
export const MAX_BATCH_EVENTS = 1000;
export const MAX_BATCH_BYTES = 5 * 1024 * 1024;
/**
 * MEDIADESK_AUDIT_FORWARD_BATCH: fewer events a request (never more than MAX_BATCH_EVENTS), so tests
 * cross as many requests, failures and kills with fewer events; undefined when unset.
 */
export function batchEventsFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const n = wholeNumberFromEnv(env, 'MEDIADESK_AUDIT_FORWARD_BATCH');
  return n === undefined ? undefined : Math.min(n, MAX_BATCH_EVENTS);
}
const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 60_000;
/** Failed attempts in a row (429, 5xx, the network) before a run gives up on a sink; the next run tries again. */
export const MAX_ATTEMPTS = 10;
/** Requests sent while the oldest awaits its confirmation (HEC's indexer ack takes seconds on a real server). */
const IN_FLIGHT = 8;

export interface ForwardReport {
  sinkId: string;
  /** busy: another process forwards this sink now (lease.ts); nothing was sent. */
  outcome: 'complete' | 'failed' | 'stopped' | 'busy';
  delivered: number;
  refused: number;
  requests: number;
  retries: number;
  error: string | null;
}

export interface ForwardRun {
  sink: Sink;
  reader: ArchiveReader;
  marks: Watermarks;
  clock: Clock;
  /** Jitter's randomness: [0, 1). */
  random?: () => number;
  signal?: AbortSignal;
  maxAttempts?: number;
  onBatch?: (r: ForwardReport) => void;
  /** A request failed and is sent again after `waitMs`. */
  onRetry?: (sinkId: string, error: string, waitMs: number) => void;
  /** Events a request at most, and read from the archive at a time (5,000 held 600 MB over 1,000,000 against 220). */
  maxBatchEvents?: number;
}

class GaveUp extends Error {}
/** A confirmation failed: read again from the watermark. */
class Resend extends Error {}

interface Flight {
  batch: OutEvent[];
  behind: boolean;
  dead: DeadLetter[];
  confirm: Promise<void>;
}

/** How long to wait before attempt `attempt` (1 = the first retry): the server's Retry-After, else exponential with jitter. */
export function backoffMs(attempt: number, retryAfter: number | null, random: () => number): number {
  if (retryAfter !== null) return retryAfter + Math.floor(random() * Math.min(1000, retryAfter * 0.1));
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (attempt - 1));
  return Math.floor(ceiling / 2 + (random() * ceiling) / 2);
}

function waitOn(clock: Clock, ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clock.clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', stop, { once: true });
  });
}

/** Cuts events (in order) into requests within the bounds, never mixing two of the sink's groups. */
export function* requests(
  sink: Sink,
  events: readonly OutEvent[],
  maxEvents = MAX_BATCH_EVENTS,
): Generator<OutEvent[]> {
  let batch: OutEvent[] = [];
  let bytes = 0;
  let group: string | undefined;
  for (const e of events) {
    const size = sink.sizeOf(e);
    const g = sink.groupOf?.(e);
    if (batch.length && (batch.length >= maxEvents || bytes + size > MAX_BATCH_BYTES || g !== group)) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(e);
    bytes += size;
    group = g;
  }
  if (batch.length) yield batch;
}

/**
 * Delivers a sink's events from its watermark to the archive's end, then returns. At least once:
 * the watermark moves (one transaction) only after the sink took a whole request; a crash resends
 * that request, whose events the sink tells apart by event_id.
 */
export async function forwardSink(run: ForwardRun): Promise<ForwardReport> {
  const { sink, reader, marks, clock, signal } = run;
  const random = run.random ?? Math.random;
  const maxAttempts = run.maxAttempts ?? MAX_ATTEMPTS;
  const chunk = run.maxBatchEvents ?? MAX_BATCH_EVENTS;
  // prettier-ignore
  const report: ForwardReport = { sinkId: sink.id, outcome: 'complete', delivered: 0, refused: 0, requests: 0, retries: 0, error: null };
  let attempt = 0;

  /** Records a failed request, then waits its backoff, or gives up (not retryable, too many in a row). */
  const failed = async (err: SinkFailure) => {
    attempt++;
    marks.failure(sink.id, err.message, clock.now());
    report.error = err.message;
    if (!err.retryable || attempt >= maxAttempts) throw new GaveUp(err.message);
    report.retries++;
    const wait = backoffMs(attempt, err.retryAfterMs, random);
    run.onRetry?.(sink.id, err.message, wait);
    await waitOn(clock, wait, signal);
  };

  const acknowledge = (f: Flight) => {
    const last = f.batch[f.batch.length - 1];
    marks.acknowledged(
      sink.id,
      {
        to: f.behind ? null : { ts: last.ts, eventId: last.eventId },
        behindSeqs: f.behind ? f.batch.map((e) => e.seq) : [],
        delivered: f.batch.length - f.dead.length,
        refused: f.dead,
      },
      clock.now(),
    );
    report.delivered += f.batch.length - f.dead.length;
    report.refused += f.dead.length;
    run.onBatch?.(report);
  };

  /** Requests the server took whose confirmation (HEC's indexer ack) is awaited, oldest first. */
  const inflight: Flight[] = [];
  /**
   * The watermark moves for the oldest in flight once it is confirmed. One not confirmed sends
   * everything after the watermark again (the server holds the later ones at most twice).
   */
  const settleOldest = async () => {
    const f = inflight.shift()!;
    try {
      await f.confirm;
    } catch (err) {
      await Promise.allSettled(inflight.splice(0).map((x) => x.confirm));
      if (!(err instanceof SinkFailure)) throw err;
      await failed(err);
      throw new Resend();
    }
    acknowledge(f);
  };

  const deliver = async (batch: OutEvent[], behind: boolean) => {
    let pending = batch.map((_, i) => i);
    const dead: DeadLetter[] = [];
    const confirms: Promise<void>[] = [];
    while (pending.length) {
      if (signal?.aborted) throw signal.reason;
      const sent = pending.map((i) => batch[i]);
      let r: SendResult;
      try {
        report.requests++;
        r = await sink.send(sent, signal ?? new AbortController().signal);
      } catch (err) {
        if (!(err instanceof SinkFailure)) throw err;
        await failed(err);
        continue;
      }
      if (r.confirm) confirms.push(r.confirm());
      for (const [i, reason] of r.refused) dead.push({ eventId: sent[i].eventId, ts: sent[i].ts, reason });
      const next = r.retry.map((i) => pending[i]);
      // Items the server could not take now (429, 5xx) wait; those beside a refused one go again at once.
      if (next.length && !r.refused.size)
        await failed(new SinkFailure(`${sink.id}: ${next.length} event(s) not taken, sent again`, true));
      pending = next;
    }
    attempt = 0;
    report.error = null;
    const confirm = Promise.all(confirms).then(() => {});
    confirm.catch(() => {});
    inflight.push({ batch, behind, dead, confirm });
    // Late events go one at a time; the others keep up to IN_FLIGHT requests waiting for their confirmation.
    while (inflight.length >= (behind || !confirms.length ? 1 : IN_FLIGHT)) await settleOldest();
  };

  const drain = async () => {
    while (inflight.length) await settleOldest();
  };

  try {
    // Where reading goes on: the last request sent, ahead of the watermark while requests are in flight.
    let cursor = marks.state(sink.id).watermark;
    for (;;) {
      try {
        const late = reader.behindOf(sink.id, chunk);
        if (late.length) {
          await drain();
          for (const batch of requests(sink, late, chunk)) await deliver(batch, true);
          continue;
        }
        const events = reader.after(cursor, chunk);
        if (!events.length) {
          await drain();
          break;
        }
        for (const batch of requests(sink, events, chunk)) {
          await deliver(batch, false);
          const last = batch[batch.length - 1];
          cursor = { ts: last.ts, eventId: last.eventId };
        }
      } catch (err) {
        if (!(err instanceof Resend)) throw err;
        cursor = marks.state(sink.id).watermark;
      }
    }
  } catch (err) {
    await Promise.allSettled(inflight.map((x) => x.confirm));
    if (err instanceof GaveUp) {
      report.outcome = 'failed';
      report.error = err.message;
    } else if (signal?.aborted) report.outcome = 'stopped';
    else throw err;
  }
  return report;
}
