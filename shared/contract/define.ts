import { z } from 'zod';
import { ERROR_CODES } from './errors.ts';

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

export { DeskError, ERROR_CODES, invalidRequest, type DeskErrorCode } from './errors.ts';
export const empty = z.object({}).strict();
export const ok = z.object({ ok: z.literal(true) });

export const invalidParamSchema = z.object({ field: z.string(), reason: z.string() });

export const deskErrorSchema = z.object({
  code: z.enum(ERROR_CODES),
  message: z.string(),
  invalid: z.array(invalidParamSchema).optional(),
});
export type DeskErrorData = z.infer<typeof deskErrorSchema>;
