import { DeskError } from '../../../../shared/contract/define.ts';
// Types only: the contract's index builds every command's schema, which `jobs list` does not need.
import type { CommandName, DeskErrorData, Req, Res } from '../../../../shared/contract/index.ts';
import type { Core } from '../../../core/index.ts';
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { encodingOf, parseParam, type ToolEntry } from '../../../../shared/catalogue/index.ts';
import { oneLine, UsageError } from '../command.ts';

// Here for the commands that import it with the rest; its own module keeps `jobs list` free of the catalogue.
export { parseOptions } from '../parse-options.ts';

/** A refused command as the CLI reports it: the user's own mistakes (and `usage`, when given, codes) exit 2. */
export function refusal(
  error: DeskErrorData,
  usage: readonly DeskErrorData['code'][] = ['invalid', 'conflict'],
): Error {
  const e = DeskError.from(error);
  return usage.includes(e.code) ? new UsageError(e.describe()) : new Error(e.describe());
}

/** Calls a core command through the validating dispatcher; the user's own mistakes exit 2. */
export async function invoke<K extends CommandName>(core: Core, name: K, req: Req<K>): Promise<Res<K>> {
  const reply = await core.dispatch(name, req);
  if (reply.ok) return reply.result as Res<K>;
  throw refusal(reply.error);
}

/**
 * Fixed-width columns for a terminal. Cells are mostly the server's text (a creation's name, an
 * app's label, a tool name): escaped, an ESC or newline in one can neither drive the terminal nor
 * split a row, and the columns stay aligned.
 */
export function table(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((r) => r.map((c) => oneLine(String(c))))];
  const w = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(w[i]))).join('  ')).join('\n') + '\n';
}

/** `--param key=value`s typed by the tool's fields; a key given twice or a value of the wrong kind is a usage error. */
/**
 * A media field's value as the engine takes it: a URL or an encoding as given, a file named
 * relative to the shell's folder as its full path (sent as the field takes files: uploaded or inline).
 */
function withLocalPaths(tool: ToolEntry, key: string, value: unknown): unknown {
  const field = tool.fields.find((f) => f.name === key);
  if (field?.kind !== 'media' && field?.kind !== 'mediaList') return value;
  const one = (v: unknown) => {
    if (typeof v !== 'string' || encodingOf(v) !== null) return v;
    const full = isAbsolute(v) ? v : resolve(v);
    if (!existsSync(full)) throw new UsageError(`--param ${key}: no such file: ${oneLine(full)} (or give a URL)`);
    return full;
  };
  return Array.isArray(value) ? value.map(one) : one(value);
}

export function paramsOf(tool: ToolEntry, pairs: readonly string[]): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const p of pairs) {
    try {
      const [k, v] = parseParam(tool, p);
      if (Object.hasOwn(params, k)) throw new UsageError(`--param ${k} is given more than once`);
      params[k] = withLocalPaths(tool, k, v);
    } catch (err) {
      throw err instanceof UsageError ? err : new UsageError((err as Error).message);
    }
  }
  return params;
}
