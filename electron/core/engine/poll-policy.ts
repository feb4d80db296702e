import type { ResultKind } from '../../../shared/catalogue/index.ts';

/**
 * How often a task is asked about: fast at first (most image tasks finish in seconds), then
 * slower as it ages, up to a ceiling that is higher for long tasks such as video.
 */
export interface PollPolicy {
  firstMs: number;
  minMs: number;
  maxMs: Record<ResultKind, number>;
  /** The interval grows as this fraction of the task's age. */
  ageFactor: number;
  /** A list that did not answer is asked again after this, doubling each time up to 5 minutes. */
  listRetryMs: number;
}

export const DEFAULT_POLL: PollPolicy = {
  firstMs: 1000,
  minMs: 1000,
  maxMs: { image: 5000, text: 5000, audio: 10_000, video: 20_000 },
  ageFactor: 0.25,
  listRetryMs: 10_000,
};

/** MEDIADESK_POLL_MIN_MS: tests ask tasks' states sooner, in every host alike; undefined when unset. */
export function pollFromEnv(env: NodeJS.ProcessEnv): Partial<PollPolicy> | undefined {
  const ms = Number(env.MEDIADESK_POLL_MIN_MS);
  return env.MEDIADESK_POLL_MIN_MS && ms > 0 ? { firstMs: ms, minMs: ms } : undefined;
}

export function nextPollDelay(p: PollPolicy, kind: ResultKind, ageMs: number): number {
  return Math.round(Math.min(p.maxMs[kind], Math.max(p.minMs, ageMs * p.ageFactor)));
}

/** A task no list shows is asked by id no sooner than this fraction of its age after its last ask. */
export const BY_ID_AGE_FACTOR = 0.5;
/** ...and at least once in this many of its kind's longest poll interval, whatever was learned. */
export const BY_ID_CEILING_TIMES = 6;

/**
 * When a newly created task is first asked about: at once on the usual schedule while nothing of
 * its tool is known; else when its tool's tasks usually end (half that when `early`, see
 * UsualDurations.explore), but no later than a task no list shows would be asked by id.
 */
export function firstAskDelay(p: PollPolicy, kind: ResultKind, usualMs: number | null, early: boolean): number {
  if (usualMs === null) return p.firstMs;
  return Math.max(p.firstMs, Math.min(early ? usualMs / 2 : usualMs, p.maxMs[kind] * BY_ID_CEILING_TIMES));
}

/**
 * Whether a task that no list shows is to be asked by id now. Before its tool's usual duration is
 * known only the group's oldest few (`probe`) are asked, on the list's schedule; the rest wait for
 * what they teach. Then each is asked once its usual duration has passed, and after that less often
 * as it ages, so a task costs about one request by id however short the list. None waits longer
 * than a few of its kind's longest intervals.
 */
export function byIdDue(
  p: PollPolicy,
  kind: ResultKind,
  task: { submittedAt: number; askedAt: number | null },
  usualMs: number | null,
  probe: boolean,
  now: number,
): boolean {
  const since = now - (task.askedAt ?? task.submittedAt);
  if (since >= p.maxMs[kind] * BY_ID_CEILING_TIMES) return true;
  if (usualMs === null) {
    if (!probe) return false;
    return since >= (task.askedAt === null ? p.firstMs : nextPollDelay(p, kind, task.askedAt - task.submittedAt));
  }
  if (now - task.submittedAt < usualMs) return false;
  if (task.askedAt === null || task.askedAt - task.submittedAt < usualMs) return true;
  const gap = Math.min(
    p.maxMs[kind] * BY_ID_CEILING_TIMES,
    Math.max(p.minMs, (task.askedAt - task.submittedAt) * BY_ID_AGE_FACTOR),
  );
  return since >= gap;
}
