import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BatchRecord, HotFolderRecord, JobRecord } from '../../shared/contract/index.ts';
import type { AppRun } from '../../shared/contract/team.ts';
import { NoticeDecider, type ToldSet } from '../../electron/core/notices/decide.ts';
import { ToldFile } from '../../electron/core/notices/told.ts';
import { workProgress } from '../../shared/work-progress.ts';
import { desktopWork, NO_ANSWER } from '../../shared/work-status.ts';

const memory = (): ToldSet => {
  const keys = new Set<string>();
  return { has: (k) => keys.has(k), add: (ks) => ks.forEach((k) => keys.add(k)) };
};

function batch(counts: Partial<BatchRecord['counts']>, over: Partial<BatchRecord> = {}): BatchRecord {
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  const settled = (counts.done ?? 0) + (counts.failed ?? 0) + (counts.canceled ?? 0) + (counts.needs_attention ?? 0);
  return {
    id: 'b1',
    tool: 'upscaler-precision',
    outDir: '/out/upscaled',
    params: {},
    backend: 'sandbox',
    createdAt: 1,
    total,
    counts: counts as BatchRecord['counts'],
    progress: settled / total,
    finished: settled === total,
    estimate: null,
    budget: null,
    budgetHold: null,
    project: null,
    ...over,
  };
}

function job(over: Partial<JobRecord>): JobRecord {
  return {
    id: 'j1',
    batchId: 'b1',
    tool: 'upscaler-precision',
    state: 'done',
    input: '/photos/shoot/a.jpg',
    relDir: '',
    outDir: '/out/upscaled',
    params: {},
    taskId: null,
    attempts: 1,
    error: null,
    invalid: [],
    outputs: [],
    text: null,
    resultsExpireAt: null,
    createdAt: 1,
    updatedAt: 1,
    ...over,
  };
}

function hotFolder(counts: Partial<HotFolderRecord['counts']>): HotFolderRecord {
  return {
    id: 'h1',
    folder: '/photos/drop here',
    tool: 'upscaler-precision',
    params: {},
    outDir: '/out/hot',
    state: 'active',
    settleSeconds: 2,
    shared: false,
    watched: true,
    counts: { waiting: 0, queued: 0, done: 0, failed: 0, skipped: 0, ...counts },
    lastFile: null,
    problem: null,
    createdAt: 1,
  };
}

const titles = (notices: { title: string }[]) => notices.map((n) => n.title);

