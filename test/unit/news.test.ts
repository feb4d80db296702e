import { afterEach, describe, expect, it, vi } from 'vitest';
import type { BatchRecord, JobRecord, QueueStatus } from '../../shared/contract/index.ts';
import { BatchNews, CopyNews, HeldBackNews, JobNews, startedNews } from '../../renderer/src/lib/news.ts';

const batch = (counts: Partial<BatchRecord['counts']>, finished = false, id = 'b1'): BatchRecord => ({
  id,
  tool: 'upscaler-precision',
  outDir: '/out',
  params: {},
  backend: 'sandbox',
  createdAt: 1,
  total: 4,
  counts: counts as BatchRecord['counts'],
  progress: 0,
  finished,
  estimate: null,
  budget: null,
  budgetHold: null,
  project: null,
});
const name = () => 'Upscaler';

describe('BatchNews: what of a busy batch is said', () => {
  it('says nothing of a batch first met, nor of its jobs moving on; says its end once', () => {
    const news = new BatchNews();
    expect(news.of([batch({ done: 4 }, true, 'old'), batch({ queued: 4 })], name)).toEqual([]);
    expect(news.of([batch({ done: 4 }, true, 'old'), batch({ running: 2, queued: 2 })], name)).toEqual([]);
    expect(news.of([batch({ done: 3, running: 1 })], name)).toEqual([]);
    expect(news.of([batch({ done: 4 }, true)], name)).toEqual(['Upscaler: batch done, 4 of 4.']);
    expect(news.of([batch({ done: 4 }, true)], name)).toEqual([]);
  });

  it('says how a batch that did not all succeed ended, and when more of its jobs need you', () => {
    const news = new BatchNews();
    news.of([batch({ queued: 4 })], name);
    expect(news.of([batch({ needs_attention: 1, queued: 3 })], name)).toEqual(['Upscaler: 1 job needs you.']);
    expect(news.of([batch({ needs_attention: 1, done: 1, queued: 2 })], name)).toEqual([]);
    expect(news.of([batch({ needs_attention: 2, done: 1, queued: 1 })], name)).toEqual(['Upscaler: 2 jobs need you.']);
    expect(news.of([batch({ needs_attention: 2, done: 1, canceled: 1 }, true)], name)).toEqual([
      'Upscaler: batch ended, 1 done · 1 canceled · 2 need you.',
    ]);
  });
});

describe('JobNews', () => {
  const job = (state: JobRecord['state'], error: string | null = null) =>
    ({ id: 'j1', state, error, tool: 'music' }) as JobRecord;
  it('says a job once it ends, with why it failed, and not its steps on the way', () => {
    const news = new JobNews();
    expect(news.of([job('queued')], name)).toEqual([]);
    expect(news.of([job('running')], name)).toEqual([]);
    expect(news.of([job('failed', 'the service refused it')], name)).toEqual([
      'Upscaler: failed: the service refused it.',
    ]);
    expect(news.of([job('failed', 'the service refused it')], name)).toEqual([]);
  });
});

describe('startedNews', () => {
  const issue = { path: '/a', reason: 'r' };
  it('says how many jobs a Start queued and what it passed over, or that it queued none', () => {
    expect(
      startedNews({
        batch: batch({ queued: 4 }),
        queued: 4,
        resumed: [],
        skipped: [issue],
        rejected: [issue, issue],
      } as never),
    ).toBe('Batch started: 4 jobs queued, 1 skipped, 2 rejected.');
    expect(
      startedNews({ batch: batch({ queued: 1 }), queued: 1, resumed: [], skipped: [], rejected: [] } as never),
    ).toBe('Batch started: 1 job queued.');
    expect(startedNews({ batch: null, queued: 0, resumed: [], skipped: [issue], rejected: [] } as never)).toBe(
      'Nothing to run: no job was queued (1 skipped).',
    );
  });
});

describe('HeldBackNews: a wait for the server', () => {
  const st = (serviceWait: string | null, counts: Partial<QueueStatus['counts']> = { queued: 2 }): QueueStatus => ({
    paused: false,
    rateLimitedUntil: null,
    serviceWait,
    capHolds: [],
    running: true,
    counts: counts as QueueStatus['counts'],
  });
  const why = "the server's rate limit was reached";

  it('is said once as it starts and once as it ends, not at each retry; a wait met on opening is no news', () => {
    const news = new HeldBackNews();
    expect(news.of(null)).toBeNull();
    expect(news.of(st(null))).toBeNull();
    expect(news.of(st(why))).toBe(
      "Queue waiting: the server's rate limit was reached. Nothing was charged; the jobs are sent again by themselves.",
    );
    expect(news.of(st(why, { submitting: 1, queued: 1 }))).toBeNull();
    expect(news.of(st(why))).toBeNull();
    expect(news.of(st(null, { running: 1, queued: 1 }))).toBe('Queue going on: the server takes jobs again.');
    expect(news.of(st(null))).toBeNull();
    const opened = new HeldBackNews();
    expect(opened.of(st(why))).toBeNull();
  });

  it('a wait over because its jobs were canceled is not said as going on', () => {
    const news = new HeldBackNews();
    news.of(st(null));
    news.of(st(why));
    expect(news.of(st(null, { canceled: 2 }))).toBe('The queue no longer waits.');
  });
});

describe('CopyNews: a drop copied to the host', () => {
  afterEach(() => vi.useRealTimers());
  const at = (copied: number, total = 400, failed = 0) => ({ copied, failed, total });

  it('a quick copy says nothing of itself; a long one says it started, then how far at most every 15 s', () => {
    vi.useFakeTimers();
    const said: string[] = [];
    const news = new CopyNews((m) => said.push(m));
    news.start(6);
    vi.advanceTimersByTime(900);
    news.progress(at(6, 6));
    news.stop();
    vi.advanceTimersByTime(5000);
    expect(said).toEqual([]);

    news.start(400);
    news.progress(at(1));
    vi.advanceTimersByTime(1000);
    expect(said).toEqual(['Copying 400 files to MediaDesk…']);
    for (let i = 2; i < 320; i++) {
      vi.advanceTimersByTime(100);
      news.progress(at(i, 400, i > 200 ? 1 : 0));
    }
    // 31.8 s of counts: two sentences, not 318.
    expect(said).toEqual([
      'Copying 400 files to MediaDesk…',
      'Copying 151 of 400 files…',
      'Copying 302 of 400 files… (1 could not be copied)',
    ]);
    news.progress(at(400));
    news.stop();
    vi.advanceTimersByTime(60_000);
    expect(said).toHaveLength(3);
  });
});
