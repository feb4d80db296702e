import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { apiEnvProblem } from '../../core/api-env.ts';
import { oneLine, UsageError } from './command.ts';

const codeOf = (err: unknown) => (err as NodeJS.ErrnoException).code ?? String(err);

/**
 * The data folder, made if missing, before a command opens anything in it: a MEDIADESK_HOME that
 * names a file or a folder the user cannot write is a mistake in the script's setup (exit 2), said
 * as such, not SQLite's "unable to open database file" (exit 1) half-way through a command.
 */
export function checkDataFolder(home: string, env: NodeJS.ProcessEnv): void {
  const what = `the data folder ${oneLine(home)}${env.MEDIADESK_HOME ? ' (MEDIADESK_HOME)' : ''}`;
  let st;
  try {
    st = statSync(home, { throwIfNoEntry: false });
  } catch (err) {
    throw new UsageError(`${what} cannot be used (${codeOf(err)})`);
  }
  if (st && !st.isDirectory()) throw new UsageError(`${what} is a file, not a folder`);
  try {
    if (!st) mkdirSync(home, { recursive: true });
  } catch (err) {
    throw new UsageError(`${what} cannot be created (${codeOf(err)})`);
  }
  try {
    accessSync(home, constants.W_OK);
  } catch (err) {
    throw new UsageError(`${what} is not writable (${codeOf(err)})`);
  }
}

/** The environment's API target (electron/core/api-env.ts), refused as bad input. */
export function checkApiEnv(env: NodeJS.ProcessEnv): void {
  const problem = apiEnvProblem(env);
  if (problem) throw new UsageError(problem);
}
