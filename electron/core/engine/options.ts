import type { Slugs } from '../../../shared/catalogue/index.ts';
import type { Settings } from '../../../shared/settings.ts';
import type { ApiTarget, ClientOptions } from '../api/client.ts';
import type { Db } from '../db/open.ts';
import type { JobRow } from '../queue/store.ts';
import type { RateLimits } from '../../../shared/service-limits.ts';
import type { PollPolicy } from './poll-policy.ts';
import type { Clock } from '../clock.ts';

export interface EngineOptions {
  db: Db;
  target: () => Promise<ApiTarget>;
  slugs: () => Slugs;
  settings: () => Settings;
  /**
   * Backend.identity(): batches are tagged with it, and only jobs of batches for the backend in use
   * are submitted and polled. Absent (benchmarks, tests of the queue alone): nothing is tagged.
   */
  identity?: () => Promise<string>;
  /** Backend.builtInSandboxUrl(): this process's built-in Sandbox, null when it has not started one. */
  builtInSandboxUrl?: () => Promise<string | null>;
  /**
   * The rates creates and polls are paced to, with each tool's daily cap (core/limits): the
   * service's (SERVICE_RATES) in the app and CLI. Absent (benchmarks, tests of the queue alone): not paced.
   */
  rates?: RateLimits;
  /** How much longer than its window a grant counts (LimiterOptions.safetyMs); default PACE_SAFETY_MS. */
  paceSafetyMs?: number;
  /**
   * The time of the loop's waits, the poll schedule, the rates' windows and the daily caps' UTC days;
   * default realClock. Tests move it (past midnight, or through a paced batch at once).
   */
  clock?: Clock;
  /** Overrides settings.concurrency (CLI --concurrency, benchmarks). */
  concurrency?: number;
  poll?: Partial<PollPolicy>;
  client?: ClientOptions;
  /** Throttle of `jobs.changed` events. */
  eventIntervalMs?: number;
  /** A holder of the queue that stopped heart-beating this long ago is presumed dead. */
  leaseStaleMs?: number;
  downloadAttempts?: number;
  /** How long expired result links are waited for (FetchDeps.expiredPatienceMs); default: the results' lifetime. */
  expiredPatienceMs?: number;
  /** Pause after a create was rate limited and the server named no Retry-After. */
  defaultBackoffMs?: number;
  /** The web host's folder of browser drops (see batchResultsFolder). */
  inbox?: string;
  /** Whose path rules results keep (process.platform; see resultPathProblem): tests pass win32. */
  platform?: string;
  /** Told when a result is saved without the metadata asked for (the log's warning); default stderr. */
  warn?: (message: string) => void;
  /** Told when a runner's tick or a job's step fails unexpectedly (it is retried); default stderr. */
  error?: (message: string) => void;
  /**
   * Asked just before a queued job's create is prepared: null sends it, `wait` leaves it queued saying
   * why, `cancel` cancels it unsent (a shared hot folder's file another machine took).
   */
  beforeCreate?: (job: JobRow) => Promise<null | { wait: string } | { cancel: string }>;
  /** exiftool processes writing results' metadata; default DEFAULT_EXIFTOOL_PROCS (benchmarks vary it). */
  metadataProcs?: number;
}
