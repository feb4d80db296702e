import { ApiError } from '../api/client.ts';
import type { Db } from '../db/open.ts';

/**
 * Workflow apps are served as `flows` by the newer official description and as `apps` before it,
 * with the same bodies and answers. Flows are asked first; where a family answers 404 the other is
 * asked, and whichever answered is remembered per backend (in mediadesk.db, apps migration 3), so a
 * list, run or poll asks one family only until that family answers 404.
 */
export const APP_FAMILIES = ['flows', 'apps'] as const;
export type AppFamily = (typeof APP_FAMILIES)[number];

export interface FamilyPaths {
  family: AppFamily;
  list: string;
  one: (appId: string) => string;
  run: (appId: string) => string;
  runOf: (runId: string) => string;
}

export function familyPaths(family: AppFamily): FamilyPaths {
  const base = `/v1/ai/${family}`;
  return {
    family,
    list: base,
    one: (id) => `${base}/${encodeURIComponent(id)}`,
    run: (id) => `${base}/${encodeURIComponent(id)}/run`,
    runOf: (runId) => `${base}/runs/${encodeURIComponent(runId)}`,
  };
}

const isNotFound = (err: unknown) => err instanceof ApiError && err.kind === 'http' && err.status === 404;

export class AppFamilies {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /** The family that last answered on this backend; null before any has. */
  known(backend: string): AppFamily | null {
    const row = this.db.prepare('SELECT family FROM app_families WHERE backend = ?').get(backend) as
      { family: AppFamily } | undefined;
    return row && (APP_FAMILIES as readonly string[]).includes(row.family) ? row.family : null;
  }

  private remember(backend: string, family: AppFamily): void {
    if (this.known(backend) === family) return;
    this.db
      .prepare(
        'INSERT INTO app_families (backend, family, answered_at) VALUES (?, ?, ?) ON CONFLICT(backend) DO UPDATE SET family = excluded.family, answered_at = excluded.answered_at',
      )
      .run(backend, family, Date.now());
  }

  /**
   * `send` over the family this backend answers with. A 404 there asks the other family once: if it
   * answers (anything but 404) it is remembered; if both answer 404 (an app or run neither knows),
   * the first 404 is thrown and nothing changes.
   */
  async call<T>(backend: string, send: (paths: FamilyPaths) => Promise<T>): Promise<T> {
    const first = this.known(backend) ?? APP_FAMILIES[0];
    try {
      const answer = await send(familyPaths(first));
      this.remember(backend, first);
      return answer;
    } catch (err) {
      if (!isNotFound(err)) {
        if (err instanceof ApiError && err.kind === 'http') this.remember(backend, first);
        throw err;
      }
      const other = APP_FAMILIES.find((f) => f !== first)!;
      try {
        const answer = await send(familyPaths(other));
        this.remember(backend, other);
        return answer;
      } catch (err2) {
        if (isNotFound(err2)) throw err;
        if (err2 instanceof ApiError && err2.kind === 'http') this.remember(backend, other);
        throw err2;
      }
    }
  }
}
