import { AsyncLocalStorage, createHook } from 'node:async_hooks';
import { spawn, type ChildProcess } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { resolve } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { bundleEntry } from './bundle-entry.ts';
import { lendEnvironment, needsOwnProcess } from './process-env.ts';
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

/**
 * Runs `mediadesk args…` to its exit and collects its output. By default in this process, through the
 * CLI's own entry (`runCli` in electron/host/cli/main.ts) with the environment and working folder it
 * would have had: a process of its own costs ~0.5 CPU-s of start-up each, some 600 times a run. A
 * command still running here, `ownProcess`, or MEDIADESK_TEST_CLI=process gives it a process of its
 * own, as a shell would. What a command leaves open after it returns fails the call (see lettingGo).
 */
export function runCli(
  args: readonly string[],
  o: { env: NodeJS.ProcessEnv; cwd?: string; ownProcess?: boolean },
): Promise<CliRun> {
  if (o.ownProcess || needsOwnProcess(o.env) || process.env.MEDIADESK_TEST_CLI === 'process' || inProcess)
    return spawnCli(args, o);
  return runInProcess(args, o);
}

function spawnCli(args: readonly string[], o: { env: NodeJS.ProcessEnv; cwd?: string }): Promise<CliRun> {
  return startCli(args, o).exit;
}

type CliEntry = typeof import('../electron/host/cli/main.ts');

/** The CLI's entry: from source under vitest, from the node bundle in a Playwright worker (TEST_WORKER_INDEX). */
const cliEntry = (): Promise<CliEntry> =>
  process.env.TEST_WORKER_INDEX === undefined
    ? import('../electron/host/cli/main.ts')
    : bundleEntry<CliEntry>('cli', new URL('../electron/host/cli/main.ts', import.meta.url));

/** One command at a time runs here: it borrows the process's environment and working folder. */
let inProcess = false;

async function runInProcess(args: readonly string[], o: { env: NodeJS.ProcessEnv; cwd?: string }): Promise<CliRun> {
  inProcess = true;
  const folder = process.cwd();
  const out = capture();
  const err = capture();
  // The variables and folder are set on the process too, for code that reads them there (as in a shell).
  const putBack = lendEnvironment(o.env);
  try {
    if (o.cwd) process.chdir(o.cwd);
    const { runCli: main } = await cliEntry();
    const io = { env: { ...process.env }, stdin: Readable.from([]), stdout: out.stream, stderr: err.stream };
    const code = await lettingGo(`mediadesk ${args.join(' ')}`, () => main([...args], io));
    return { code, out: out.text(), err: err.text() };
  } finally {
    process.chdir(folder);
    putBack();
    inProcess = false;
  }
}

const calls = new AsyncLocalStorage<symbol>();

/**
 * `work()`'s answer, once it has let go of what it opened (timers, sockets, watchers, child processes
 * that hold a process open): a command that returns with one still held would never exit in its own
 * process. Sockets close a few turns after it returns, so each turn is looked at up to `withinMs`
 * (setImmediate: a timer of this check's own would count against it).
 */
export async function lettingGo<T>(what: string, work: () => Promise<T>, withinMs = 10_000): Promise<T> {
  const call = Symbol(what);
  const opened = new Map<number, { type: string; resource: { hasRef?: () => boolean } }>();
  const hook = createHook({
    init(id, type, _trigger, resource) {
      if (type !== 'PROMISE' && calls.getStore() === call) opened.set(id, { type, resource });
    },
    destroy: (id) => opened.delete(id),
  });
  hook.enable();
  try {
    const answer = await calls.run(call, work);
    const holding = () => [...opened.values()].filter((r) => r.resource.hasRef?.() === true).map((r) => r.type);
    const giveUp = Date.now() + withinMs;
    while (holding().length > 0) {
      if (Date.now() > giveUp) throw new Error(`${what} returned but left open: ${holding().join(', ')}`);
      await new Promise((res) => setImmediate(res));
    }
    return answer;
  } finally {
    hook.disable();
  }
}

/**
 * `mediadesk args…` started as its own process: its output so far (read live), the child, and its exit.
 * `stdin: 'pipe'` leaves its standard input open for the test to write; otherwise it has none.
 */
export function startCli(args: readonly string[], o: { env: NodeJS.ProcessEnv; cwd?: string; stdin?: 'pipe' }) {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: o.cwd,
    env: { ...process.env, ...o.env },
    stdio: [o.stdin ?? 'ignore', 'pipe', 'pipe'],
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
  const run = startCli(args, { env: o.env, stdin: o.input ? 'pipe' : undefined });
  const { child } = run;
  let sent = false;
  // After startCli's own listeners, so each chunk is in run.out or run.err when looked at.
  const check = () => {
    if (o.until && !sent && o.until.test(o.watch === 'stdout' ? run.out : run.err)) sent = child.kill('SIGINT');
  };
  child.stdout!.on('data', check);
  child.stderr!.on('data', check);
  if (o.input) {
    // A command that stops reading (Ctrl-C) closes the pipe under the writer, as `cat` would meet it.
    child.stdin!.on('error', () => {});
    if ('text' in o.input) child.stdin!.end(o.input.text);
    else createReadStream(o.input.file).pipe(child.stdin!);
  }
  return run.exit;
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
