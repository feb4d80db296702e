import { z } from 'zod';
import { rngFrom, seedOf, type Rng } from './rng.ts';

/**
 * Holds an answer for the delay its fault gives when it came in, or less once the fault is lowered:
 * a test holds a request in flight (a long delay) and lets it go (0) once it has seen what it waits for.
 */
export async function holdAnswer(delayMs: () => number): Promise<void> {
  const start = Date.now();
  const hold = delayMs();
  while (Date.now() - start < Math.min(hold, delayMs()))
    await new Promise((res) => setTimeout(res, Math.min(25, hold)));
}

/** Faults on demand (control API). Probabilities are drawn from a seeded stream. */
export interface Faults {
  taskDurationMs: number;
  failureRate: number;
  rate429: number;
  retryAfterSec: number;
  rate500: number;
  rate503: number;
  resetRate: number;
  /** 0 = unthrottled. */
  slowDownloadBytesPerSec: number;
  truncateDownloads: boolean;
  expireResultUrls: boolean;
  /** Video and audio results are served as bytes no player reads, under their usual type and name. */
  damagedMedia: boolean;
  /**
   * How workflow-app runs created from now on end when they do not fail: the service's other two
   * endings (api-notes: `completed_with_errors`, `cancelled`) on demand.
   */
  appRunEnding: AppRunEnding;
  /**
   * How long the answer to a workflow-app run POST is held after the run is recorded (and
   * charged): the server took the run, the 202 is still on its way. 0 = answer at once.
   */
  appRunAnswerDelayMs: number;
  /** How long the answer to an app's definition (`GET /v1/ai/apps/{id}`) is held: a slow server while a form loads. 0 = at once. */
  appDetailDelayMs: number;
  /** How long each answer of the audit-log search is held: a slow server while a sync walks its pages. 0 = at once. */
  auditDelayMs: number;
  /** The `error_message` of a failed app run, when not the Sandbox's own: a server's text, whatever it holds. */
  appRunFailureMessage: string | null;
  /** This family of the workflow-app endpoints answers 404 as a path the server lacks: a service before or after flows. */
  missingAppFamily: 'flows' | 'apps' | null;
  /** Creates answer 400 with the caller's key in the message and a field's reason: a server that echoes the key. */
  echoKey: boolean;
  /** PUTs to upload URLs that answer 503 before one is stored again (counted down per PUT). */
  failPuts: number;
  /** The `asset_url_expires_in` of upload URLs handed out from now on (the service: about a day). */
  assetUrlExpiresInSec: number;
  /** How long the answer to a PUT is held after its bytes are stored: the upload done, the client not told yet. */
  putAnswerDelayMs: number;
  /**
   * A task list shows only the caller's newest this many tasks of the collection (null: all of them,
   * as the description says): a service that windows its lists, which declare no paging.
   */
  listWindow: number | null;
  /** List paths whose GET answers 404 (`*`: every list), while their tasks still answer by id. */
  listNotFound: string[];
  /** Every 2xx answer of the API echoes the caller's key in its texts and URLs (see echo.ts). */
  echoKeyInAnswers: boolean;
  /**
   * Requests whose path starts with one of these are taken and never answered (the connection stays
   * open): a server that hangs. `*` hangs every API and download request. Empty = off.
   */
  neverAnswer: string[];
  /** The SIEM stand-ins (siem.ts): the share of their requests answered 429 (with retryAfterSec) or 503. */
  siemRate429: number;
  siemRate503: number;
  /** Events (by event_id) the SIEM stand-ins refuse with 400, each time they are sent. */
  siemRefuse: string[];
  /** The HEC stand-in has indexer acknowledgement on: a channel is required and each batch gets an ackId. */
  hecAck: boolean;
  /** The share of HEC batches whose ack is never confirmed (the events lost before indexing). */
  hecAckLoss: number;
}

export const APP_RUN_ENDINGS = ['completed', 'completed_with_errors', 'cancelled'] as const;
export type AppRunEnding = (typeof APP_RUN_ENDINGS)[number];

export const DEFAULT_TASK_DURATION_MS = 3000;

export function defaultFaults(taskDurationMs = DEFAULT_TASK_DURATION_MS): Faults {
  return {
    taskDurationMs,
    failureRate: 0,
    rate429: 0,
    retryAfterSec: 1,
    rate500: 0,
    rate503: 0,
    resetRate: 0,
    slowDownloadBytesPerSec: 0,
    truncateDownloads: false,
    expireResultUrls: false,
    damagedMedia: false,
    appRunEnding: 'completed',
    appRunAnswerDelayMs: 0,
    appDetailDelayMs: 0,
    auditDelayMs: 0,
    appRunFailureMessage: null,
    missingAppFamily: null,
    echoKey: false,
    failPuts: 0,
    assetUrlExpiresInSec: 86_400,
    putAnswerDelayMs: 0,
    listWindow: null,
    listNotFound: [],
    echoKeyInAnswers: false,
    neverAnswer: [],
    siemRate429: 0,
    siemRate503: 0,
    siemRefuse: [],
    hecAck: true,
    hecAckLoss: 0,
  };
}