describe('which events make which notice, once', () => {
  it('a batch that ends: all done, then not again for the same end', () => {
    const d = new NoticeDecider(memory());
    const running = batch({ done: 12, running: 8 });
    expect(d.fromJobs({ batches: [running], jobs: [] }, [])).toEqual([]);
    const done = batch({ done: 20 });
    const [notice] = d.fromJobs({ batches: [done], jobs: [job({})] }, []);
    expect(notice).toEqual({
      key: 'batch:b1:20:0:0:0',
      title: 'Precision upscaler: 20 images done',
      body: 'Results are in /out/upscaled',
      screen: 'queue',
      batchId: 'b1',
    });
    expect(d.fromJobs({ batches: [done], jobs: [job({})] }, [])).toEqual([]);
    expect(titles(d.fromJobs({ batches: [batch({ done: 1 }, { id: 'b2' })], jobs: [] }, []))).toEqual([
      'Precision upscaler: 1 image done',
    ]);
  });

  it('a batch with failures says how many; one the person canceled whole says nothing', () => {
    const d = new NoticeDecider(memory());
    const [notice] = d.fromJobs({ batches: [batch({ done: 18, failed: 2 })], jobs: [] }, []);
    expect(notice.title).toBe('Precision upscaler: 18 done, 2 failed');
    expect(notice.body).toBe('See what needs a look in the Queue.');
    expect(titles(d.fromJobs({ batches: [batch({ done: 3, canceled: 7 }, { id: 'b2' })], jobs: [] }, []))).toEqual([
      'Precision upscaler: 3 done, 7 canceled',
    ]);
    expect(d.fromJobs({ batches: [batch({ canceled: 5 }, { id: 'b3' })], jobs: [] }, [])).toEqual([]);
  });

  it('a retried batch that ends again otherwise is told again; the same end is not', () => {
    const d = new NoticeDecider(memory());
    expect(d.fromJobs({ batches: [batch({ done: 18, failed: 2 })], jobs: [] }, [])).toHaveLength(1);
    expect(titles(d.fromJobs({ batches: [batch({ done: 20 })], jobs: [] }, []))).toEqual([
      'Precision upscaler: 20 images done',
    ]);
  });

  it('a job that needs the person while its batch runs, once; the batch end counts it', () => {
    const d = new NoticeDecider(memory());
    const needs = job({ id: 'j7', state: 'needs_attention', input: '/photos/shoot/sunset.jpg', error: 'was it paid?' });
    const running = batch({ done: 3, needs_attention: 1, running: 2 });
    const [notice] = d.fromJobs({ batches: [running], jobs: [needs] }, []);
    expect(notice.title).toBe('A job needs you: sunset.jpg');
    expect(notice.body).toBe('Precision upscaler: was it paid?');
    expect(d.fromJobs({ batches: [running], jobs: [needs] }, [])).toEqual([]);
    const two = [job({ id: 'j8', state: 'needs_attention' }), job({ id: 'j9', state: 'needs_attention' })];
    expect(titles(d.fromJobs({ batches: [running], jobs: two }, []))).toEqual(['2 jobs need you: Precision upscaler']);
    const ended = batch({ done: 5, needs_attention: 1 });
    expect(titles(d.fromJobs({ batches: [ended], jobs: [needs] }, []))).toEqual([
      'Precision upscaler: 5 done, 1 needs you',
    ]);
  });

  it('a batch its budget pauses, once per pause; raised and paused again later, told again', () => {
    const d = new NoticeDecider(memory());
    const budgetHold = "Paused: this batch's budget of 3 jobs is used.";
    const held = batch({ done: 3, queued: 7 }, { budgetHold });
    const [notice] = d.fromJobs({ batches: [held], jobs: [] }, []);
    // The Studio's and the Queue's words: the state's label, then why.
    expect(notice).toMatchObject({
      title: 'Precision upscaler: Paused by budget',
      body: "Paused by budget: this batch's budget of 3 jobs is used.",
      batchId: 'b1',
    });
    expect(d.fromJobs({ batches: [held], jobs: [] }, [])).toEqual([]);
    expect(d.fromJobs({ batches: [batch({ done: 4, queued: 6 })], jobs: [] }, [])).toEqual([]);
    const again = batch({ done: 6, queued: 4 }, { budgetHold: "Paused: this batch's budget of 6 jobs is used." });
    expect(titles(d.fromJobs({ batches: [again], jobs: [] }, []))).toEqual(['Precision upscaler: Paused by budget']);
  });

  it('a batch held at its daily cap is told once, in the same words as the Queue; a wait for the service is not told', () => {
    const d = new NoticeDecider(memory());
    const queued = batch({ done: 2, queued: 3 });
    const cap = { tool: 'upscaler-precision', title: 'Precision upscaler', limit: 2, left: 0, resetsAt: 0, waiting: 3 };
    const status = {
      paused: false,
      rateLimitedUntil: null,
      serviceWait: null,
      capHolds: [cap],
      running: true,
      counts: batch({}).counts,
    };
    const [notice] = d.fromJobs({ batches: [queued], jobs: [], status }, []);
    expect(notice.title).toBe('Precision upscaler: Held by a daily cap');
    expect(notice.body).toMatch(/^Held by a daily cap: the daily limit of 2 jobs for Precision upscaler is reached;/);
    expect(d.fromJobs({ batches: [queued], jobs: [], status }, [])).toEqual([]);
    const waiting = { ...status, capHolds: [], serviceWait: 'the service has not answered for over 10 s' };
    expect(d.fromJobs({ batches: [batch({ done: 2, queued: 3 })], jobs: [], status: waiting }, [])).toEqual([]);
  });

  it('a workflow-app run that ends: done, failed, needs you; a canceled one is not told', () => {
    const d = new NoticeDecider(memory());
    const run = (state: AppRun['state'], id: string) =>
      ({
        id,
        appName: 'Product shots',
        state,
        attempts: 1,
        outDir: '/out/apps',
        error: 'the app refused it',
      }) as AppRun;
    expect(titles(d.fromApps([run('running', 'r0'), run('done', 'r1'), run('failed', 'r2')]))).toEqual([
      'Product shots: run finished',
      'Product shots: run failed',
    ]);
    expect(titles(d.fromApps([run('needs_attention', 'r3'), run('canceled', 'r4'), run('done', 'r1')]))).toEqual([
      'A job needs you: Product shots',
    ]);
  });

  it("a hot folder's burst: told when its files all settle, and its batches are not told one by one", () => {
    const d = new NoticeDecider(memory());
    expect(d.fromHotFolders([hotFolder({ done: 4 })])).toEqual([]);
    expect(d.fromHotFolders([hotFolder({ done: 4, waiting: 2, queued: 1 })])).toEqual([]);
    const fromFolder = job({ input: '/photos/drop here/c.jpg' });
    const notices = d.fromJobs({ batches: [batch({ done: 3 })], jobs: [fromFolder] }, [hotFolder({ done: 7 })]);
    expect(notices).toEqual([
      {
        key: 'hot:h1:7:0',
        title: 'Hot folder drop here: 3 images done',
        body: 'Results are in /out/hot',
        screen: 'hot-folders',
        batchId: null,
      },
    ]);
    expect(d.fromHotFolders([hotFolder({ done: 7 })])).toEqual([]);
    d.fromHotFolders([hotFolder({ done: 7, queued: 2 })]);
    expect(titles(d.fromHotFolders([hotFolder({ done: 8, failed: 1 })]))).toEqual([
      'Hot folder drop here: 1 done, 1 failed',
    ]);
  });
});

