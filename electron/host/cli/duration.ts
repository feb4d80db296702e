import { UsageError } from './command.ts';

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** setTimeout's own ceiling (2^31 - 1 ms, ~24.8 days): a longer limit would fire at once. */
const MAX_MS = 2 ** 31 - 1;

/** A time limit given on the command line (`90`, `90s`, `10m`, `1.5h`, `2d`; seconds without a unit), in ms. */
export function parseDuration(flag: string, raw: string): number {
  const m = /^(\d+(?:\.\d+)?)([smhd]?)$/.exec(raw.trim());
  const ms = m ? Math.round(Number(m[1]) * UNIT_MS[m[2] || 's']) : NaN;
  if (!m || !(ms >= 1000))
    throw new UsageError(`${flag} must be a duration of at least 1 second, such as 90s, 10m or 2h, got "${raw}"`);
  if (ms > MAX_MS) throw new UsageError(`${flag} must be at most 24 days, got "${raw}"`);
  return ms;
}

/** `raw` as the user wrote it, for messages ("gave up after 10m"); seconds get their unit. */
const durationLabel = (raw: string): string => (/^\d+(\.\d+)?$/.test(raw.trim()) ? `${raw.trim()}s` : raw.trim());

/** `--timeout`: stop following after `ms`; `label` is how the user wrote it. */
export interface TimeLimit {
  ms: number;
  label: string;
}

/** The `--timeout` of a command that follows work; `noWait` (follow nothing) contradicts it. */
export function timeLimitOf(raw: string | undefined, noWait = false): TimeLimit | undefined {
  if (raw === undefined) return undefined;
  if (noWait) throw new UsageError('give --no-wait or --timeout, not both');
  return { ms: parseDuration('--timeout', raw), label: durationLabel(raw) };
}
