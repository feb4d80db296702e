import Database from 'better-sqlite3';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import type { StagedBatch } from '../../electron/core/audit/stage.ts';
import { makeEvent, tempDir } from './helpers.ts';

// The desktop app runs the bundle, where import.ts looks for the worker as ./stage-worker.js beside
// it. `npm test` builds before vitest runs, so out/ is this tree's build.
const built = join(import.meta.dirname, '../../out/main');
const tmp = tempDir('md-stage-bundle-');
afterAll(() => tmp.cleanup());

describe('the production build', () => {
  it('carries the audit import worker beside the main bundle, and the built worker stages a file', async () => {
    expect(existsSync(join(built, 'index.js')), 'out/main is missing: run `npm run build` before this test').toBe(true);
    expect(existsSync(join(built, 'stage-worker.js'))).toBe(true);
    const lines = [
      ...Array.from({ length: 120 }, (_, i) => JSON.stringify(makeEvent(i))),
      '{"event_id": 5}',
      JSON.stringify(makeEvent(7)),
    ];
    const path = tmp.file('bundle.ndjson', lines.join('\n') + '\n');
    const stagePath = join(tmp.dir, 'bundle.stage');
    rmSync(stagePath, { force: true });
    const batches: StagedBatch[] = [];
    const worker = new Worker(join(built, 'stage-worker.js'), {
      workerData: { auditStage: { path, format: 'ndjson', batchSize: 50, stagePath } },
    });
    await new Promise<void>((resolve, reject) => {
      worker.on('message', (m: StagedBatch) => {
        batches.push(m);
        if (m.done) resolve();
      });
      worker.on('error', reject);
    });
    await worker.terminate();
    expect(batches.map((b) => b.hi - b.lo)).toEqual([50, 50, 21]);
    expect(batches.reduce((n, b) => n + b.items, 0)).toBe(122);
    expect(batches.flatMap((b) => b.rejects)).toEqual([
      { line: 121, item: 121, reason: expect.stringMatching(/event_id/) },
    ]);
    const db = new Database(stagePath, { readonly: true });
    try {
      expect(db.prepare('SELECT count(*) FROM rows').pluck().get()).toBe(121);
      expect(db.prepare('SELECT eventId FROM rows WHERE id = 0').pluck().get()).toMatch(/^evt_/);
    } finally {
      db.close();
    }
  });
});
