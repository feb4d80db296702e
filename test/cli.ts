import { spawn, type ChildProcess } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { resolve } from 'node:path';
import { Writable } from 'node:stream';
import { until } from './wait.ts';

/** The command a power user scripts against: the CLI's entry point, run by Node as a child process. */
export const BIN = resolve(import.meta.dirname, '../bin/mediadesk.js');

export interface CliRun {
  code: number | null;
  out: string;
  err: string;
}

/** The environment that points the CLI at a data folder and a Sandbox, with one of its demo keys. */
export const cliEnv = (home: string, apiUrl: string, key = 'sandbox-owner'): NodeJS.ProcessEnv => ({
  MEDIADESK_HOME: home,
  MEDIADESK_API_URL: apiUrl,
  MEDIADESK_API_KEY: key,
});

/** Runs `mediadesk args…` to its exit, as a shell would: its own process, its output collected. */
export function runCli(args: readonly string[], o: { env: NodeJS.ProcessEnv; cwd?: string }): Promise<CliRun> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: o.cwd,
    env: { ...process.env, ...o.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  return new Promise((res) => child.once('exit', (code) => res({ code, out, err })));
}

/** `mediadesk args…` started as its own process: its output so far (read live), the child, and its exit. */
export function startCli(args: readonly string[], o: { env: NodeJS.ProcessEnv }) {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...o.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const run = { out: '', err: '', child, exit: null as unknown as Promise<CliRun> };
  child.stdout!.on('data', (d) => (run.out += d));
  child.stderr!.on('data', (d) => (run.err += d));
  run.exit = new Promise<CliRun>((res) => child.once('exit', (code) => res({ code, out: run.out, err: run.err })));
  return run;
}

/**
 * Ends a child a test started and waits for its exit: SIGTERM (its own wind-down), then SIGKILL
 * past `graceMs`, so no process outlives the test to talk to a server the file has closed.
 */
export async function endChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((res) => child.once('exit', res));
  child.kill('SIGTERM');
  const late = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(late);
}

/**
 * Ctrl-C to runs whose remaining jobs wait for a daily reset (a cap, a budget), once `enough()` holds
 * and each has exited or said `held`: a --timeout there only waited on the clock. Resolves with their exits.
 */
export async function interruptOnceHeld(
  runs: ReturnType<typeof startCli>[],
  held: RegExp,
  enough: () => Promise<boolean>,
): Promise<CliRun[]> {
  await until(async () => (await enough()) && runs.every((r) => r.child.exitCode !== null || held.test(r.err)), {
    what: `each run done or held (${held.source})`,
    interval: 50,
    log: () => runs.map((r) => r.err).join('\n---\n'),
  });
  for (const r of runs) if (r.child.exitCode === null) r.child.kill('SIGINT');
  return Promise.all(runs.map((r) => r.exit));
}

/**
 * Runs `mediadesk args…` and presses Ctrl-C (SIGINT) once its stderr (or with `watch`, its stdout)
 * matches `until`, as a user at the terminal would on seeing that line; then waits for its exit.
 * `input` goes to its standard input as a shell pipe gives it: text, or a file streamed in.
 */
export function interruptWhen(
  args: readonly string[],
  o: {
    env: NodeJS.ProcessEnv;
    until?: RegExp;
    watch?: 'stdout' | 'stderr';
    input?: { text: string } | { file: string };
  },
): Promise<CliRun> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...o.env },
    stdio: [o.input ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let sent = false;
  const check = () => {
    if (o.until && !sent && o.until.test(o.watch === 'stdout' ? out : err)) sent = child.kill('SIGINT');
  };
  child.stdout!.on('data', (d) => {
    out += d;
    check();
  });
  child.stderr!.on('data', (d) => {
    err += d;
    check();
  });
  if (o.input) {
    // A command that stops reading (Ctrl-C) closes the pipe under the writer, as `cat` would meet it.
    child.stdin!.on('error', () => {});
    if ('text' in o.input) child.stdin!.end(o.input.text);
    else createReadStream(o.input.file).pipe(child.stdin!);
  }
  return new Promise((res) => child.once('exit', (code) => res({ code, out, err })));
}

/** A stream that keeps what is written to it, for the CLI run in the test's own process. */
export function capture() {
  let text = '';
  const stream = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}
