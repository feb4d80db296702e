import { DeskError } from '../../../../shared/contract/define.ts';
// Types only: the contract's index builds every command's schema, which `jobs list` does not need.
import type { CommandName, DeskErrorData, Req, Res } from '../../../../shared/contract/index.ts';
import type { Core } from '../../../core/index.ts';
import { parseParam, type ToolEntry } from '../../../../shared/catalogue/index.ts';
import { oneLine, UsageError } from '../command.ts';

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
 * `--name value` / `--name=value` options, repeatable, and positionals. `--` ends the options, as
 * for getopt: `-- -x.png` names a file whose name starts with a dash.
 */
export function parseOptions(argv: string[], valued: readonly string[], flags: readonly string[]) {
  const values = new Map<string, string[]>();
  const set = new Set<string>();
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    const eq = a.startsWith('--') ? a.indexOf('=') : -1;
    const name = eq > 0 ? a.slice(0, eq) : a;
    if (valued.includes(name)) {
      const v = eq > 0 ? a.slice(eq + 1) : argv[++i];
      // `--event-type --json` left the type out; taking "--json" as the type hid that. A value
      // that does start with -- can still be given as --name=value.
      if (v === undefined || (eq < 0 && v.startsWith('--'))) throw new UsageError(`${name} needs a value`);
      values.set(name, [...(values.get(name) ?? []), v]);
    } else if (flags.includes(a)) set.add(a);
    // `-x` too: taken as a job id, run id or file it only led to "no job -x" or "no such file".
    else if (a.startsWith('-') && a !== '-') throw new UsageError(`unknown option ${a}`);
    else positional.push(a);
  }
  /** The value of an option given at most once; `aliases` are its other names (`--out`, `-o`). */
  const one = (n: string, ...aliases: string[]) => {
    const v = [n, ...aliases].flatMap((name) => values.get(name) ?? []);
    if (v.length > 1) throw new UsageError(`${n} is given more than once`);
    return v[0];
  };
  const list = (n: string) =>
    (values.get(n) ?? [])
      .flatMap((v) => v.split(','))
      .map((v) => v.trim())
      .filter(Boolean);
  return { values, flags: set, positional, one, list };
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
export function paramsOf(tool: ToolEntry, pairs: readonly string[]): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const p of pairs) {
    try {
      const [k, v] = parseParam(tool, p);
      if (Object.hasOwn(params, k)) throw new UsageError(`--param ${k} is given more than once`);
      params[k] = v;
    } catch (err) {
      throw err instanceof UsageError ? err : new UsageError((err as Error).message);
    }
  }
  return params;
}
