import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import type { Engine } from '../../electron/core/engine/engine.ts';
import { ATTENTION } from '../../electron/core/queue/job-messages.ts';
import { cleanup, control, creates, engineFor, makeImages, settle, tmp } from './helpers.ts';
import { until } from '../sandbox/helpers.ts';
import { until as waitUntil } from '../wait.ts';

let sb: RunningSandbox;
const dirs: string[] = [];
const engines: (Engine & { close(): Promise<void> })[] = [];

beforeAll(async () => {
  sb = await startSandbox({ port: 0, taskDurationMs: 100, seed: 7 });
});
afterAll(() => sb.close());
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
  dirs.splice(0).forEach(cleanup);
  await control(sb.url, 'reset', {});
});

async function batchOf(n: number, o: Parameters<typeof engineFor>[2] = {}) {
  const dir = tmp('faults');
  dirs.push(dir);
  const input = join(dir, 'in');
  const out = join(dir, 'out');
  await makeImages(
    input,
    Array.from({ length: n }, (_, i) => `f${i}.png`),
  );
  const e = engineFor(join(dir, 'home'), sb.url, o);
  engines.push(e);
  const r = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
  return { e, r, out };
}

const noParts = (out: string) =>
  !existsSync(out) || readdirSync(out, { recursive: true }).every((f) => !String(f).endsWith('.part'));

