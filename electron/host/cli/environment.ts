import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
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

/**
 * MEDIADESK_API_URL and MEDIADESK_API_KEY go together. One without the other (an unset CI secret
 * gives an empty key) used to fall back to the Sandbox or the keychain's key without a word, and a
 * URL that does not parse, or a key with a line end, reached the queue, which put every job to
 * "needs attention: may have been charged". Both empty is the same as both unset.
 */
export function checkApiEnv(env: NodeJS.ProcessEnv): void {
  const url = env.MEDIADESK_API_URL ?? '';
  const key = env.MEDIADESK_API_KEY ?? '';
  if (!url && !key) return;
  if (!key.trim()) throw new UsageError('MEDIADESK_API_URL is set but MEDIADESK_API_KEY is empty: set both to use that server, or neither (the keychain\'s key, or the built-in Sandbox)');
  if (!url.trim()) throw new UsageError('MEDIADESK_API_KEY is set but MEDIADESK_API_URL is empty: set both to use a server, or neither (the keychain\'s key, or the built-in Sandbox)');
  // Sent as a header, where undici refuses a line end: every create then failed on this machine,
  // and the queue took each for one that may have been charged.
  if (/[\s\x00-\x1f\x7f]/.test(key)) throw new UsageError('MEDIADESK_API_KEY holds a space, line end or other control character (read from a file with its line end?): give the key alone');
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    // reported below
  }
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) throw new UsageError(`MEDIADESK_API_URL must be an http(s) URL such as https://api.example.com, got "${oneLine(env.MEDIADESK_API_URL!)}"`);
}
