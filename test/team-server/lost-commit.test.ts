import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLimiter } from '../../electron/core/limits/limiter.ts';
import { TeamServer } from '../../electron/core/team-server/connection.ts';
import { TeamPacing } from '../../electron/core/team-server/pacing.ts';
import { cleanup, tmp } from '../engine/helpers.ts';
import { pgMissing, startPg, type TestPg } from '../pg.ts';
import { pgRelay } from './relay.ts';

const missing = pgMissing();

describe.skipIf(missing)('a grant whose commit was answered by no one', () => {
  let pg: TestPg;
  let dir: string;
  beforeAll(async () => {
    pg = await startPg();
    dir = tmp('team-lost-commit');
    for (const m of ['a', 'b']) mkdirSync(join(dir, m));
  });
  afterAll(async () => {
    await pg?.close();
    cleanup(dir);
  });

  it('and that this machine then did not use, is taken back when the server answers: it spends no budget', async () => {
    const url = await pg.createDb('lostcommit');
    const cutter = await pgRelay(pg.port);
    const relayed = cutter.through(url);
    const serverOf = (connect: string) =>
      new TeamServer({ target: async () => ({ connect, shown: connect, from: 'env' }) });
    const opened = [openLimiter(join(dir, 'a')), openLimiter(join(dir, 'b'))];
    const price = 10;
    const mine = serverOf(relayed);
    const other = serverOf(url);
    const pacing = new TeamPacing({ server: mine, local: opened[0].limiter, priceOf: () => price, retryMs: 0 });
    const otherPacing = new TeamPacing({ server: other, local: opened[1].limiter, priceOf: () => price });
    // Two machines share the team: alone, this one may spend half of what is left.
    expect((await otherPacing.acquire({ scope: 's', kind: 'poll' })).go).toBe(true);
    await other.with((c) =>
      c.query("INSERT INTO mediadesk.budgets (name, credits, set_at, set_by) VALUES ('day', $1, 0, 'test')", [price]),
    );
    const req = { scope: 's', kind: 'create' as const, tool: 'mystic' };

    cutter.cutNextCommit();
    const alone = await pacing.acquire(req);
    expect(cutter.cuts).toBe(1);
    expect(alone).toMatchObject({ go: false, reason: 'team_budget' });
    const taken = await other.with((c) =>
      c.query("SELECT count(*)::int AS n FROM mediadesk.grants WHERE kind = 'create'"),
    );
    expect(taken.rows[0].n, 'the server committed the grant whose answer was lost').toBe(1);

    // Back: the unused grant is undone before this one is decided, so the budget holds one create still.
    expect(await pacing.acquire(req)).toMatchObject({ go: true });
    const counts = await other.with((c) =>
      c.query(`SELECT (SELECT sum(uses)::int FROM mediadesk.daily_uses) AS uses,
                      (SELECT sum(credits)::int FROM mediadesk.spend) AS spent,
                      (SELECT count(*)::int FROM mediadesk.grants WHERE kind = 'create') AS grants`),
    );
    expect(counts.rows[0]).toEqual({ uses: 1, spent: price, grants: 1 });
    expect(await pacing.acquire(req)).toMatchObject({ go: false, reason: 'team_budget' });

    await mine.close();
    await other.close();
    await cutter.close();
    for (const o of opened) o.close();
  });
});
