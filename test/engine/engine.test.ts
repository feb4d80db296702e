import { describe, expect, it, vi } from 'vitest';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { until } from '../wait.ts';
import { control, creates, engineFor, engineSuite, makeImages, settle } from './helpers.ts';
import { LIST_WINDOW_FAULT } from '../../electron/sandbox/tool-routes.ts';
import { SETTLED_STATES } from '../../shared/contract/jobs.ts';

const sb = engineSuite('eng', 150);

function setup() {
  const dir = sb.folder();
  return { dir, home: join(dir, 'home'), input: join(dir, 'in'), out: join(dir, 'out') };
}
const open = (home: string, o?: Parameters<typeof engineFor>[2]) => sb.engine(home, o);
const files = (dir: string): string[] =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((d) => d.isFile())
        .map((d) => relative(dir, join(d.parentPath, d.name)))
        .sort()
    : [];

describe('folder batches', () => {
  it('runs a folder recursively, ignores system files, mirrors subfolders, and skips done inputs next time', async () => {
    const { home, input, out } = setup();
    await makeImages(input, ['a.png', 'b.png', 'nested/deep/c.png']);
    writeFileSync(join(input, '.DS_Store'), 'x');
    writeFileSync(join(input, 'Thumbs.db'), 'x');
    writeFileSync(join(input, '.hidden.png'), 'x');
    writeFileSync(join(input, 'notes.txt'), 'not an image');
    writeFileSync(join(input, 'broken.png'), 'not really a png');
    const e = open(home);
    const r = await e.startBatch({
      tool: 'upscaler-precision',
      inputs: [input],
      params: { scale_factor: 2 },
      outDir: out,
    });
    expect(r.queued).toBe(3);
    expect(r.rejected.map((x) => relative(input, x.path)).sort()).toEqual(['broken.png', 'notes.txt']);
    expect(r.rejected.find((x) => x.path.endsWith('broken.png'))!.reason).toMatch(/not a readable image/);
    e.start();
    await settle(e, r.jobIds);
    expect(e.store.byIds(r.jobIds).map((j) => j.state)).toEqual(['done', 'done', 'done']);
    expect(files(out)).toEqual([
      'a_upscaler-precision.png',
      'b_upscaler-precision.png',
      'nested/deep/c_upscaler-precision.png',
    ]);
    expect(readFileSync(join(out, 'a_upscaler-precision.png')).subarray(1, 4).toString()).toBe('PNG');

    const again = await e.startBatch({
      tool: 'upscaler-precision',
      inputs: [input],
      params: { scale_factor: 2 },
      outDir: out,
    });
    expect(again.queued).toBe(0);
    expect(again.skipped).toHaveLength(3);
    // Nothing to run adds no empty batch to the queue.
    expect(again.batch).toBeNull();
    expect(e.store.batches(50, 0).map((b) => b.id)).toEqual([r.batch!.id]);
    expect(creates(await control(sb.url, 'stats'))).toBe(3);
  });

  it('inputs with long names (legal, 250 bytes) get results a file system can hold, one per input, skipped next time', async () => {
    const { home, input, out } = setup();
    const start = 'Sommer Kampagne – Café Ølfabrik 日本語 ';
    // 250 bytes with `A.png`: legal, but `…_upscaler-precision.png.part` beside it would not be.
    const long = start + 'x'.repeat(250 - Buffer.byteLength(start) - 'A.png'.length);
    const names = [`${long}A.png`, `${long}B.png`];
    for (const n of names) expect(Buffer.byteLength(n)).toBe(250);
    await makeImages(input, names);
    const e = open(home);
    const r = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
    expect(r.queued).toBe(2);
    e.start();
    await settle(e, r.jobIds);
    expect(e.store.byIds(r.jobIds).map((j) => [j.state, j.error])).toEqual([
      ['done', null],
      ['done', null],
    ]);
    const made = files(out);
    // Two results, not one name twice; each starts like its input and fits with room for `.part`.
    expect(made).toHaveLength(2);
    for (const f of made) {
      expect(f.startsWith(`${start}xxxx`)).toBe(true);
      expect(Buffer.byteLength(`${f}.part`)).toBeLessThanOrEqual(255);
    }
    const again = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
    expect(again.skipped.map((x) => x.path).sort()).toEqual(names.map((n) => join(input, n)).sort());
  });

  it('an output folder that cannot take the results is refused before anything is queued or paid', async () => {
    const { dir, home, input } = setup();
    await makeImages(input, ['a.png']);
    const e = open(home);
    const file = join(dir, 'a-file');
    writeFileSync(file, 'x');
    await expect(e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: file })).rejects.toMatchObject({
      code: 'invalid',
      message: `output folder: ${file} is a file, not a folder`,
    });
    await expect(
      e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: join(file, 'results') }),
    ).rejects.toMatchObject({
      code: 'invalid',
      message: `output folder: ${join(file, 'results')} cannot be created: ${file} is a file`,
    });
    await expect(
      e.startBatch({ tool: 'context-t2i', params: { prompt: 'a fox' }, outDir: file }),
    ).rejects.toMatchObject({ code: 'invalid' });
    await expect(
      e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: 'results' }),
    ).rejects.toMatchObject({ code: 'invalid', message: 'output folder: results is not a full path' });
    expect(e.store.batches(50, 0)).toEqual([]);
    expect(creates(await control(sb.url, 'stats'))).toBe(0);
  });

  it('an empty folder, or one with nothing the tool takes, queues nothing and says why', async () => {
    const { dir, home, input, out } = setup();
    const e = open(home);
    const empty = join(dir, 'empty');
    mkdirSync(empty, { recursive: true });
    await expect(e.startBatch({ tool: 'upscaler-precision', inputs: [empty], outDir: out })).rejects.toMatchObject({
      code: 'invalid',
      message: `no files to process: ${empty} is an empty folder`,
    });
    mkdirSync(input, { recursive: true });
    writeFileSync(join(input, 'notes.txt'), 'not an image');
    const r = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
    expect(r).toMatchObject({
      batch: null,
      queued: 0,
      jobIds: [],
      rejected: [{ path: join(input, 'notes.txt'), reason: 'this tool does not take .txt files' }],
    });
    expect(e.store.batches(50, 0)).toEqual([]);
    expect(creates(await control(sb.url, 'stats'))).toBe(0);
  });

  it('a download whose output folder became a file fails with what is in the way', async () => {
    const { home, input, out } = setup();
    await makeImages(input, ['a.png']);
    const e = open(home);
    const r = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
    writeFileSync(out, 'the folder was replaced by a file');
    e.start();
    await settle(e, r.jobIds);
    const [job] = e.store.byIds(r.jobIds);
    expect(job.state).toBe('failed');
    expect(job.error).toContain(`${out} is a file, not a folder`);
  });

  it('rejects bad parameters with the field and reason before anything is paid', async () => {
    const { home, input, out } = setup();
    await makeImages(input, ['a.png']);
    const e = open(home);
    await expect(
      e.startBatch({ tool: 'upscaler-precision', inputs: [input], params: { scale_factor: 40 }, outDir: out }),
    ).rejects.toMatchObject({ code: 'invalid', invalid: [{ field: 'scale_factor', reason: 'must be at most 16' }] });
    await expect(e.startBatch({ tool: 'no-such-tool', inputs: [input], outDir: out })).rejects.toThrow(
      /unknown tool "no-such-tool"/,
    );
    await expect(
      e.startBatch({ tool: 'image50-edit', inputs: [input], params: { prompt: 'x' }, outDir: out }),
    ).resolves.toMatchObject({ queued: 0, rejected: [{ reason: 'is 32x32; this tool needs at least 256x256' }] });
    expect(creates(await control(sb.url, 'stats'))).toBe(0);
  });

  it('an audio reference is checked by content, not by name, before anything is paid', async () => {
    const { home, input, out } = setup();
    await makeImages(input, ['a.png']);
    const e = open(home);
    const fake = join(input, 'voice.mp3');
    writeFileSync(fake, readFileSync(join(input, 'a.png')));
    const wav = join(input, 'voice.wav');
    const pcm = Buffer.alloc(44);
    pcm.write('RIFF', 0);
    pcm.writeUInt32LE(36, 4);
    pcm.write('WAVEfmt ', 8);
    writeFileSync(wav, pcm);
    const params = (ref: string) => ({ prompt: 'a jingle over the logo, voice from @Audio1', reference_audios: [ref] });
    await expect(
      e.startBatch({ tool: 'video-25', inputs: [], params: params(fake), outDir: out }),
    ).rejects.toMatchObject({
      code: 'invalid',
      invalid: [{ field: 'reference_audios', reason: `${fake}: not an MP3 or WAV file (its content is an image)` }],
    });
    expect(creates(await control(sb.url, 'stats'))).toBe(0);
    await expect(
      e.startBatch({ tool: 'video-25', inputs: [], params: params(wav), outDir: out }),
    ).resolves.toMatchObject({ queued: 1 });
  });

  it('never overwrites a user file: collisions get a suffix', async () => {
    const { home, input, out } = setup();
    await makeImages(input, ['a.png']);
    const e = open(home, { settings: { namingTemplate: '{name}.{ext}' } });
    // The user's file appears after queueing (before queueing, the input would count as done).
    const r = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'a.png'), 'user file');
    e.start();
    await settle(e, r.jobIds);
    expect(readFileSync(join(out, 'a.png'), 'utf8')).toBe('user file');
    expect(e.store.get(r.jobIds[0])!.outputs).toEqual([join(out, 'a-2.png')]);
    expect(files(out)).toEqual(['a-2.png', 'a.png']);
  });

  it('saves image-to-prompt text as a .txt result and keeps it in the job', async () => {
    const { home, input, out } = setup();
    await makeImages(input, ['p.png']);
    const e = open(home);
    const r = await e.startBatch({ tool: 'image-to-prompt', inputs: [join(input, 'p.png')], outDir: out });
    e.start();
    await settle(e, r.jobIds);
    const job = e.job(r.jobIds[0]);
    expect(job.state).toBe('done');
    expect(job.text!.length).toBeGreaterThan(10);
    expect(readFileSync(join(out, 'p_image-to-prompt.txt'), 'utf8').trim()).toBe(job.text);
  });

  it('uploads local files for URL-only fields (change-camera) on the Sandbox', async () => {
    const { home, input, out } = setup();
    await makeImages(input, ['cam.png']);
    const e = open(home);
    const r = await e.startBatch({
      tool: 'change-camera',
      inputs: [input],
      params: { horizontal_angle: 90 },
      outDir: out,
    });
    e.start();
    await settle(e, r.jobIds);
    expect(e.job(r.jobIds[0])).toMatchObject({ state: 'done', outputs: [join(out, 'cam_change-camera.png')] });
    // Through the service's upload flow: one upload URL asked for, one PUT.
    const { requests } = await control(sb.url, 'stats');
    expect([requests['POST /v1/ai/uploads/request-url'], requests['PUT /storage/uploads/:fileId']]).toEqual([1, 1]);
  });

  it('runs a prompt-only tool as one job', async () => {
    const { home, out } = setup();
    const e = open(home);
    const r = await e.startBatch({ tool: 'context-t2i', params: { prompt: 'a lighthouse at dusk' }, outDir: out });
    e.start();
    await settle(e, r.jobIds);
    expect(e.job(r.jobIds[0]).state).toBe('done');
    expect(files(out)).toHaveLength(1);
    // Named after its prompt (the one naming rule of results), not after the job's id.
    expect(basename(e.job(r.jobIds[0]).outputs[0])).toMatch(/^a-lighthouse-at-dusk_/);
  });
});

