import { COMMANDS, DeskError, type CommandName, type DeskErrorData } from '../../shared/contract/index.ts';
import { invalidRequest, type DeskErrorCode, type HandlerMap } from '../../shared/contract/define.ts';
import type { AppLog } from './log/index.ts';
import { FILE_SAVING_COMMANDS, type SavedFiles } from './saved-files.ts';

export type Reply = { ok: true; result: unknown } | { ok: false; error: DeskErrorData };

export type AllHandlers = HandlerMap<typeof COMMANDS>;

/**
 * The nesting a reply may have. The deepest a command answers is an audit event in its detail
 * (audit.event: the event within 32 levels, MAX_EVENT_DEPTH, three below the reply's top).
 */
export const MAX_REPLY_DEPTH = 64;
/** The size a reply may have, estimated as JSON: a page of 1,000 audit rows is about half a megabyte. */
export const MAX_REPLY_BYTES = 64 * 1024 * 1024;

/**
 * Why `value` cannot go out as a reply (too deep, circular, too large, or not JSON/clonable), or
 * null. Checked here because JSON and structured clone recurse: a deep value would overflow the
 * stack in the host, outside any handler's try.
 */
export function replyProblem(value: unknown): string | null {
  const budget = { left: MAX_REPLY_BYTES };
  const ancestors = new Set<object>();
  const walk = (v: unknown, depth: number): string | null => {
    switch (typeof v) {
      case 'string':
        budget.left -= v.length + 2;
        return budget.left < 0 ? `is larger than ${MAX_REPLY_BYTES / 1024 / 1024} MB` : null;
      case 'number':
      case 'boolean':
      case 'undefined':
        budget.left -= 8;
        return budget.left < 0 ? `is larger than ${MAX_REPLY_BYTES / 1024 / 1024} MB` : null;
      case 'bigint':
        return 'holds a BigInt, which JSON cannot carry';
      case 'function':
      case 'symbol':
        return `holds a ${typeof v}, which a reply cannot carry`;
    }
    if (v === null) return null;
    const container = v as object;
    if (ancestors.has(container)) return 'is circular (a value holds itself)';
    if (depth >= MAX_REPLY_DEPTH) return `is nested deeper than ${MAX_REPLY_DEPTH} levels`;
    ancestors.add(container);
    try {
      if (Array.isArray(container)) {
        budget.left -= 2;
        for (const x of container) {
          const p = walk(x, depth + 1);
          if (p) return p;
        }
        return null;
      }
      budget.left -= 2;
      for (const k of Object.keys(container)) {
        budget.left -= k.length + 4;
        const p = walk((container as Record<string, unknown>)[k], depth + 1);
        if (p) return p;
      }
      return null;
    } finally {
      ancestors.delete(container);
    }
  };
  return walk(value, 0);
}

/** A command's name as a message quotes it: a name sent over the socket can be anything. */
const quoted = (name: string) => JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name);

/** The reply that stands for one that could not be sent as it was. */
export function unsendable(name: string, why: string): Reply {
  return {
    ok: false,
    error: { code: 'internal', message: `the reply to ${quoted(name)} could not be sent: it ${why}` },
  };
}

/**
 * The one entry point every transport calls: validates the payload against the contract, runs the
 * handler and turns any failure into data. The promise never rejects, so no command ends a host.
 */
export function createDispatcher(handlers: Partial<AllHandlers>) {
  async function run(name: string, payload: unknown): Promise<Reply> {
    if (!Object.hasOwn(COMMANDS, name))
      return { ok: false, error: { code: 'not_found', message: `unknown command "${name}"` } };
    const def = COMMANDS[name as CommandName];
    const handler = handlers[name as CommandName] as ((req: unknown) => unknown) | undefined;
    if (!handler)
      return { ok: false, error: { code: 'unavailable', message: `"${name}" is not available in this host` } };
    const req = def.request.safeParse(payload ?? {});
    if (!req.success) {
      return { ok: false, error: invalidRequest(req.error.issues) };
    }
    const result = def.response.parse(await handler(req.data));
    const problem = replyProblem(result);
    return problem ? unsendable(name, problem) : { ok: true, result };
  }
  return async function dispatch(name: string, payload: unknown): Promise<Reply> {
    try {
      return await run(name, payload);
    } catch (err) {
      try {
        const error = toErrorData(err);
        return replyProblem(error)
          ? { ok: false, error: { code: error.code, message: `${quoted(name)} failed` } }
          : { ok: false, error };
      } catch {
        // An error whose own fields throw when read.
        return { ok: false, error: { code: 'internal', message: `${quoted(name)} failed` } };
      }
    }
  };
}

const API_ERROR_CODES: Record<number, DeskErrorCode> = {
  400: 'invalid',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  422: 'invalid',
  429: 'rate_limited',
};

/** The code an API answer's HTTP status maps to; 'unavailable' for the rest. */
export const deskErrorCodeOf = (status: number | undefined): DeskErrorCode =>
  API_ERROR_CODES[status ?? 0] ?? 'unavailable';

export function toErrorData(err: unknown): DeskErrorData {
  if (err instanceof DeskError) return err.toData();
  const e = err as {
    name?: string;
    status?: number;
    message?: string;
    invalidParams?: { field: string; reason: string }[];
    describe?: () => string;
  };
  if (e?.name === 'ApiError') {
    const code = deskErrorCodeOf(e.status);
    return {
      code,
      message: e.describe?.() ?? String(e.message),
      ...(e.invalidParams?.length ? { invalid: e.invalidParams } : {}),
    };
  }
  return { code: 'internal', message: err instanceof Error ? err.message : String(err) };
}

export type Dispatch = ReturnType<typeof createDispatcher>;

export interface CoreDispatchDeps {
  /** Holds a page's paths to PATH_FIELDS (PathPolicy.check); absent in the CLI. */
  checkPaths?: (name: string, payload: unknown) => void;
  /** Where each file a command saved at the person's request is recorded (FILE_SAVING_COMMANDS). */
  savedFiles: Pick<SavedFiles, 'add'>;
  log: Pick<AppLog, 'error' | 'warn'>;
}

/** The core's dispatch for every host: a page's paths checked first, saved files told, failures logged. */
export function createCoreDispatch(handlers: Partial<AllHandlers>, deps: CoreDispatchDeps): Dispatch {
  const dispatchCommand = createDispatcher(handlers);
  return async (name, payload) => {
    let reply: Reply;
    try {
      deps.checkPaths?.(name, payload);
      reply = await dispatchCommand(name, payload);
    } catch (refused) {
      reply = { ok: false, error: toErrorData(refused) };
    }
    if (reply.ok && FILE_SAVING_COMMANDS.has(name as CommandName))
      deps.savedFiles.add((reply.result as { path: string }).path);
    if (!reply.ok)
      (reply.error.code === 'internal' ? deps.log.error : deps.log.warn)(
        `${JSON.stringify(name.slice(0, 80))} failed:`,
        reply.error,
      );
    return reply;
  };
}
