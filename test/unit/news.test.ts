import { describe, expect, it } from 'vitest';
import type { BatchRecord, JobRecord } from '../../shared/contract/index.ts';
import { BatchNews, JobNews, startedNews } from '../../renderer/src/lib/news.ts';

const batch = (counts: Partial<BatchRecord['counts']>, finished = false, id = 'b1'): BatchRecord => ({
  id, tool: 'upscaler-precision', outDir: '/out', params: {}, backend: 'sandbox', createdAt: 1, total: 4, counts: counts as BatchRecord['counts'], progress: 0, finished,
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
    expect(news.of([batch({ needs_attention: 2, done: 1, canceled: 1 }, true)], name)).toEqual(['Upscaler: batch ended, 1 done · 1 canceled · 2 need you.']);
  });
});

describe('JobNews', () => {
  const job = (state: JobRecord['state'], error: string | null = null) => ({ id: 'j1', state, error, tool: 'music' }) as JobRecord;
  it('says a job once it ends, with why it failed, and not its steps on the way', () => {
    const news = new JobNews();
    expect(news.of([job('queued')], name)).toEqual([]);
    expect(news.of([job('running')], name)).toEqual([]);
    expect(news.of([job('failed', 'the service refused it')], name)).toEqual(['Upscaler: failed: the service refused it.']);
    expect(news.of([job('failed', 'the service refused it')], name)).toEqual([]);
  });
});

describe('startedNews', () => {
  const issue = { path: '/a', reason: 'r' };
  it('says how many jobs a Start queued and what it passed over, or that it queued none', () => {
    expect(startedNews({ batch: batch({ queued: 4 }), queued: 4, resumed: [], skipped: [issue], rejected: [issue, issue] } as never)).toBe('Batch started: 4 jobs queued, 1 skipped, 2 rejected.');
    expect(startedNews({ batch: batch({ queued: 1 }), queued: 1, resumed: [], skipped: [], rejected: [] } as never)).toBe('Batch started: 1 job queued.');
    expect(startedNews({ batch: null, queued: 0, resumed: [], skipped: [issue], rejected: [] } as never)).toBe('Nothing to run: no job was queued (1 skipped).');
  });
});
