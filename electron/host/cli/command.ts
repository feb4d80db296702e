import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';

/** A CLI failure the user caused: printed as one line on stderr, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export interface CliContext {
  /** The command's name (`jobs`), for the log; argv holds what follows it. */
  command?: string;
  argv: string[];
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable;
  /** Progress and notes: a terminal's here even when stdout is a pipe or a file. */
  stderr: Writable & { isTTY?: boolean; columns?: number };
  env: NodeJS.ProcessEnv;
  /** The data folder shared with the desktop app (database, settings, caches). */
  home: string;
}

export interface CliCommand {
  name: string;
  /** Its --help; the one-line summary is in the command table (commands/index.ts). */
  usage: string;
  /** Resolves to the process exit code. Throw UsageError for bad input. */
  run(ctx: CliContext): Promise<number>;
}

// Shared with the web host, which prints the same notes on stderr.
export { oneLine, terminalJson } from '../terminal-text.ts';

/** Waits while the reader is behind: thousands of rows into a slow pipe are not all held in memory. */
export async function write(out: Writable, s: string): Promise<void> {
  if (!out.write(s)) await once(out, 'drain');
}
