import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { openDatabase } from '../../electron/core/db/open.ts';
import { QUEUE_MIGRATIONS } from '../../electron/core/queue/migrations.ts';
import { JOB_STATES } from '../../shared/contract/jobs.ts';
import { canMove } from '../../electron/core/queue/states.ts';
import { JobStore } from '../../electron/core/queue/store.ts';
import { sameFileKey } from '../../shared/file-names.ts';
import { cleanup, tmp } from './helpers.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(cleanup));

const batchOf = (id: string) => ({
  id,
  tool: 'upscaler-precision',
  outDir: '/out',
  params: {},
  roots: [],
  snapshot: { namingTemplate: '{name}_{tool}.{ext}', slugs: {} },
});

function store() {
  const dir = tmp('queue');
  dirs.push(dir);
  const db = openDatabase(join(dir, 'mediadesk.db'), QUEUE_MIGRATIONS);
  const s = new JobStore(db);
  s.insertBatch({
    id: 'b1',
    tool: 'upscaler-precision',
    outDir: dir,
    params: {},
    roots: [],
    snapshot: { namingTemplate: '{name}_{tool}.{ext}', slugs: {} },
    jobs: [
      { id: 'j1', inputPath: '/in/a.png', relDir: '', params: {} },
      { id: 'j2', inputPath: '/in/b.png', relDir: 'sub', params: {} },
    ],
  });
  return { s, db, dir };
}

describe('job state machine', () => {
  it('never leaves done, and retry from a settled state is explicit', () => {
    for (const to of JOB_STATES) expect(canMove('done', to)).toBe(false);
    expect(canMove('needs_attention', 'queued')).toBe(true);
    expect(canMove('queued', 'running')).toBe(false);
    // Only the built-in Sandbox's work, lost with its process, goes back to queued unasked (sandbox-restart.test.ts).
    expect(canMove('running', 'queued')).toBe(true);
    expect(canMove('running', 'submitting')).toBe(false);
  });

  it('moves by compare-and-set: the loser of a race changes nothing', () => {
    const { s } = store();
    expect(s.move('j1', 'queued', 'submitting', { attemptId: 'a1' })).toBe(true);
    expect(s.move('j1', 'queued', 'submitting', { attemptId: 'a2' })).toBe(false);
    expect(s.get('j1')!.attemptId).toBe('a1');
    expect(s.move('j1', 'submitting', 'canceled')).toBe(true);
    expect(s.move('j1', 'submitting', 'running', { taskId: 't' })).toBe(false);
    expect(s.get('j1')).toMatchObject({ state: 'canceled', taskId: null });
  });

  it('refuses moves the machine does not allow', () => {
    const { s } = store();
    expect(s.move('j1', 'queued', 'done')).toBe(false);
    expect(s.get('j1')!.state).toBe('queued');
  });

  it('reports batch progress and finds unfinished jobs for an input', () => {
    const { s, dir } = store();
    s.move('j1', 'queued', 'submitting');
    s.move('j1', 'submitting', 'failed', { error: 'bad', invalid: [{ field: 'image', reason: 'too small' }] });
    expect(s.batch('b1')).toMatchObject({ total: 2, progress: 0.5, finished: false, counts: { failed: 1, queued: 1 } });
    expect(s.openJobsIn('upscaler-precision', dir)).toEqual(new Map([['/in/b.png', 'j2']]));
    expect(s.get('j1')!.invalid).toEqual([{ field: 'image', reason: 'too small' }]);
  });

  it("counts a batch's states in a row per state, not per job, with why its queued jobs wait", () => {
    const { s } = store();
    const jobs = Array.from({ length: 300 }, (_, i) => ({
      id: `k${i}`,
      inputPath: `/in/k${i}.png`,
      relDir: '',
      params: {},
    }));
    s.insertBatch({ ...batchOf('b2'), jobs });
    const ids = jobs.map((j) => j.id);
    s.move('k0', 'queued', 'submitting');
    s.move('k1', 'queued', 'canceled');
    s.patch('k2', 'queued', { error: 'waiting: the service is busy' });
    const groups = s.stateCounts(ids);
    expect(groups).toHaveLength(4);
    expect(groups).toEqual(
      expect.arrayContaining([
        { state: 'queued', error: null, n: 297 },
        { state: 'queued', error: 'waiting: the service is busy', n: 1 },
        { state: 'submitting', error: null, n: 1 },
        { state: 'canceled', error: null, n: 1 },
      ]),
    );
    // The same list read again after it grew in place is read whole, not as it was first.
    ids.push('j1');
    expect(s.stateCounts(ids).reduce((sum, g) => sum + g.n, 0)).toBe(301);
  });

  it('gives the lease to one owner, and takes it over from a dead process', () => {
    const { s, db } = store();
    expect(s.tryLease('A', 10_000)).toBe(true);
    expect(s.tryLease('B', 10_000)).toBe(false);
    db.prepare('UPDATE queue_lease SET pid = 2147483646').run();
    expect(s.tryLease('B', 10_000)).toBe(true);
    expect(s.lease()!.owner).toBe('B');
  });

  it('keeps its data when the file is opened again (migrations run once)', () => {
    const { db, dir } = store();
    db.close();
    const again = new JobStore(openDatabase(join(dir, 'mediadesk.db'), QUEUE_MIGRATIONS));
    expect(again.list({ limit: 10, offset: 0 }).total).toBe(2);
  });
});