const rate = z.number().min(0).max(1);
export const faultsPatchSchema = z
  .object({
    taskDurationMs: z.number().int().min(0).max(3_600_000),
    failureRate: rate,
    rate429: rate,
    retryAfterSec: z.number().int().min(0).max(86_400),
    rate500: rate,
    rate503: rate,
    resetRate: rate,
    slowDownloadBytesPerSec: z.number().int().min(0),
    truncateDownloads: z.boolean(),
    expireResultUrls: z.boolean(),
    damagedMedia: z.boolean(),
    appRunEnding: z.enum(APP_RUN_ENDINGS),
    appRunAnswerDelayMs: z.number().int().min(0).max(600_000),
    appDetailDelayMs: z.number().int().min(0).max(600_000),
    auditDelayMs: z.number().int().min(0).max(600_000),
    appRunFailureMessage: z.string().min(1).max(2000).nullable(),
    missingAppFamily: z.enum(['flows', 'apps']).nullable(),
    echoKey: z.boolean(),
    failPuts: z.number().int().min(0).max(1000),
    assetUrlExpiresInSec: z
      .number()
      .int()
      .min(1)
      .max(7 * 86_400),
    putAnswerDelayMs: z.number().int().min(0).max(600_000),
    listWindow: z.number().int().min(0).max(1_000_000).nullable(),
    listNotFound: z.array(z.string().min(1).max(300)).max(100),
    echoKeyInAnswers: z.boolean(),
    neverAnswer: z.array(z.string().regex(/^(\*|\/.*)$/, 'a path starting with / or *')).max(50),
    siemRate429: rate,
    siemRate503: rate,
    siemRefuse: z.array(z.string().min(1).max(500)).max(10_000),
    hecAck: z.boolean(),
    hecAckLoss: rate,
  })
  .partial()
  .strict();

export type InjectedFault = { kind: 'reset' } | { kind: 'status'; status: 429 | 500 | 503 } | null;

export class FaultState {
  current: Faults;
  private readonly initialDuration: number;
  private rng: Rng;

  constructor(seed: number, taskDurationMs?: number) {
    this.initialDuration = taskDurationMs ?? DEFAULT_TASK_DURATION_MS;
    this.current = defaultFaults(this.initialDuration);
    this.rng = rngFrom(seedOf(seed, 'faults'));
  }

  merge(patch: Partial<Faults>): Faults {
    this.current = { ...this.current, ...patch };
    return this.current;
  }

  /** Back to the defaults the sandbox started with (the start-up task duration included). */
  reset(): void {
    this.current = defaultFaults(this.initialDuration);
  }

  /** One draw per request: which fault, if any, this request suffers. */
  draw(): InjectedFault {
    const f = this.current;
    if (f.resetRate > 0 && this.rng() < f.resetRate) return { kind: 'reset' };
    if (f.rate429 > 0 && this.rng() < f.rate429) return { kind: 'status', status: 429 };
    if (f.rate500 > 0 && this.rng() < f.rate500) return { kind: 'status', status: 500 };
    if (f.rate503 > 0 && this.rng() < f.rate503) return { kind: 'status', status: 503 };
    return null;
  }

  /** Whether a request to this path is left unanswered (the `neverAnswer` fault). */
  hangs(path: string): boolean {
    return this.current.neverAnswer.some((p) => p === '*' || path.startsWith(p));
  }

  /** One draw per request to a SIEM stand-in: 429, 503 or none. */
  siemDraw(): 429 | 503 | null {
    const f = this.current;
    if (f.siemRate429 > 0 && this.rng() < f.siemRate429) return 429;
    if (f.siemRate503 > 0 && this.rng() < f.siemRate503) return 503;
    return null;
  }

  /** Whether this HEC batch is lost before indexing (hecAckLoss): its ack never comes. */
  losesAck(): boolean {
    return this.current.hecAckLoss > 0 && this.rng() < this.current.hecAckLoss;
  }

  failsNext(): boolean {
    return this.current.failureRate > 0 && this.rng() < this.current.failureRate;
  }
}

export const FAULT_MESSAGES = {
  429: 'Too many requests',
  500: 'Internal server error',
  503: 'Service Unavailable. Please try again later.',
} as const;
