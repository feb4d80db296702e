import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Pool, PoolClient } from 'pg';
import type { TeamTarget } from './config.ts';
import { migrateTeam, TEAM_MIGRATIONS } from './migrations.ts';

/** How long a connection attempt may take before the server counts as unreachable. */
const CONNECT_TIMEOUT_MS = 3000;

/** The `sslmode` of the URL: libpq's names; `prefer` (TLS when the server offers it) unless the URL says. */
type SslMode = 'disable' | 'prefer' | 'require' | 'verify-ca' | 'verify-full';

function sslOf(connect: string): { url: string; mode: SslMode } {
  const u = new URL(connect);
  const mode = (u.searchParams.get('sslmode') ?? 'prefer') as SslMode;
  if (!['disable', 'prefer', 'require', 'verify-ca', 'verify-full', 'allow'].includes(mode))
    throw new Error(`sslmode=${mode} is not one MediaDesk knows (disable, prefer, require, verify-ca, verify-full)`);
  u.searchParams.delete('sslmode');
  return { url: u.toString(), mode: (mode as string) === 'allow' ? 'prefer' : mode };
}

/** Errors that say the server is not there (or went away), as opposed to one a query caused. */
export function isUnreachable(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  if (e?.code && ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE'].includes(e.code))
    return true;
  // 57P01-03: the server shuts down or is starting; 08xxx: connection exceptions.
  if (e?.code && (/^57P0[1-3]$/.test(e.code) || e.code.startsWith('08'))) return true;
  return /Connection terminated|timeout expired|connection timeout|Client has encountered a connection error/i.test(
    e?.message ?? '',
  );
}

export interface TeamServerOptions {
  target: () => Promise<TeamTarget | null>;
  /** This process's name on the server (machines table): the host name and data folder. */
  machineName?: string;
}

/**
 * The team server (PostgreSQL) of a studio: one pool per URL, its schema migrated on first use.
 * `pg` is imported when first connecting, so a process without a team server never loads it.
 */
export class TeamServer {
  /** This process on the server: each process paces as one machine of the team. */
  readonly machine = randomUUID();
  readonly machineName: string;
  private readonly opts: TeamServerOptions;
  private pool: { url: string; pool: Pool; ready: Promise<void>; tls: boolean } | null = null;

  constructor(opts: TeamServerOptions) {
    this.opts = opts;
    this.machineName = opts.machineName ?? hostname();
  }

  async target(): Promise<TeamTarget | null> {
    return this.opts.target();
  }

  /** Whether one is set (the URL, not whether it answers). */
  async configured(): Promise<boolean> {
    return (await this.opts.target()) !== null;
  }

  /** A transaction on the team server: BEGIN, fn, COMMIT (ROLLBACK on a throw). */
  async tx<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    return this.with(async (c) => {
      await c.query('BEGIN');
      try {
        const out = await fn(c);
        await c.query('COMMIT');
        return out;
      } catch (err) {
        await c.query('ROLLBACK').catch(() => {});
        throw err;
      }
    });
  }

  /** A connection of the pool, migrated; released (or dropped when it broke) afterwards. */
  async with<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    const p = await this.open();
    await p.ready;
    const c = await p.pool.connect();
    let broken: unknown = undefined;
    try {
      return await fn(c);
    } catch (err) {
      if (isUnreachable(err)) broken = err;
      throw err;
    } finally {
      c.release(broken as Error | undefined);
    }
  }

  /** Whether the connection in use is TLS; null before one is made. */
  get tls(): boolean | null {
    return this.pool?.tls ?? null;
  }

  private async open(): Promise<NonNullable<TeamServer['pool']>> {
    const target = await this.opts.target();
    if (!target) throw new Error('no team server is set (Settings > Team, mediadesk team connect URL)');
    if (this.pool && this.pool.url === target.connect) return this.pool;
    await this.close();
    const { default: pg } = await import('pg');
    const { url, mode } = sslOf(target.connect);
    const make = (tls: boolean) => {
      const pool = new pg.Pool({
        connectionString: url,
        ssl: tls ? { rejectUnauthorized: mode === 'verify-ca' || mode === 'verify-full' } : false,
        connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
        max: 4,
        application_name: `mediadesk ${this.machineName}`.slice(0, 63),
      });
      // A connection the server ended (idle in the pool, or held between queries): dropped; the next
      // query says whether the server is back. Unlistened, the client's 'error' would end the process.
      pool.on('error', () => {});
      pool.on('connect', (client) => client.on('error', () => {}));
      return pool;
    };
    const entry = { url: target.connect, pool: make(mode !== 'disable'), tls: mode !== 'disable', ready: null! };
    this.pool = entry as NonNullable<TeamServer['pool']>;
    const migrate = async () => {
      let c: PoolClient;
      try {
        c = await entry.pool.connect();
      } catch (err) {
        // prefer: a server without TLS is spoken to in the clear, as libpq does.
        if (mode !== 'prefer' || !/does not support SSL/i.test(String((err as Error).message))) throw err;
        await entry.pool.end().catch(() => {});
        entry.pool = make(false);
        entry.tls = false;
        c = await entry.pool.connect();
      }
      try {
        await migrateTeam(c);
      } finally {
        c.release();
      }
    };
    const ready = migrate();
    // A failed first contact is tried again by the next caller, not remembered.
    ready.catch(() => {
      if (this.pool === entry) this.pool = null;
      void entry.pool.end().catch(() => {});
    });
    (entry as { ready: Promise<void> }).ready = ready;
    return this.pool!;
  }

  /** What `mediadesk team status` and Settings > Team show: where, whether it answers, its schema and machines. */
  async status(): Promise<{
    configured: boolean;
    url: string | null;
    from: 'env' | 'settings' | null;
    reachable: boolean;
    error: string | null;
    tls: boolean | null;
    schemaVersion: number | null;
    machines: number | null;
  }> {
    let target: TeamTarget | null;
    try {
      target = await this.opts.target();
    } catch (err) {
      return {
        configured: true,
        url: null,
        from: null,
        reachable: false,
        error: (err as Error).message,
        tls: null,
        schemaVersion: null,
        machines: null,
      };
    }
    if (!target)
      return {
        configured: false,
        url: null,
        from: null,
        reachable: false,
        error: null,
        tls: null,
        schemaVersion: null,
        machines: null,
      };
    try {
      const { version, machines } = await this.with(async (c) => {
        // Asking counts: this process is one of the team's machines from its first contact.
        await c.query(
          `INSERT INTO mediadesk.machines (id, name, first_seen, last_seen) VALUES ($1, $2, $3, $3)
           ON CONFLICT (id) DO UPDATE SET last_seen = $3`,
          [this.machine, this.machineName, Date.now()],
        );
        const v = await c.query<{ v: number }>('SELECT max(version) AS v FROM mediadesk.migrations');
        const m = await c.query<{ n: string }>('SELECT count(*) AS n FROM mediadesk.machines WHERE last_seen > $1', [
          Date.now() - 10 * 60_000,
        ]);
        return { version: v.rows[0].v, machines: Number(m.rows[0].n) };
      });
      return {
        configured: true,
        url: target.shown,
        from: target.from,
        reachable: true,
        error: null,
        tls: this.tls,
        schemaVersion: version,
        machines,
      };
    } catch (err) {
      return {
        configured: true,
        url: target.shown,
        from: target.from,
        reachable: false,
        error: describe(err),
        tls: null,
        schemaVersion: null,
        machines: null,
      };
    }
  }

  async close(): Promise<void> {
    const p = this.pool;
    this.pool = null;
    if (p) await p.pool.end().catch(() => {});
  }
}

/** A connection error in words; the password never appears in pg's messages, but the URL is not echoed either. */
export function describe(err: unknown): string {
  const e = err as { code?: string; message?: string };
  if (e?.code === 'ECONNREFUSED')
    return 'the server refused the connection (is PostgreSQL running and listening there?)';
  if (e?.code === '28P01')
    return 'the team server refused the password (Settings > Team or mediadesk team connect URL sets it)';
  if (e?.code === '3D000') return `the database does not exist: ${e.message}`;
  if (e?.code === 'ENOTFOUND') return 'the server name was not found';
  return e?.message ?? String(err);
}

export const TEAM_SCHEMA_VERSION = TEAM_MIGRATIONS.length;