describe('told notices are remembered in the data folder', () => {
  it('a restart (a new decider over the same file) does not tell an end again', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'md-told-')), 'notices-told.json');
    const done = batch({ done: 20 });
    expect(new NoticeDecider(new ToldFile(path)).fromJobs({ batches: [done], jobs: [] }, [])).toHaveLength(1);
    const again = new NoticeDecider(new ToldFile(path));
    expect(again.fromJobs({ batches: [done], jobs: [] }, [])).toEqual([]);
    expect(again.fromJobs({ batches: [batch({ done: 2 }, { id: 'b2' })], jobs: [] }, [])).toHaveLength(1);
  });

  it('two processes on one data folder keep both their keys', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'md-told-')), 'notices-told.json');
    const a = new ToldFile(path);
    const b = new ToldFile(path);
    a.add(['one']);
    b.add(['two']);
    const fresh = new ToldFile(path);
    expect([fresh.has('one'), fresh.has('two')]).toEqual([true, true]);
  });
});

describe('progress outside the window', () => {
  const status = { paused: false, serviceWait: null, capHolds: [] };
  const moving = () => [batch({ done: 3, running: 1, queued: 16 }), batch({ done: 5 }, { id: 'b2' })];

  it('counts unfinished batches only', () => {
    expect(workProgress(moving())).toEqual({ settled: 3, total: 20 });
  });

  it('the tray and the taskbar say the work as it runs, and nothing once all is done', () => {
    expect(desktopWork(moving(), status)).toEqual({
      toolTip: 'MediaDesk: 3 of 20 done',
      status: '3 of 20 done',
      why: null,
      toggle: 'Pause queue',
      bar: { value: 0.15, mode: 'normal' },
      keepsRunning: true,
    });
    expect(desktopWork([batch({ done: 5 })], status)).toMatchObject({
      toolTip: 'MediaDesk: All done',
      bar: { value: -1, mode: 'normal' },
      keepsRunning: false,
    });
  });

  it('a paused queue is said as the Queue says it, offers Resume, and lets the app quit on close', () => {
    expect(desktopWork(moving(), { ...status, paused: true })).toEqual({
      toolTip: 'MediaDesk: Paused: 3 of 20 done\nthe queue is paused; Resume queue goes on',
      status: 'Paused: 3 of 20 done',
      why: 'the queue is paused; Resume queue goes on',
      toggle: 'Resume queue',
      bar: { value: 0.15, mode: 'paused' },
      keepsRunning: false,
    });
  });

  it('a budget, a daily cap and a silent service are named with why, not said as running or paused', () => {
    const held = [batch({ done: 3, queued: 17 }, { budgetHold: 'Paused: the budget of 10 credits is spent' })];
    expect(desktopWork(held, status)).toMatchObject({
      status: 'Paused by budget: 3 of 20 done',
      why: 'the budget of 10 credits is spent',
      toggle: 'Pause queue',
      bar: { mode: 'paused' },
      keepsRunning: true,
    });
    const cap = { tool: 'upscaler-precision', title: 'Upscaler', limit: 5, left: 0, resetsAt: 0, waiting: 17 };
    const capped = desktopWork([batch({ done: 3, queued: 17 })], { ...status, capHolds: [cap] });
    expect(capped.status).toBe('Held by a daily cap: 3 of 20 done');
    expect(capped.why).toMatch(/^the daily limit of 5 jobs for Upscaler is reached/);
    expect(desktopWork(moving(), { ...status, serviceWait: NO_ANSWER })).toMatchObject({
      toolTip: `MediaDesk: Waiting for the service: 3 of 20 done\n${NO_ANSWER}`,
      bar: { mode: 'paused' },
    });
    // One batch that runs is what the tray says, whatever holds another.
    expect(desktopWork([...held, batch({ running: 2 }, { id: 'b3', tool: 'other' })], status).status).toBe(
      '3 of 22 done',
    );
  });
});
