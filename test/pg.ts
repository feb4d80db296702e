import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A real PostgreSQL for the team server's tests: initdb in a temporary folder owned by `postgres`
 * (initdb refuses root), listening on 127.0.0.1 and a free port, trusting local connections.
 */
export interface TestPg {
  /** A database made for the caller: `postgres://postgres@127.0.0.1:PORT/NAME` (`NAME_2`... when asked again). */
  createDb(name: string): Promise<string>;
  /** A user who must give its password (unlike `postgres`), owning a database of its own: its URL without the password. */
  createUser(name: string, password: string): Promise<string>;
  /** Stops the server (fast shutdown: connections are ended), keeping its data; start() brings it back. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and removes its folder. */
  close(): Promise<void>;
  readonly port: number;
}

const BIN_ROOT = '/usr/lib/postgresql';

/** The newest installed PostgreSQL's bin folder, or null. */
export function pgBin(): string | null {
  if (!existsSync(BIN_ROOT)) return null;
  const versions = readdirSync(BIN_ROOT)
    .filter((v) => existsSync(join(BIN_ROOT, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? join(BIN_ROOT, versions[0], 'bin') : null;
}

/**
 * Why the team tests cannot run here, or null when they can. On CI (CI=true) a missing PostgreSQL is
 * a failure, never a skip: scripts/test.sh installs it.
 */
export function pgMissing(): string | null {
  if (pgBin()) return null;
  const why = `PostgreSQL is not installed (no ${BIN_ROOT}/*/bin/initdb; apt-get install postgresql)`;
  if (process.env.CI === 'true') throw new Error(`${why}: on CI it must be (scripts/test.sh installs it)`);
  return why;
}

const freePort = () =>
  new Promise<number>((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
  });

/** Runs a PostgreSQL program as the `postgres` user when this process is root (initdb and pg_ctl refuse root). */
function asPostgres(bin: string, args: string[]): string[] {
  return process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--', bin, ...args] : [bin, ...args];
}

function run(argv: string[]): void {
  execFileSync(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A folder owned by `postgres` (when root) that every user may enter. */
function pgFolder(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o777);
  if (process.getuid?.() === 0) run(['chown', 'postgres:postgres', dir]);
  return dir;
}

/**
 * A cluster made by initdb once per machine and PostgreSQL version, copied for each server: initdb
 * costs each test file about a CPU-second, a copy a fraction. Made aside and renamed into place, so
 * workers starting together never see half of one.
 */
function template(bin: string): string {
  const path = join(tmpdir(), `mediadesk-pg-template-${bin.replace(/\W+/g, '-')}`);
  if (existsSync(join(path, 'data', 'PG_VERSION'))) return path;
  const made = pgFolder('mediadesk-pg-initdb-');
  const data = join(made, 'data');
  run(asPostgres(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']));
  try {
    renameSync(made, path);
  } catch {
    rmSync(made, { recursive: true, force: true }); // another worker's came first
  }
  return path;
}

export async function startPg(): Promise<TestPg> {
  const bin = pgBin();
  if (!bin) throw new Error(pgMissing() ?? 'PostgreSQL is not installed');
  const from = join(template(bin), 'data');
  const dir = pgFolder('mediadesk-pg-');
  const data = join(dir, 'data');
  // As `postgres`: the copy keeps the owner and the 0700 mode the server insists on.
  run(asPostgres('cp', ['-a', from, data]));
  // `postgres` is let in on trust; every other user gives its password, so a wrong one is refused.
  writeFileSync(
    join(data, 'pg_hba.conf'),
    'local all all trust\nhost all postgres 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 scram-sha-256\n',
  );
  const port = await freePort();
  let server: ChildProcess | null = null;
  const start = async () => {
    const argv = asPostgres(join(bin, 'postgres'), [
      '-D',
      data,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${dir}`,
      '-c',
      'fsync=off',
      '-c',
      'max_connections=200',
    ]);
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
    server = child;
    let log = '';
    await new Promise<void>((res, rej) => {
      const onData = (d: Buffer) => {
        log += d;
        if (log.includes('ready to accept connections')) {
          child.stderr!.off('data', onData);
          child.stderr!.resume();
          res();
        }
      };
      child.stderr!.on('data', onData);
      child.once('exit', (code) => rej(new Error(`postgres exited (${code}) before it was ready:\n${log}`)));
    });
  };
  const stop = async () => {
    const child = server;
    server = null;
    if (!child || child.exitCode !== null) return;
    const gone = new Promise((res) => child.once('exit', res));
    // SIGINT to the postmaster itself (runuser does not pass it on): the fast shutdown, which ends every connection.
    const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(pid, 'SIGINT');
    await gone;
  };
  await start();
  const { default: pg } = await import('pg');
  return {
    port,
    async createDb(name) {
      const c = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
      await c.connect();
      try {
        // A retried test asks for its database again: it gets a new one beside the first (name_2, ...).
        const base = name.replace(/"/g, '');
        for (let n = 1; ; n++) {
          const db = n === 1 ? base : `${base}_${n}`;
          try {
            await c.query(`CREATE DATABASE "${db}"`);
            return `postgres://postgres@127.0.0.1:${port}/${db}`;
          } catch (err) {
            if ((err as { code?: string }).code !== '42P04') throw err; // 42P04: duplicate_database
          }
        }
      } finally {
        await c.end();
      }
    },
    async createUser(name, password) {
      const c = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
      await c.connect();
      try {
        const ident = `"${name.replace(/"/g, '')}"`;
        await c.query(`CREATE ROLE ${ident} LOGIN PASSWORD '${password.replace(/'/g, "''")}'`);
        await c.query(`CREATE DATABASE ${ident} OWNER ${ident}`);
      } finally {
        await c.end();
      }
      return `postgres://${encodeURIComponent(name)}@127.0.0.1:${port}/${encodeURIComponent(name)}`;
    },
    stop,
    start,
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