describe('output names macOS and Windows take as one file (another case or Unicode form)', () => {
  it("another job's planned part, and who made an output, are found under such a name", () => {
    const { s, db, dir } = store();
    const photo = join(dir, 'Photo_upscaler-precision.png');
    expect(s.patch('j1', 'queued', { planned: [photo, join(dir, 'Caf\u00e9_upscaler-precision.png')] })).toBe(true);
    // Resuming j1's part as j2's own would splice j1's bytes into j2's result there.
    expect(s.plannedBy(join(dir, 'photo_upscaler-precision.png'), 'j2')).toBe(true);
    expect(s.plannedBy(join(dir, 'Cafe\u0301_upscaler-precision.png'), 'j2')).toBe(true);
    expect(s.plannedBy(join(dir, 'photo_upscaler-precision.png'), 'j1')).toBe(false);
    expect(s.plannedBy(join(dir, 'other_upscaler-precision.png'), 'j2')).toBe(false);
    db.prepare("UPDATE jobs SET state = 'done', outputs = ? WHERE id = 'j1'").run(JSON.stringify([photo]));
    expect(
      s.doneOutputs('upscaler-precision', dir).byOutputKey.get(sameFileKey(join(dir, 'PHOTO_upscaler-precision.png')))
        ?.input,
    ).toBe('/in/a.png');
  });
});

describe('batch ids from a prefix (the CLI prints 8 characters)', () => {
  it('names the one batch a prefix starts, and refuses one that starts two rather than guessing', () => {
    const { s, dir } = store();
    for (const [n, id] of ['abc10000-0000-4000-8000-000000000001', 'abc20000-0000-4000-8000-000000000002'].entries()) {
      s.insertBatch({
        id,
        tool: 'upscaler-precision',
        outDir: dir,
        params: {},
        roots: [],
        snapshot: { namingTemplate: '{name}_{tool}.{ext}', slugs: {} },
        jobs: [{ id: `p${n}`, inputPath: `/in/p${n}.png`, relDir: '', params: {} }],
      });
    }
    expect(s.resolveBatchId('abc1')).toEqual({ id: 'abc10000-0000-4000-8000-000000000001' });
    expect(s.resolveBatchId('ABC2')).toEqual({ id: 'abc20000-0000-4000-8000-000000000002' });
    expect(s.resolveBatchId('abc')).toEqual({ ambiguous: true });
    expect(s.resolveBatchId('abd')).toEqual({ none: true });
    expect(s.resolveBatchId("a%' OR 1")).toEqual({ none: true });
  });
});
