import { z } from 'zod';

/**
 * A command is defined once: its request and response schemas. Every transport (Electron IPC,
 * the web host's WebSocket, the CLI) validates against these same objects.
 */
export interface CommandDef<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> {
  request: Req;
  response: Res;
  summary: string;
}

export const command = <Req extends z.ZodType, Res extends z.ZodType>(
  request: Req,
  response: Res,
  summary: string,
): CommandDef<Req, Res> => ({ request, response, summary });

export type CommandMap = Record<string, CommandDef>;
export type EventMap = Record<string, z.ZodType>;

/** What a handler receives (parsed) and must return (before response validation). */
export type HandlerMap<C extends CommandMap> = {
  [K in keyof C]: (req: z.output<C[K]['request']>) => Promise<z.input<C[K]['response']>> | z.input<C[K]['response']>;
};

export const empty = z.object({}).strict();
export const ok = z.object({ ok: z.literal(true) });

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

export const invalidParamSchema = z.object({ field: z.string(), reason: z.string() });

export const deskErrorSchema = z.object({
  code: z.enum(ERROR_CODES),
  message: z.string(),
  invalid: z.array(invalidParamSchema).optional(),
});
export type DeskErrorData = z.infer<typeof deskErrorSchema>;

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
