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
}

export const DEFAULT_POLL: PollPolicy = {
  firstMs: 1000,
  minMs: 1000,
  maxMs: { image: 5000, text: 5000, audio: 10_000, video: 20_000 },
  ageFactor: 0.25,
};

export function nextPollDelay(p: PollPolicy, kind: ResultKind, ageMs: number): number {
  return Math.round(Math.min(p.maxMs[kind], Math.max(p.minMs, ageMs * p.ageFactor)));
}
