import type { Readable, Writable } from 'node:stream';

/** A CLI failure the user caused: printed as one line on stderr, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export interface CliContext {
  argv: string[];
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable & { isTTY?: boolean; columns?: number };
  stderr: Writable;
  env: NodeJS.ProcessEnv;
  /** The data folder shared with the desktop app (database, settings, caches). */
  home: string;
}

export interface CliCommand {
  name: string;
  summary: string;
  usage: string;
  /** Resolves to the process exit code. Throw UsageError for bad input. */
  run(ctx: CliContext): Promise<number>;
}
