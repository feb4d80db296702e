import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../electron/core/db/open.ts';
import { dbPaths } from '../../electron/core/paths.ts';
import { QUEUE_MIGRATIONS } from '../../electron/core/queue/migrations.ts';
import { JobStore } from '../../electron/core/queue/store.ts';
import { openQueueForReading } from '../../electron/host/cli/queue-read.ts';
import { cleanup, tmp } from './helpers.ts';

// `mediadesk jobs list` reads the store alone only when the engine would add nothing to the rows.
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(cleanup));

describe("the queue read without the engine (jobs list's quick path)", () => {
  it('reads a queue with nothing queued and no Sandbox job to settle; a queued job or a gone Sandbox job needs the engine', () => {
    const home = tmp('queue-read');
    dirs.push(home);
    const fresh = openQueueForReading(home);
    expect(fresh?.store.listRecords({ limit: 10, offset: 0 })).toEqual({ jobs: [], total: 0 });
    fresh?.close();

    const db = openDatabase(dbPaths(home).jobs, QUEUE_MIGRATIONS);
    try {
      const store = new JobStore(db);
      store.insertBatch({
        id: 'b1',
        tool: 'upscaler-precision',
        outDir: home,
        params: {},
        roots: [],
        snapshot: { namingTemplate: '{name}_{tool}.{ext}', slugs: {} },
        backend: 'sandbox',
        jobs: [{ id: 'j1', inputPath: '/in/a.png', relDir: '', params: {} }],
      });
      // Queued: whether its tool is held at its daily cap is the engine's to say (it asks the backend).
      expect(openQueueForReading(home)).toBeNull();
      // Running on a built-in Sandbox whose process has ended: the engine queues it again first.
      expect(store.move('j1', 'queued', 'submitting', { attemptId: 'a', sandboxOf: 'an-ended-process' })).toBe(true);
      expect(store.move('j1', 'submitting', 'running', { taskId: 't1' })).toBe(true);
      expect(openQueueForReading(home)).toBeNull();
      expect(store.get('j1')!.state).toBe('running');
      // Settled: the store alone answers, with the engine's own rows.
      expect(store.move('j1', 'running', 'failed', { error: 'refused' })).toBe(true);
      const settled = openQueueForReading(home);
      expect(settled?.store.listRecords({ limit: 10, offset: 0 })).toEqual({
        jobs: [expect.objectContaining({ id: 'j1', state: 'failed', error: 'refused', input: '/in/a.png' })],
        total: 1,
      });
      settled?.close();
    } finally {
      db.close();
    }
  });
});
