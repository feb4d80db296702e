import { COMMANDS } from '../../shared/contract/index.ts';
import type { AllHandlers } from './dispatch.ts';

/** A part of the handler map: one contract area's commands (`<area>/handlers.ts`). */
export type HandlerPart = Partial<AllHandlers>;

/** Contract commands the core does not serve: a host serves them through `overrides` (Electron's open dialog). */
export const HOST_ONLY_COMMANDS: readonly string[] = ['files.choose'];

const quoted = (name: string) => JSON.stringify(name);

function checkDefined(name: string, who: string): void {
  if (!Object.hasOwn(COMMANDS, name)) throw new Error(`${who} ${quoted(name)}, which the contract does not define`);
}

/**
 * The core's handler map from its areas' parts. A command served by two parts is a wiring mistake
 * that would silently keep the later one, so it stops the start, naming the command.
 */
export function mergeHandlers(...parts: HandlerPart[]): HandlerPart {
  const merged: Record<string, unknown> = {};
  for (const part of parts)
    for (const [name, handler] of Object.entries(part)) {
      checkDefined(name, 'a handler part serves');
      if (Object.hasOwn(merged, name))
        throw new Error(`${quoted(name)} is served by two handler parts: each command has one handler`);
      merged[name] = handler;
    }
  return merged as HandlerPart;
}

/** The one allowed replacement: the commands a host serves itself (Electron's shell, its open dialog). */
export function applyOverrides(handlers: HandlerPart, overrides: HandlerPart = {}): HandlerPart {
  for (const name of Object.keys(overrides)) checkDefined(name, 'the host overrides');
  return { ...handlers, ...overrides };
}
