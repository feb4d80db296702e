import { dataHome } from '../../core/paths.ts';
import { oneLine, UsageError, type CliContext } from './command.ts';
import { COMMANDS } from './commands/index.ts';
import { checkApiEnv, checkDataFolder } from './environment.ts';
import { stopFollowing } from './interrupt.ts';

/** Edit distance, for "did you mean": a typed `rnu` or `job` is one or two keys away from its command. */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length];
}

/** The one name within two edits of `typed` (closest first), or null. */
function closest(typed: string, names: string[]): string | null {
  const scored = names
    .map((n) => [n, distance(typed.toLowerCase(), n)] as const)
    .filter(([, d]) => d <= 2)
    .sort((x, y) => x[1] - y[1]);
  return scored[0]?.[0] ?? null;
}

/** From the command table alone: loading every command would load the engine, the Sandbox and sharp. */
function help(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'usage: mediadesk <command> [options]',
    '',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    "mediadesk <command> --help shows a command's options.",
  ].join('\n');
}

export async function runCli(argv: string[], io: Partial<CliContext> = {}): Promise<number> {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  const [name, ...rest] = argv;
  // Help asked for is the output (stdout, 0); no command at all is a usage error (stderr, 2).
  if (!name) {
    stderr.write(help() + '\n');
    return 2;
  }
  // `mediadesk help run` is `mediadesk run --help`, as git and npm take it.
  if (name === 'help' && rest.length) return runCli([rest[0], '--help'], io);
  if (name === '--help' || name === '-h' || name === 'help') {
    stdout.write(help() + '\n');
    return 0;
  }
  const ref = COMMANDS.find((c) => c.name === name);
  if (!ref) {
    const near = closest(
      name,
      COMMANDS.map((c) => c.name),
    );
    stderr.write(
      `mediadesk: unknown command "${oneLine(name)}" (${near ? `did you mean ${near}? ` : ''}try: ${COMMANDS.map((c) => c.name).join(', ')})\n`,
    );
    return 2;
  }
  const cmd = await ref.load();
  // Not after `--`, where `-h` is a file's name.
  const options = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest;
  if (options.includes('--help') || options.includes('-h')) {
    stdout.write(`usage: ${cmd.usage}\n`);
    return 0;
  }
  const env = io.env ?? process.env;
  const ctx: CliContext = {
    command: name,
    argv: rest,
    stdin: io.stdin ?? process.stdin,
    stdout,
    stderr,
    env,
    home: io.home ?? dataHome(env),
  };
  try {
    if (!ref.standalone) {
      checkApiEnv(env);
      checkDataFolder(ctx.home, env);
    }
    return await cmd.run(ctx);
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    if (!(err instanceof UsageError)) await logFailure(ctx, err);
    // A usage error quotes what the user typed, which may hold a newline or ESC (`--page "$N"` read
    // with its newline): escaped, it stays one whole line and cannot move the terminal's cursor.
    // Other errors keep only their first line, as before.
    stderr.write(`mediadesk ${name}: ${oneLine(err instanceof UsageError ? msg : msg.split('\n')[0])}\n`);
    return err instanceof UsageError ? 2 : 1;
  }
}

/**
 * A command's failure, in logs/cli.log beside what the core logged (the data folder may itself be the
 * trouble). The log's library is loaded here, at a failure: a command that succeeds without it is spared it.
 */
async function logFailure(ctx: CliContext, err: unknown): Promise<void> {
  try {
    const { openLog } = await import('../../core/log/index.ts');
    const log = openLog({ home: ctx.home, name: 'cli' });
    log.addSecret(ctx.env.MEDIADESK_API_KEY);
    log.error(`cli: mediadesk ${ctx.command} failed:`, err);
  } catch {
    // No log can be written: the error is on stderr already.
  }
}

/**
 * `mediadesk audit query | head`: a closed stdout ends the command quietly, as Unix tools do, not
 * with an EPIPE stack trace; one that follows work winds down first. A closed stderr stops nothing.
 */
export function stopQuietlyWhenPipeCloses(): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    if (!stopFollowing()) process.exit(process.exitCode ?? 0);
  });
  process.stderr.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
}

if (import.meta.main) {
  stopQuietlyWhenPipeCloses();
  runCli(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
