import { UsageError } from './command.ts';

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
