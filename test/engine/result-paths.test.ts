import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../electron/core/db/open.ts';
import { dbPaths } from '../../electron/core/paths.ts';
import { QUEUE_MIGRATIONS } from '../../electron/core/queue/migrations.ts';
import { JobStore } from '../../electron/core/queue/store.ts';
import { planOf, statementsOf } from '../query-plans.ts';
import { cleanup, queueBatch, tmp } from './helpers.ts';

// The web host's /media asks the queue, per request, whether it recorded a file (store.isResult,
// store.isInput): each answer is one index lookup (queue migration 12), not a scan of every job.
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(cleanup));

describe('the files the queue recorded, each found by an index', () => {
  it('isResult and isInput are one index lookup each, and answer for what jobs wrote and were given only', () => {
    const home = tmp('result-paths');
    dirs.push(home);
    const db = openDatabase(dbPaths(home).jobs, QUEUE_MIGRATIONS);
    try {
      const store = new JobStore(db);
      queueBatch(store, home, ['/in/a.png', '/in/b.png']);
      db.prepare('UPDATE jobs SET outputs = ? WHERE id = ?').run(
        JSON.stringify(['/out/a_1.png', '/out/a_2.png']),
        'j0',
      );
      const ran = statementsOf(db, () => {
        expect([store.isResult('/out/a_1.png'), store.isResult('/out/a_2.png')]).toEqual([true, true]);
        // Never recorded: a file beside them, a prefix of one, an input.
        expect([store.isResult('/out/a_3.png'), store.isResult('/out/a_'), store.isResult('/in/a.png')]).toEqual([
          false,
          false,
          false,
        ]);
        expect([store.isInput('/in/b.png'), store.isInput('/out/a_1.png'), store.isInput('/in/c.png')]).toEqual([
          true,
          false,
          false,
        ]);
      });
      const plans = [...new Set(ran.map((s) => s.sql))].map((sql) => planOf(db, sql, ['/x']).join('; '));
      expect(plans).toEqual([
        'SEARCH result_paths USING PRIMARY KEY (path=?)',
        'SEARCH jobs USING COVERING INDEX jobs_input_path (input_path=?)',
      ]);
      // Outputs written again (a retry) or the row gone: what it no longer holds is no longer a result.
      db.prepare('UPDATE jobs SET outputs = ? WHERE id = ?').run(JSON.stringify(['/out/a_2.png']), 'j0');
      expect([store.isResult('/out/a_1.png'), store.isResult('/out/a_2.png')]).toEqual([false, true]);
      db.prepare("DELETE FROM jobs WHERE id = 'j0'").run();
      expect(store.isResult('/out/a_2.png')).toBe(false);
    } finally {
      db.close();
    }
  });

  it('migration 12 records the outputs a queue held before it', () => {
    const home = tmp('result-paths-v11');
    dirs.push(home);
    const old = openDatabase(dbPaths(home).jobs, QUEUE_MIGRATIONS.slice(0, 11));
    // Written as a build of schema 11 wrote it: today's store writes columns later migrations made.
    old
      .prepare(
        `INSERT INTO batches (id, tool, out_dir, params, roots, backend, created_at)
         VALUES ('b1', 'upscaler-precision', ?, '{}', '[]', 'sandbox', 0)`,
      )
      .run(home);
    old
      .prepare(
        `INSERT INTO jobs (id, seq, batch_id, tool, state, input_path, rel_dir, out_dir, params, snapshot, created_at, updated_at, outputs)
         VALUES ('j0', 1, 'b1', 'upscaler-precision', 'done', '/in/a.png', '', ?, '{}', '{}', 0, 0, ?)`,
      )
      .run(home, JSON.stringify(['/out/kept.png']));
    old.close();
    const db = openDatabase(dbPaths(home).jobs, QUEUE_MIGRATIONS);
    try {
      const store = new JobStore(db);
      expect([store.isResult('/out/kept.png'), store.isResult('/out/other.png'), store.isInput('/in/a.png')]).toEqual([
        true,
        false,
        true,
      ]);
    } finally {
      db.close();
    }
  });
});