describe('queue control', () => {
  it('never has more jobs in flight than the concurrency allows, counting those still reading their input', async () => {
    const { home, input, out } = setup();
    await makeImages(
      input,
      Array.from({ length: 24 }, (_, i) => `i${i}.png`),
    );
    const e = open(home, { concurrency: 3 });
    const r = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
    let most = 0;
    const watch = setInterval(() => {
      const c = e.store.counts();
      most = Math.max(most, c.submitting + c.running + c.downloading);
    }, 1);
    e.start();
    await settle(e, r.jobIds);
    clearInterval(watch);
    expect(e.store.byIds(r.jobIds).every((j) => j.state === 'done')).toBe(true);
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(3);
  });

  it('pauses and resumes the whole queue, cancels and retries jobs', async () => {
    const { home, input, out } = setup();
    await makeImages(input, ['a.png', 'b.png', 'c.png']);
    const e = open(home);
    e.pause();
    const r = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
    e.start();
    e.cancelJob(r.jobIds[0]);
    expect(e.status()).toMatchObject({ paused: true });
    // Nothing is submitted while paused: the batch cannot finish; resuming lets it.
    expect(e.store.batch(r.batch!.id)!.counts.queued).toBe(2);
    e.resume();
    await settle(e, r.jobIds);
    expect(e.store.batch(r.batch!.id)!.counts).toMatchObject({ done: 2, canceled: 1 });
    expect(creates(await control(sb.url, 'stats'))).toBe(2);
    e.retryJob(r.jobIds[0]);
    await settle(e, r.jobIds);
    expect(e.store.batch(r.batch!.id)).toMatchObject({ finished: true, counts: { done: 3 } });
    expect(() => e.retryJob(r.jobIds[0])).toThrow(/only failed, canceled or needs-attention/);
  });

  it("cancelling a batch cancels its unfinished jobs and leaves failed ones failed, with the server's reason", async () => {
    const { home, input, out } = setup();
    await makeImages(input, ['a.png', 'b.png']);
    const e = open(home);
    await control(sb.url, 'faults', { failureRate: 1 });
    const failing = await e.startBatch({ tool: 'upscaler-precision', inputs: [join(input, 'a.png')], outDir: out });
    e.start();
    await settle(e, failing.jobIds);
    const failed = e.job(failing.jobIds[0]);
    expect(failed.state).toBe('failed');
    e.pause();
    const waiting = await e.startBatch({ tool: 'upscaler-precision', inputs: [join(input, 'b.png')], outDir: out });
    e.cancelBatch(failing.batch!.id);
    e.cancelBatch(waiting.batch!.id);
    expect(e.job(failing.jobIds[0])).toMatchObject({ state: 'failed', error: failed.error });
    expect(e.job(waiting.jobIds[0]).state).toBe('canceled');
  });

  it('emits typed, throttled progress events with batch progress and changed rows', async () => {
    const { home, input, out } = setup();
    await makeImages(input, ['a.png', 'b.png']);
    const e = open(home);
    const events: import('../../shared/contract/jobs.ts').JobsChanged[] = [];
    e.on('jobs.changed', (ev) => events.push(ev));
    const r = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
    e.start();
    await settle(e, r.jobIds);
    // The throttled event that tells the batch finished.
    await vi.waitFor(() => expect(events.at(-1)?.batches.find((b) => b.id === r.batch!.id)?.finished).toBe(true));
    const { jobsChangedSchema } = await import('../../shared/contract/jobs.ts');
    for (const ev of events) jobsChangedSchema.parse(ev);
    const last = events.at(-1)!;
    expect(last.batches.find((b) => b.id === r.batch!.id)).toMatchObject({ finished: true, progress: 1 });
    expect(new Set(events.flatMap((ev) => ev.jobs.filter((j) => j.state === 'done').map((j) => j.id)))).toEqual(
      new Set(r.jobIds),
    );
  });
});

