import { COMMANDS, DeskError, type CommandName, type DeskErrorData } from '../../shared/contract/index.ts';
import { invalidRequest, type HandlerMap } from '../../shared/contract/define.ts';

export type Reply = { ok: true; result: unknown } | { ok: false; error: DeskErrorData };

export type AllHandlers = HandlerMap<typeof COMMANDS>;

/**
 * The one entry point every transport calls: it validates the payload against the contract,
 * runs the handler and turns any failure into data. Nothing a renderer sends reaches a handler
 * unvalidated.
 */
export function createDispatcher(handlers: Partial<AllHandlers>) {
  return async function dispatch(name: string, payload: unknown): Promise<Reply> {
    if (!Object.hasOwn(COMMANDS, name)) return { ok: false, error: { code: 'not_found', message: `unknown command "${name}"` } };
    const def = COMMANDS[name as CommandName];
    const handler = handlers[name as CommandName] as ((req: unknown) => unknown) | undefined;
    if (!handler) return { ok: false, error: { code: 'unavailable', message: `"${name}" is not available in this host` } };
    const req = def.request.safeParse(payload ?? {});
    if (!req.success) {
      return { ok: false, error: invalidRequest(req.error.issues) };
    }
    try {
      const result = await handler(req.data);
      return { ok: true, result: def.response.parse(result) };
    } catch (err) {
      return { ok: false, error: toErrorData(err) };
    }
  };
}

export function toErrorData(err: unknown): DeskErrorData {
  if (err instanceof DeskError) return err.toData();
  const e = err as { name?: string; status?: number; message?: string; invalidParams?: { field: string; reason: string }[]; describe?: () => string };
  if (e?.name === 'ApiError') {
    const code = e.status === 400 || e.status === 422 ? 'invalid' : e.status === 401 ? 'unauthorized' : e.status === 403 ? 'forbidden' : e.status === 404 ? 'not_found' : e.status === 429 ? 'rate_limited' : 'unavailable';
    return { code, message: e.describe?.() ?? String(e.message), ...(e.invalidParams?.length ? { invalid: e.invalidParams } : {}) };
  }
  return { code: 'internal', message: err instanceof Error ? err.message : String(err) };
}

export type Dispatch = ReturnType<typeof createDispatcher>;
