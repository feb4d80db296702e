import { createHmac, randomUUID } from 'node:crypto';
import { isLoopbackUrl } from '../../shared/loopback.ts';
import { rngFrom, seedOf } from './rng.ts';
import { isFinal, statusAt, STATUSES, type Task, type TaskStatus } from './tasks.ts';

/** Delivery attempts per notification and the pause before each retry (retries are undocumented upstream). */
const RETRY_DELAYS_MS = [0, 500, 2000];
const TICK_MS = 50;

/** The signing secret, `whsec_<base64 key>`, deterministic for the seed (printed by the CLI, in /__sandbox/webhook-secret). */
export function webhookSecret(seed: number): string {
  const rng = rngFrom(seedOf(seed, 'webhook-secret'));
  return `whsec_${Buffer.from(Array.from({ length: 24 }, () => Math.floor(rng() * 256))).toString('base64')}`;
}

/** Headers of api-notes: HMAC-SHA256 over "{id}.{timestamp}.{body}", base64, as `v1,<sig>`. */
export function signWebhook(secret: string, id: string, timestampSec: number, body: string): Record<string, string> {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const sig = createHmac('sha256', key).update(`${id}.${timestampSec}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampSec), 'webhook-signature': `v1,${sig}` };
}

/** Builds the notification body for a task as of one status (the by-id envelope). */
export type WebhookBody = (task: Task, status: TaskStatus) => unknown;
interface Watched {
  task: Task;
  notified: number;
  url: string;
  body: WebhookBody;
  chain: Promise<void>;
}

/**
 * Sends one notification per status change of watched tasks. A ticker compares each task's
 * clock-derived status with what was last sent, so no timer per task is needed.
 */
export class WebhookDispatcher {
  private watched = new Map<string, Watched>();
  private timer: NodeJS.Timeout;
  private inflight = new Set<Promise<void>>();
  delivered = 0;
  failed = 0;
  private readonly secret: string;
  private readonly now: () => number;

  constructor(secret: string, now: () => number) {
    this.secret = secret;
    this.now = now;
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  watch(task: Task, url: string, body: WebhookBody): void {
    // Only loopback receivers: the Sandbox never calls out beyond this machine.
    if (!isLoopbackUrl(url)) return;
    this.watched.set(task.id, { task, notified: 0, url, body, chain: Promise.resolve() });
  }

  tick(): void {
    const now = this.now();
    for (const w of this.watched.values()) {
      const status = statusAt(w.task, now);
      const idx = STATUSES.indexOf(status);
      // IN_PROGRESS is always sent before the final state, even when one tick spans both.
      if (w.notified < 1 && idx >= 1) {
        w.notified = 1;
        this.send(w, w.body(w.task, 'IN_PROGRESS'));
      }
      if (idx >= 2 && w.notified < idx) {
        w.notified = idx;
        this.send(w, w.body(w.task, status));
      }
      if (isFinal(status)) this.watched.delete(w.task.id);
    }
  }

  /** Deliveries of one task are chained so receivers see its states in order. */
  private send(w: Watched, payload: unknown): void {
    const url = w.url;
    const body = JSON.stringify(payload);
    const id = `msg_${randomUUID().replace(/-/g, '')}`;
    const p = w.chain.then(async () => {
      for (const delay of RETRY_DELAYS_MS) {
        if (delay) await new Promise((r) => setTimeout(r, delay).unref());
        const headers = {
          'content-type': 'application/json',
          ...signWebhook(this.secret, id, Math.floor(Date.now() / 1000), body),
        };
        try {
          const res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(5000) });
          await res.arrayBuffer().catch(() => undefined);
          if (res.ok) return void this.delivered++;
        } catch {
          // retried below
        }
      }
      this.failed++;
    });
    w.chain = p;
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.watched.clear();
    await Promise.race([Promise.allSettled([...this.inflight]), new Promise((r) => setTimeout(r, 1000))]);
  }
}