describe('faults of the Sandbox', () => {
  it('429 with Retry-After: creates are retried after the wait, never duplicated', async () => {
    await control(sb.url, 'faults', { rate429: 0.5, retryAfterSec: 1 });
    const { e, r, out } = await batchOf(6);
    e.start();
    await settle(e, r.jobIds);
    expect(e.store.byIds(r.jobIds).every((j) => j.state === 'done')).toBe(true);
    const stats = await control(sb.url, 'stats');
    expect(creates(stats)).toBe(6);
    expect(readdirSync(out)).toHaveLength(6);
  });

  it('a create refused by the rate limit or a busy server waits, saying why in words and that nothing was charged', async () => {
    for (const [faults, reason] of [
      [{ rate429: 1, retryAfterSec: 30 }, "the server's rate limit was reached (HTTP 429 Too many requests)"],
      [{ rate503: 1 }, 'the server is unavailable for now (HTTP 503 Service Unavailable. Please try again later)'],
    ] as const) {
      await control(sb.url, 'faults', faults);
      const { e, r } = await batchOf(1);
      e.start();
      await waitUntil(() => e.job(r.jobIds[0]).error, { what: 'the refusal recorded' });
      expect(e.job(r.jobIds[0])).toMatchObject({
        state: 'queued',
        error: `Waiting: ${reason}. It is sent again by itself; nothing was charged.`,
      });
      await e.close();
      await control(sb.url, 'reset', {});
    }
  });

  it('a wait for the server is one wait, from the first refused create until one gets through, however many retries it takes', async () => {
    // Every create a 503: the client sends it again for a few seconds, then the queue waits and
    // sends it again; the wait of rateLimitedUntil is over during the client's own retries.
    await control(sb.url, 'faults', { rate503: 1 });
    const { e, r } = await batchOf(1);
    const id = r.jobIds[0];
    const said: (string | null)[] = [null];
    let refused = false;
    e.start();
    // Each look notes the wait said, as the Queue's status would show it.
    await waitUntil(
      async () => {
        const st = e.status();
        if (st.serviceWait !== said.at(-1)) said.push(st.serviceWait);
        if (!refused && e.job(id).attempts >= 2 && e.job(id).state === 'queued' && e.job(id).error) {
          refused = true;
          await control(sb.url, 'faults', { rate503: 0 });
        }
        return e.job(id).state === 'done';
      },
      { what: 'the job done', interval: 20 },
    );
    expect(said).toEqual([null, 'the server is unavailable for now', null]);
    // Sent three times (two refused): one wait said, where rateLimitedUntil lapsed at each retry.
    expect(e.job(id).attempts).toBeGreaterThanOrEqual(3);
  });

  it('503 bursts: retried with backoff until done, each task created once', async () => {
    await control(sb.url, 'faults', { rate503: 0.4 });
    const { e, r } = await batchOf(6);
    e.start();
    await settle(e, r.jobIds);
    expect(e.store.byIds(r.jobIds).map((j) => j.state)).toEqual(Array(6).fill('done'));
    expect(creates(await control(sb.url, 'stats'))).toBe(6);
  });

  it('connection resets: an ambiguous create goes to needs_attention, never re-sent automatically', async () => {
    await control(sb.url, 'faults', { resetRate: 0.3 });
    const { e, r, out } = await batchOf(10);
    e.start();
    await settle(e, r.jobIds);
    const jobs = e.store.byIds(r.jobIds);
    const attention = jobs.filter((j) => j.state === 'needs_attention');
    expect(jobs.every((j) => j.state === 'done' || j.state === 'needs_attention')).toBe(true);
    // What the Queue's job detail and `mediadesk jobs` show: the reset in words, not a bare code.
    for (const j of attention)
      expect(j.error).toMatch(
        /^The submission failed after it may have reached the server: the connection closed before an answer came \([A-Z_]+\)\. The task may have been created and charged\. Check recent creations, then Retry to submit again or Cancel\.$/,
      );
    // Each job sent its create at most once: done jobs created exactly one task each.
    expect(creates(await control(sb.url, 'stats'))).toBeLessThanOrEqual(10);
    expect(creates(await control(sb.url, 'stats'))).toBeGreaterThanOrEqual(
      jobs.filter((j) => j.state === 'done').length,
    );
    expect(noParts(out)).toBe(true);
    // The user's Retry is what submits again.
    await control(sb.url, 'faults', { resetRate: 0 });
    for (const j of attention) e.retryJob(j.id);
    await settle(e, r.jobIds);
    expect(e.store.byIds(r.jobIds).every((j) => j.state === 'done')).toBe(true);
  });

  it('500 on create is ambiguous too: needs_attention with the server message', async () => {
    await control(sb.url, 'faults', { rate500: 1 });
    const { e, r } = await batchOf(1);
    e.start();
    await settle(e, r.jobIds);
    expect(e.job(r.jobIds[0])).toMatchObject({ state: 'needs_attention' });
    expect(e.job(r.jobIds[0]).error).toBe(
      'The submission failed after it may have reached the server: the server answered HTTP 500 Internal server error. The task may have been created and charged. Check recent creations, then Retry to submit again or Cancel.',
    );
  });

  it('a job that needs you, canceled, still says its task may have been created and charged (not "before submission")', async () => {
    await control(sb.url, 'faults', { rate500: 1 });
    const { e, r } = await batchOf(2);
    const [first, second] = r.jobIds;
    // One never sent is canceled before submission; one whose create went out without an answer is not.
    expect(e.cancelJob(second)).toMatchObject({ state: 'canceled', error: 'Canceled before submission.' });
    e.start();
    await waitUntil(() => e.job(first).state === 'needs_attention', { what: 'the first job needing attention' });
    expect(e.cancelJob(first)).toMatchObject({
      state: 'canceled',
      error:
        'Canceled; its submission may have reached the server, so the task may have been created and charged. Check recent creations before you retry it.',
    });

    // The batch's Retry failed sends the one never sent, and puts the other back where the user is
    // asked: it is never sent again unasked. Its own Retry (may be charged again) then sends it.
    await control(sb.url, 'faults', { rate500: 0 });
    const sent = creates(await control(sb.url, 'stats'));
    e.retryBatch(r.batch!.id, ['failed', 'canceled']);
    expect(e.job(first)).toMatchObject({ state: 'needs_attention', error: ATTENTION.canceledMaybeSent });
    await settle(e, [second]);
    expect(e.job(second).state).toBe('done');
    expect(e.job(first).state).toBe('needs_attention');
    expect(creates(await control(sb.url, 'stats'))).toBe(sent + 1);
    expect(e.retryJob(first).state).toBe('queued');
    await settle(e, [first]);
    expect(e.job(first).state).toBe('done');
    expect(creates(await control(sb.url, 'stats'))).toBe(sent + 2);
  });

  it('truncated downloads never leave a partial output; Retry downloads again without a new task', async () => {
    await control(sb.url, 'faults', { truncateDownloads: true });
    const { e, r, out } = await batchOf(2, { downloadAttempts: 2 });
    e.start();
    await settle(e, r.jobIds);
    const failed = e.store.byIds(r.jobIds);
    expect(failed.map((j) => j.state)).toEqual(['failed', 'failed']);
    // Said once, in words: not "Download failed: download failed after 2 attempts: download failed: socket hang up".
    expect(failed[0].error).toBe(
      'Download failed: the connection closed before an answer came (ECONNRESET); tried 2 times. The task is paid; Retry downloads it again without a new charge.',
    );
    expect(existsSync(out) ? readdirSync(out).filter((f) => !f.endsWith('.part')) : []).toEqual([]);
    await control(sb.url, 'faults', { truncateDownloads: false });
    for (const id of r.jobIds) e.retryJob(id);
    await settle(e, r.jobIds);
    expect(e.store.byIds(r.jobIds).map((j) => j.state)).toEqual(['done', 'done']);
    expect(creates(await control(sb.url, 'stats'))).toBe(2);
    expect(noParts(out)).toBe(true);
    for (const f of readdirSync(out)) expect(readFileSync(join(out, f)).subarray(1, 4).toString()).toBe('PNG');
  });

  it('expired result URLs: the task is re-read; a link that stays expired past the wait fails clearly and Retry recovers', async () => {
    await control(sb.url, 'faults', { expireResultUrls: true });
    const { e, r, out } = await batchOf(1, { expiredPatienceMs: 1500 });
    e.start();
    await settle(e, r.jobIds);
    expect(e.job(r.jobIds[0]).state).toBe('failed');
    expect(e.job(r.jobIds[0]).error).toMatch(
      /^Download failed: the result link has expired \(HTTP 410\) and the server gave no fresh one before \d{4}-\d\d-\d\dT[\d:.]+Z\. The task is paid; Retry downloads it again without a new charge\.$/,
    );
    const stats = await control(sb.url, 'stats');
    expect(
      Object.entries(stats.requests as Record<string, number>).some(([k, n]) => k.includes('{task-id}') && n > 0),
    ).toBe(true);
    await control(sb.url, 'faults', { expireResultUrls: false });
    e.retryJob(r.jobIds[0]);
    await settle(e, r.jobIds);
    expect(e.job(r.jobIds[0]).state).toBe('done');
    expect(creates(await control(sb.url, 'stats'))).toBe(1);
    expect(noParts(out)).toBe(true);
  });

  it('a window of expired result URLs: paid results are waited for, not given up; every job ends done without a Retry', async () => {
    await control(sb.url, 'faults', { expireResultUrls: true });
    const { e, r, out } = await batchOf(4, { downloadAttempts: 2 });
    e.start();
    // Every task completes and meets expired links, each fetched more often than its 2 download tries.
    await until(async () => e.store.byIds(r.jobIds).every((j) => j.state === 'downloading'), 20_000);
    const fetches = async (taskId: string) =>
      ((await control(sb.url, 'requests')).requests as string[]).filter((l) => l.startsWith(`GET /results/${taskId}/`))
        .length;
    await until(async () => {
      for (const j of e.store.byIds(r.jobIds)) if ((await fetches(j.taskId!)) <= 2) return false;
      return true;
    }, 20_000);
    expect(e.store.byIds(r.jobIds).map((j) => j.state)).toEqual([
      'downloading',
      'downloading',
      'downloading',
      'downloading',
    ]);
    await control(sb.url, 'faults', { expireResultUrls: false });
    await settle(e, r.jobIds);
    expect(e.store.byIds(r.jobIds).map((j) => j.state)).toEqual(['done', 'done', 'done', 'done']);
    expect(creates(await control(sb.url, 'stats'))).toBe(4);
    expect(noParts(out)).toBe(true);
  });

  it('a create the server refuses (a wrong key) fails saying nothing was paid and what to fix', async () => {
    const { e, r } = await batchOf(1, { apiKey: 'not-a-key' });
    e.start();
    await settle(e, r.jobIds);
    expect(e.job(r.jobIds[0])).toMatchObject({
      state: 'failed',
      error:
        'The server refused the task (HTTP 401 Invalid API key); nothing was paid. Check the API key (Settings, or `mediadesk key`), then Retry.',
    });
  });

  it('FAILED tasks become failed jobs; Retry submits a new task', async () => {
    await control(sb.url, 'faults', { failureRate: 1 });
    const { e, r } = await batchOf(2);
    e.start();
    await settle(e, r.jobIds);
    expect(e.store.byIds(r.jobIds).map((j) => j.state)).toEqual(['failed', 'failed']);
    expect(e.job(r.jobIds[0]).error).toBe(
      'The task failed on the server (nothing to download). Retry submits it again (a new task).',
    );
    await control(sb.url, 'faults', { failureRate: 0 });
    e.retryJob(r.jobIds[0]);
    await settle(e, r.jobIds);
    expect(e.job(r.jobIds[0]).state).toBe('done');
    expect(creates(await control(sb.url, 'stats'))).toBe(3);
  });

  it("retrying a batch's failed jobs leaves the ones that need the user (maybe paid) alone unless they are named", async () => {
    await control(sb.url, 'faults', { rate500: 1 });
    const { e, r } = await batchOf(2);
    e.start();
    await settle(e, r.jobIds);
    expect(r.jobIds.map((id) => e.job(id).state)).toEqual(['needs_attention', 'needs_attention']);
    await control(sb.url, 'faults', { rate500: 0 });
    e.cancelJob(r.jobIds[1]);
    const before = creates(await control(sb.url, 'stats'));
    // Canceled, one that may have been paid for is still not sent by Retry failed: it is back to needing the user.
    e.retryBatch(r.batch!.id, ['failed', 'canceled']);
    await settle(e, r.jobIds);
    expect(r.jobIds.map((id) => e.job(id).state)).toEqual(['needs_attention', 'needs_attention']);
    expect(e.job(r.jobIds[1]).error).toBe(ATTENTION.canceledMaybeSent);
    expect(creates(await control(sb.url, 'stats')) - before).toBe(0);
    // Named, they are sent again (the user chose to, knowing they may be charged twice).
    e.retryBatch(r.batch!.id, ['needs_attention']);
    await settle(e, r.jobIds);
    expect(r.jobIds.map((id) => e.job(id).state)).toEqual(['done', 'done']);
    expect(creates(await control(sb.url, 'stats')) - before).toBe(2);
  });

  it('a job left in submitting by a crash goes to needs_attention at boot, not to the server', async () => {
    const { e, r } = await batchOf(1);
    e.store.move(r.jobIds[0], 'queued', 'submitting', { attemptId: 'crashed' });
    e.start();
    await settle(e, r.jobIds);
    expect(e.job(r.jobIds[0])).toMatchObject({ state: 'needs_attention', error: ATTENTION.interruptedSubmit });
    expect(creates(await control(sb.url, 'stats'))).toBe(0);
  });
});
