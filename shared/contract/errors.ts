// The command errors, without zod: a CLI command catches a DeskError without building the contract's
// schemas (define.ts re-exports these and holds deskErrorSchema).
import type { DeskErrorData } from './define.ts';

/** Errors cross every transport as data, never as thrown strings. */
export const ERROR_CODES = [
  'invalid',
  'not_found',
  'forbidden',
  'unauthorized',
  'rate_limited',
  'unavailable',
  'conflict',
  'internal',
] as const;
export type DeskErrorCode = (typeof ERROR_CODES)[number];

export class DeskError extends Error {
  readonly code: DeskErrorCode;
  readonly invalid?: { field: string; reason: string }[];
  constructor(code: DeskErrorCode, message: string, invalid?: { field: string; reason: string }[]) {
    super(message);
    this.name = 'DeskError';
    this.code = code;
    this.invalid = invalid;
  }
  toData(): DeskErrorData {
    return { code: this.code, message: this.message, ...(this.invalid ? { invalid: this.invalid } : {}) };
  }
  static from(data: DeskErrorData): DeskError {
    return new DeskError(data.code, data.message, data.invalid);
  }

  /**
   * The message, then each field problem it does not state already: one whose reason it quotes,
   * or whose field it names with its own reason ("from: 2025-13-45 is not a date"), is left out.
   * The CLI prints this and the app shows it, so both say a thing once.
   */
  describe(): string {
    const m = this.message;
    const extra = (this.invalid ?? [])
      .filter((p) => !m.includes(p.reason) && !(p.field && m.includes(`${p.field}:`)))
      .map((p) => (p.field ? `${p.field} ${p.reason}` : p.reason));
    return extra.length ? `${m}: ${[...new Set(extra)].join('; ')}` : m;
  }
}

/** A request that broke a command's schema: the message is its problems, since the command's name means nothing to a user. */
export function invalidRequest(issues: readonly { path: readonly PropertyKey[]; message: string }[]): DeskErrorData {
  const invalid = issues.map((i) => ({ field: i.path.map(String).join('.'), reason: i.message }));
  return {
    code: 'invalid',
    message: invalid.map((p) => (p.field ? `${p.field} ${p.reason}` : p.reason)).join('; '),
    invalid,
  };
}
