import type { Database, Statement } from 'better-sqlite3';

/** Every statement `db` runs while `fn` runs, with its values: the queries the code really makes, to EXPLAIN. */
export function statementsOf(db: Database, fn: () => void): { sql: string; params: unknown[] }[] {
  const prepare = db.prepare.bind(db);
  const seen: { sql: string; params: unknown[] }[] = [];
  db.prepare = ((sql: string) => {
    const st = prepare(sql) as Statement;
    for (const m of ['all', 'get', 'iterate'] as const) {
      const run = (st[m] as (...a: unknown[]) => unknown).bind(st);
      (st as unknown as Record<string, unknown>)[m] = (...params: unknown[]) => {
        seen.push({ sql, params });
        return run(...params);
      };
    }
    return st;
  }) as typeof db.prepare;
  try {
    fn();
  } finally {
    db.prepare = prepare as typeof db.prepare;
  }
  return seen;
}

/** SQLite's plan for a statement, one line per step. */
export const planOf = (db: Database, sql: string, params: unknown[] = []): string[] =>
  (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail);
