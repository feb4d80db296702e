import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

/** The command a power user scripts against: the CLI's entry point, run by Node as a child process. */
export const BIN = resolve(import.meta.dirname, '../bin/mediadesk.js');

export interface CliRun {
  code: number | null;
  out: string;
  err: string;
}

/** The environment that points the CLI at a data folder and a Sandbox, with one of its demo keys. */
export const cliEnv = (home: string, apiUrl: string, key = 'sandbox-owner'): NodeJS.ProcessEnv => ({ MEDIADESK_HOME: home, MEDIADESK_API_URL: apiUrl, MEDIADESK_API_KEY: key });

/** Runs `mediadesk args…` to its exit, as a shell would: its own process, its output collected. */
export function runCli(args: readonly string[], o: { env: NodeJS.ProcessEnv; cwd?: string }): Promise<CliRun> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: o.cwd, env: { ...process.env, ...o.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  return new Promise((res) => child.once('exit', (code) => res({ code, out, err })));
}

/**
 * Runs `mediadesk args…` and presses Ctrl-C (SIGINT) once its stderr matches `until`, as a user
 * at the terminal would on seeing that line; then waits for its exit.
 */
export function interruptWhen(args: readonly string[], o: { env: NodeJS.ProcessEnv; until: RegExp }): Promise<CliRun> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...o.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let sent = false;
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => {
    err += d;
    if (!sent && o.until.test(err)) sent = child.kill('SIGINT');
  });
  return new Promise((res) => child.once('exit', (code) => res({ code, out, err })));
}