describe('polling cost', () => {
  it('polls a tool through its list endpoint: one request per tick, not per task', async () => {
    const { home, input, out } = setup();
    await control(sb.url, 'faults', { taskDurationMs: 1500 });
    await makeImages(
      input,
      Array.from({ length: 40 }, (_, i) => `i${i}.png`),
    );
    const e = open(home, { concurrency: 40 });
    const r = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
    e.start();
    await settle(e, r.jobIds);
    const stats = await control(sb.url, 'stats');
    const byId = Object.entries(stats.requests as Record<string, number>)
      .filter(([k]) => k.startsWith('GET') && k.includes('{task-id}'))
      .reduce((a, [, n]) => a + n, 0);
    const lists = Object.entries(stats.requests as Record<string, number>)
      .filter(([k]) => k.startsWith('GET /v1/ai/image-upscaler-precision-v2') && !k.includes('{'))
      .reduce((a, [, n]) => a + n, 0);
    expect(creates(stats)).toBe(40);
    expect(byId).toBe(0);
    // 40 tasks of 1.5 s polled every 200 ms at most: per-task polling would need hundreds.
    expect(lists).toBeLessThan(40);
  });

  it('more tasks in flight than a windowed list shows (the newest only): each one completes, asked about by id, and the list is sent no paging', async () => {
    const { home, input, out } = setup();
    const n = LIST_WINDOW_FAULT + 70;
    // Long enough that all are under way together; ended at once below, when the test has seen that.
    await control(sb.url, 'faults', { taskDurationMs: 600_000, listWindow: LIST_WINDOW_FAULT });
    await makeImages(
      input,
      Array.from({ length: n }, (_, i) => `i${i}.png`),
    );
    const e = open(home, { concurrency: n });
    const r = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
    expect(r.queued).toBe(n);
    e.start();
    const states = () => e.store.byIds(r.jobIds).map((j) => j.state);
    const lists = async () =>
      Object.entries((await control(sb.url, 'stats')).requests as Record<string, number>)
        .filter(([k]) => k === 'GET /v1/ai/image-upscaler-precision-v2')
        .reduce((a, [, m]) => a + m, 0);
    await until(() => states().every((s) => s === 'running'), { what: 'every job running', timeout: 30_000 });
    expect(states().filter((s) => s === 'running')).toHaveLength(n);
    // A few rounds of polling with every task in flight, then every task ends.
    const before = await lists();
    await until(async () => (await lists()) >= before + 3, { what: 'three rounds of polling', timeout: 10_000 });
    await control(sb.url, 'tasks/finish', {});
    // Bounded: a task the list never shows and no one asks about by id would wait forever.
    await until(() => states().every((s) => SETTLED_STATES.includes(s)), {
      what: 'every job settled',
      timeout: 30_000,
    });
    expect(states().filter((s) => s !== 'done')).toEqual([]);
    expect(files(out)).toHaveLength(n);
    const stats = await control(sb.url, 'stats');
    expect(creates(stats)).toBe(n);
    // The list endpoints declare no query parameters: not one was sent.
    expect(stats.listParams).toEqual({});
    const byId = Object.entries(stats.requests as Record<string, number>)
      .filter(([k]) => k.startsWith('GET') && k.includes('{task-id}'))
      .reduce((a, [, m]) => a + m, 0);
    // At least once each, the oldest were asked about by id: the list never showed them.
    expect(byId).toBeGreaterThanOrEqual(n - LIST_WINDOW_FAULT);
  });
});
