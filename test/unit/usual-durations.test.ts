// Each tool's learned task duration on a real queue database: kept across runs, per server, and
// let go of when the tool gets faster.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../electron/core/db/open.ts';
import { QUEUE_MIGRATIONS } from '../../electron/core/queue/migrations.ts';
import { EXPLORE_EVERY, UsualDurations } from '../../electron/core/engine/usual-durations.ts';
import { DEFAULT_POLL, firstAskDelay } from '../../electron/core/engine/poll-policy.ts';

const root = mkdtempSync(join(tmpdir(), 'usual-durations-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const dbFile = () => join(root, `jobs${++n}.db`);
const LIVE = 'live https://api.magnific.com';

describe('usual durations', () => {
  it('are the median of the last 15 tasks seen, kept in the database for the next run', () => {
    const file = dbFile();
    const db = openDatabase(file, QUEUE_MIGRATIONS);
    const usual = new UsualDurations(db);
    expect(usual.of(LIVE, 'upscaler-precision')).toBeNull();
    for (const ms of [9000, 4000, 4100, 3900]) usual.record(LIVE, 'upscaler-precision', ms);
    expect(usual.of(LIVE, 'upscaler-precision')).toBe(4100);
    for (let i = 0; i < 15; i++) usual.record(LIVE, 'upscaler-precision', 2000 + i);
    // The four first are gone: the median of 2000..2014.
    expect(usual.of(LIVE, 'upscaler-precision')).toBe(2007);
    usual.save();
    db.close();

    const again = new UsualDurations(openDatabase(file, QUEUE_MIGRATIONS));
    expect(again.of(LIVE, 'upscaler-precision')).toBe(2007);
    expect(again.of(LIVE, 'kling-video')).toBeNull();
  });

  it('belong to a server, whichever key was used on it', () => {
    const usual = new UsualDurations(openDatabase(dbFile(), QUEUE_MIGRATIONS));
    usual.record(`${LIVE} key 3fa2c9d1`, 'mystic', 12_000);
    expect(usual.of(`${LIVE} key 0b1c2d3e`, 'mystic')).toBe(12_000);
    expect(usual.of(LIVE, 'mystic')).toBe(12_000);
    expect(usual.of('sandbox', 'mystic')).toBeNull();
    expect(usual.of(null, 'mystic')).toBeNull();
    usual.record(null, 'mystic', 300);
    expect(usual.of(null, 'mystic')).toBe(300);
    expect(usual.of(LIVE, 'mystic')).toBe(12_000);
  });

  it('ask one task in eight early once known, and start again from a task that shows the tool got faster', () => {
    const usual = new UsualDurations(openDatabase(dbFile(), QUEUE_MIGRATIONS));
    // Nothing known: no task is asked early.
    expect(Array.from({ length: EXPLORE_EVERY }, () => usual.explore(LIVE, 'mystic')).some(Boolean)).toBe(false);
    for (let i = 0; i < 10; i++) usual.record(LIVE, 'mystic', 60_000);
    const early = Array.from({ length: 2 * EXPLORE_EVERY }, () => usual.explore(LIVE, 'mystic'));
    expect(early.filter(Boolean)).toHaveLength(2);
    usual.record(LIVE, 'mystic', 30_000, true);
    expect(usual.of(LIVE, 'mystic')).toBe(30_000);
  });

  it('ask early in one run in eight when each run makes one task', () => {
    const file = dbFile();
    const runs: boolean[] = [];
    for (let run = 1; run <= 2 * EXPLORE_EVERY; run++) {
      const db = openDatabase(file, QUEUE_MIGRATIONS);
      const usual = new UsualDurations(db);
      runs.push(usual.explore(LIVE, 'mystic'));
      usual.record(LIVE, 'mystic', 5000);
      usual.save();
      db.close();
    }
    // The first run knew nothing; after it, the 8th and 16th tasks made are asked early.
    expect(runs.flatMap((early, i) => (early ? [i + 1] : []))).toEqual([EXPLORE_EVERY, 2 * EXPLORE_EVERY]);
  });

  it('are learned again when what is stored is not a list of durations', () => {
    const file = dbFile();
    const db = openDatabase(file, QUEUE_MIGRATIONS);
    const put = db.prepare('INSERT INTO usual_durations (backend, tool, samples, tasks) VALUES (?, ?, ?, 3)');
    put.run('', 'mystic', '{oops');
    put.run('', 'flux', '[1, -5]');
    const usual = new UsualDurations(db);
    expect(usual.of(null, 'mystic')).toBeNull();
    expect(usual.of(null, 'flux')).toBeNull();
    usual.record(null, 'mystic', 700);
    expect(new UsualDurations(db).of(null, 'mystic')).toBeNull();
    usual.save();
    expect(new UsualDurations(db).of(null, 'mystic')).toBe(700);
  });

  it('set the first ask at the usual duration, half of it when early, never past the by-id ceiling', () => {
    expect(firstAskDelay(DEFAULT_POLL, 'image', null, false)).toBe(DEFAULT_POLL.firstMs);
    expect(firstAskDelay(DEFAULT_POLL, 'image', 4000, false)).toBe(4000);
    expect(firstAskDelay(DEFAULT_POLL, 'image', 4000, true)).toBe(2000);
    expect(firstAskDelay(DEFAULT_POLL, 'image', 200, false)).toBe(DEFAULT_POLL.firstMs);
    // A 10-minute video is asked at 2 minutes (6 x its 20 s ceiling), then at its usual duration.
    expect(firstAskDelay(DEFAULT_POLL, 'video', 600_000, false)).toBe(120_000);
  });
});
