import { z } from 'zod';
import type { DailyCaps, PlanTier, RateLimits } from '../../shared/service-limits.ts';
import {
  DEFAULT_DAILY_CAPS,
  dailyCapOf,
  nextUtcMidnight,
  PLAN_TIERS,
  SERVICE_RATES,
  utcDay,
} from '../../shared/service-limits.ts';

export interface LimitsConfig extends RateLimits {
  /** Per plan tier, creates per tool per UTC day (`*`: every tool not named). */
  caps: Record<PlanTier, DailyCaps>;
}

/** `service`: the service's rates and the plans' caps; `off`: nothing is limited (the default). */
export type LimitsOption = 'service' | 'off' | LimitsConfig;

const positive = z.number().positive().max(1_000_000);
const capsTable = z.record(z.string().min(1), z.number().int().min(0));
export const limitsOptionSchema = z.union([
  z.literal('service'),
  z.literal('off'),
  z
    .object({
      burstPerSec: positive,
      burstWindowSec: positive,
      averagePerSec: positive,
      averageWindowSec: positive,
      caps: z.object(Object.fromEntries(PLAN_TIERS.map((p) => [p, capsTable])) as Record<PlanTier, typeof capsTable>),
    })
    .strict(),
]);

export const SERVICE_LIMITS: LimitsConfig = { ...SERVICE_RATES, caps: DEFAULT_DAILY_CAPS };

export type LimitReason = 'burst' | 'average' | 'daily_cap';
export type LimitVerdict = { ok: true } | { ok: false; reason: LimitReason; retryAfterSec: number };

/** A key's request times within the longer window, oldest first. */
class Window {
  times: number[] = [];
  prune(before: number): void {
    let i = 0;
    while (i < this.times.length && this.times[i] <= before) i++;
    if (i) this.times.splice(0, i);
  }
  /** How many requests fall after `since`, and when the first of them leaves the window. */
  since(since: number): { count: number; oldest: number | undefined } {
    let i = this.times.length;
    while (i > 0 && this.times[i - 1] > since) i--;
    return { count: this.times.length - i, oldest: this.times[i] };
  }
}

/**
 * The service's limits as the Sandbox enforces them, per key: every /v1 request counts toward the
 * burst and average windows (ones they refuse do not), and each accepted create toward its tool's cap.
 */
export class ServiceLimits {
  private option: LimitsOption;
  private readonly initial: LimitsOption;
  private windows = new Map<string, Window>();
  private capUses = new Map<string, number>();
  limited: Record<LimitReason, number> = { burst: 0, average: 0, daily_cap: 0 };

  constructor(option: LimitsOption = 'off') {
    this.initial = option;
    this.option = option;
  }

  get current(): { mode: 'service' | 'off' | 'custom'; limits: LimitsConfig | null } {
    const limits = this.config();
    return { mode: typeof this.option === 'string' ? this.option : 'custom', limits };
  }

  set(option: LimitsOption): void {
    this.option = option;
  }

  private config(): LimitsConfig | null {
    if (this.option === 'off') return null;
    return this.option === 'service' ? SERVICE_LIMITS : this.option;
  }

  /** One /v1 request of `key` at `nowMs`: counted when let through, refused past a rate. */
  request(key: string, nowMs: number): LimitVerdict {
    const c = this.config();
    if (!c) return { ok: true };
    const w = this.windows.get(key) ?? this.windows.set(key, new Window()).get(key)!;
    w.prune(nowMs - Math.max(c.burstWindowSec, c.averageWindowSec) * 1000);
    const checks: [LimitReason, number, number][] = [
      ['burst', c.burstPerSec, c.burstWindowSec],
      ['average', c.averagePerSec, c.averageWindowSec],
    ];
    for (const [reason, perSec, windowSec] of checks) {
      const { count, oldest } = w.since(nowMs - windowSec * 1000);
      if (count >= Math.floor(perSec * windowSec)) {
        this.limited[reason]++;
        const waitMs = (oldest ?? nowMs) + windowSec * 1000 - nowMs;
        return { ok: false, reason, retryAfterSec: Math.max(1, Math.ceil(waitMs / 1000)) };
      }
    }
    w.times.push(nowMs);
    return { ok: true };
  }

  /** One create of `toolId` by `key` on `plan`: taken from the day's cap, or refused until midnight UTC. */
  create(key: string, plan: PlanTier, toolId: string, nowMs: number): LimitVerdict {
    const c = this.config();
    if (!c) return { ok: true };
    const id = `${key}\u0000${toolId}\u0000${utcDay(nowMs)}`;
    const used = this.capUses.get(id) ?? 0;
    if (used >= dailyCapOf(c.caps[plan] ?? {}, toolId)) {
      this.limited.daily_cap++;
      return { ok: false, reason: 'daily_cap', retryAfterSec: Math.ceil((nextUtcMidnight(nowMs) - nowMs) / 1000) };
    }
    this.capUses.set(id, used + 1);
    return { ok: true };
  }

  /** Back to the start-up setting, every window and cap count zeroed. */
  reset(): void {
    this.option = this.initial;
    this.windows.clear();
    this.capUses.clear();
    this.limited = { burst: 0, average: 0, daily_cap: 0 };
  }
}
