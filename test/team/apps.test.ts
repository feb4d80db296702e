import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DeskError } from '../../shared/contract/define.ts';
import { openDatabase } from '../../electron/core/db/open.ts';
import { QUEUE_MIGRATIONS } from '../../electron/core/queue/migrations.ts';
import { AppRunStore } from '../../electron/core/apps/store.ts';
import { AUDIO_ASSET, VIDEO_ASSET } from '../../electron/sandbox/render.ts';
import { cleanup, control, rig, settled, tmp, type Rig } from './helpers.ts';

/** Files read whole through fs/promises (the real one does the reading): apps.check must not read a named image whole. */
const wholeReads = vi.hoisted(() => [] as string[]);
vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...fs,
    readFile: (...args: Parameters<typeof fs.readFile>) => {
      wholeReads.push(resolve(String(args[0])));
      return fs.readFile(...args);
    },
  };
});

let r: Rig;
let dir: string;
let image: string;

beforeAll(async () => {
  r = await rig();
  dir = tmp('apps');
  image = join(dir, 'product.png');
  await sharp({ create: { width: 48, height: 48, channels: 3, background: { r: 200, g: 40, b: 90 } } })
    .png()
    .toFile(image);
});
afterAll(async () => {
  await r.close();
  cleanup(r.home);
  cleanup(dir);
});

describe('workflow apps over the Sandbox', () => {
  it('lists apps and reads a definition with every input type and its cost', async () => {
    const apps = await r.services.apps.list();
    expect(apps.map((a) => a.id)).toContain('pS7kQ2xa');
    const def = await r.services.apps.get('pS7kQ2xa');
    expect(def.cost).toBe(12);
    expect(new Set(def.inputs.map((i) => i.type))).toEqual(new Set(['creation', 'text', 'number', 'select']));
    expect(def.inputs.find((i) => i.type === 'select')!.options).toEqual(['studio', 'outdoor', 'minimal']);
    // Bounds from each input's `config`; the service says no output kind or description.
    expect(def.inputs.map(({ id, min, max, maxLength }) => ({ id, min, max, maxLength }))).toEqual([
      { id: 'product_image' },
      { id: 'scene', maxLength: 2000 },
      { id: 'variations', min: 1, max: 4 },
      { id: 'style' },
    ]);
    expect([def.output, def.description]).toEqual([null, '']);
  });

  it('runs an app with every input type (creation from a dropped file) to its downloaded results', async () => {
    const run = await r.services.apps.run({
      appId: 'pS7kQ2xa',
      confirmedCost: 12,
      inputs: { product_image: image, scene: 'a marble table at dawn', variations: 2, style: 'outdoor' },
    });
    expect(run.state).toBe('queued');
    const done = await settled(r, run.id);
    expect(done.state).toBe('done');
    expect(done.runStatus).toBe('completed');
    expect(done.outputs).toHaveLength(2);
    for (const f of done.outputs) expect(statSync(f).size).toBeGreaterThan(0);
    expect(done.expiresAt! - Date.now()).toBeGreaterThan(11 * 3_600_000);
    // The dropped file went through the upload flow, as the asset URL the input takes; no Sandbox-only path was asked.
    expect(String(done.inputs.product_image)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/uploads\/upl_[0-9a-f]+\?expires=/);
    const { requests } = await control(r.sandbox.url, 'requests');
    expect(requests.filter((q: string) => q.includes('__sandbox'))).toEqual([]);
    expect(requests).toEqual(
      expect.arrayContaining([
        'POST /v1/ai/uploads/request-url',
        expect.stringMatching(/^PUT \/storage\/uploads\/upl_/),
      ]),
    );
    expect((await control(r.sandbox.url, 'stats')).uploads).toMatchObject({ stored: 1, refused: {} });
  });

  it('a spell of expired result links is waited out: the paid run ends done without a Retry', async () => {
    await control(r.sandbox.url, 'faults', { expireResultUrls: true });
    try {
      const run = await r.services.apps.run({
        appId: 'jM4nX8sc',
        confirmedCost: 8,
        inputs: { brief: 'a short bright jingle' },
        outDir: join(dir, 'expired-spell'),
      });
      await vi.waitFor(
        () => {
          const row = r.services.apps.store.get(run.id)!;
          expect(row.state).not.toBe('failed');
          expect(row.state).toBe('downloading');
        },
        { timeout: 60_000, interval: 25 },
      );
      // Several renewals that give the same lapsed link (the Sandbox saw them): still downloading, not failed.
      const fetches = async () =>
        ((await control(r.sandbox.url, 'requests')).requests as string[]).filter((l) =>
          /^GET \/(results|blobs)\//.test(l),
        ).length;
      const before = await fetches();
      await vi.waitFor(async () => expect(await fetches()).toBeGreaterThanOrEqual(before + 3), { timeout: 20_000 });
      expect(r.services.apps.store.get(run.id)!.state).toBe('downloading');
      await control(r.sandbox.url, 'faults', { expireResultUrls: false });
      const done = await settled(r, run.id);
      expect([done.state, done.outputs.length]).toEqual(['done', 1]);
    } finally {
      await control(r.sandbox.url, 'faults', { expireResultUrls: false });
    }
  });

  it("a completed run's results, read from data.result, are downloaded by the runner: real files, each with the extension of its result array", async () => {
    // The service's definitions say no output kind: what a result is comes from the array it is in.
    expect((await r.services.apps.get('tV3mW9rb')).output).toBeNull();
    const out = join(dir, 'official-results');
    const runs = [
      await r.services.apps.run({
        appId: 'pS7kQ2xa',
        confirmedCost: 12,
        inputs: { product_image: image, scene: 'a studio shelf', variations: 2 },
        outDir: out,
      }),
      await r.services.apps.run({
        appId: 'tV3mW9rb',
        confirmedCost: 40,
        inputs: { key_visual: image, tagline: 'Now open' },
        outDir: out,
      }),
      await r.services.apps.run({
        appId: 'jM4nX8sc',
        confirmedCost: 8,
        inputs: { brief: 'a bright jingle' },
        outDir: out,
      }),
    ];
    const [shot, teaser, jingle] = await Promise.all(runs.map((x) => settled(r, x.id)));
    expect([shot.state, teaser.state, jingle.state], [shot.error, teaser.error, jingle.error].join(' | ')).toEqual([
      'done',
      'done',
      'done',
    ]);
    expect(shot.results!.map((x) => x.kind)).toEqual(['image', 'image']);
    expect(teaser.results).toEqual([{ url: expect.stringMatching(/\.mp4$/), kind: 'video' }]);
    expect(jingle.results).toEqual([{ url: expect.stringMatching(/\.mp3$/), kind: 'audio' }]);
    expect(shot.outputs).toHaveLength(2);
    for (const f of shot.outputs) {
      expect(f).toMatch(/^.*\/product_product-shot-studio(_2)?\.png$/);
      expect(
        readFileSync(f)
          .subarray(0, 8)
          .equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
      ).toBe(true);
      expect(await sharp(f).metadata()).toMatchObject({ format: 'png', width: 1024, height: 1024 });
    }
    expect(teaser.outputs).toEqual([expect.stringMatching(/\/product_teaser-video\.mp4$/)]);
    expect(readFileSync(teaser.outputs[0]).equals(readFileSync(VIDEO_ASSET))).toBe(true);
    // Named by the one naming rule of results: after the input image, or the brief's first words.
    expect(jingle.outputs).toEqual([expect.stringMatching(/\/a-bright-jingle_jingle-maker\.mp3$/)]);
    expect(readFileSync(jingle.outputs[0]).equals(readFileSync(AUDIO_ASSET))).toBe(true);

    // The same run as the server gives it: its results are under data.result, and a reader of one
    // list beside the status (`results`, `generated` or `outputs`, as before) finds none.
    const body = await r.client.get<{ data: Record<string, any> }>(`/v1/ai/apps/runs/${teaser.runId}`);
    expect(body.data).toMatchObject({
      run_id: teaser.runId,
      status: 'completed',
      result: { images: [], videos: [expect.objectContaining({ url: teaser.results![0].url })], audios: [] },
    });
    const oldStyle = (b: any) => {
      const run = b.data ?? b;
      return run.results ?? run.generated ?? run.outputs ?? [];
    };
    expect(oldStyle(body)).toEqual([]);
  });

  it('a select value the server refuses answers 422: the run fails before it exists, naming the input, and nothing is created or charged', async () => {
    // As when the app's options changed on the server after its form was read: the value goes as it was queued.
    const creates = async () => (await control(r.sandbox.url, 'stats')).creates['app:jM4nX8sc']?.['sandbox-owner'] ?? 0;
    const before = await creates();
    const row = r.services.apps.store.insert({
      id: randomUUID(),
      appId: 'jM4nX8sc',
      appName: 'Jingle maker',
      outputKind: 'audio',
      cost: 8,
      inputs: { brief: 'x', mood: 'gloomy' },
      outDir: join(dir, 'refused'),
      backend: `live ${r.sandbox.url}`,
    });
    r.services.apps.runner.tick();
    const failed = await settled(r, row.id);
    expect([failed.state, failed.runId, failed.results]).toEqual(['failed', null, null]);
    expect(failed.invalid).toEqual([{ field: 'inputs.mood', reason: 'must be one of upbeat, calm, epic' }]);
    expect(failed.error).toBe(
      "422 Your request parameters didn't validate: inputs.mood must be one of upbeat, calm, epic",
    );
    // Nothing was paid: a retry sends it anew, with its cost confirmed.
    expect(r.services.apps.one(row.id).retry).toBe('submit');
    expect(await creates()).toBe(before);
    expect(existsSync(join(dir, 'refused'))).toBe(false);
  });

  it('takes a creation by URL and by creation id; video and audio apps download their kinds', async () => {
    // A finished tool task of this key is one of its recent creations.
    const task = await r.client.create<{ data: { task_id: string } }>('/v1/ai/text-to-image/flux-kontext-pro', {
      prompt: 'a lighthouse',
    });
    const page = await vi.waitFor(async () => {
      const listed = await r.services.creations.list({ page: 1, perPage: 10, thumbnails: false });
      expect(listed.items[0]?.id).toBe(task.data.task_id);
      return listed;
    });
    const byId = await r.services.apps.run({
      appId: 'tV3mW9rb',
      confirmedCost: 40,
      inputs: { key_visual: task.data.task_id, tagline: 'Now open', format: 'social_story_9_16', duration: 5 },
    });
    const byUrl = await r.services.apps.run({
      appId: 'pS7kQ2xa',
      confirmedCost: 12,
      inputs: { product_image: page.items[0].url!, scene: 'snow' },
    });
    const audio = await r.services.apps.run({
      appId: 'jM4nX8sc',
      confirmedCost: 8,
      inputs: { brief: 'coffee brand', mood: 'calm', length_seconds: 20 },
    });
    const [v, u, a] = await Promise.all([settled(r, byId.id), settled(r, byUrl.id), settled(r, audio.id)]);
    expect([v.state, u.state, a.state]).toEqual(['done', 'done', 'done']);
    expect(v.outputs[0]).toMatch(/\.mp4$/);
    expect(a.outputs[0]).toMatch(/\.(mp3|wav)$/);
  });

  it('checks inputs and the confirmed cost before anything is paid', async () => {
    const before = (await control(r.sandbox.url, 'stats')).creates;
    await expect(
      r.services.apps.run({
        appId: 'pS7kQ2xa',
        confirmedCost: 12,
        inputs: { scene: 'x', variations: 9, style: 'neon' },
      }),
    ).rejects.toMatchObject({ code: 'invalid' });
    const err = await r.services.apps
      .run({ appId: 'pS7kQ2xa', confirmedCost: 12, inputs: { scene: 'x', variations: 9, style: 'neon' } })
      .catch((e) => e as DeskError);
    expect(err.invalid!.map((p) => p.field).sort()).toEqual(['product_image', 'style', 'variations']);
    await expect(
      r.services.apps.run({ appId: 'pS7kQ2xa', confirmedCost: 5, inputs: { product_image: image, scene: 'x' } }),
    ).rejects.toMatchObject({ code: 'conflict' });
    expect((await control(r.sandbox.url, 'stats')).creates).toEqual(before);
  });

  it('apps.check answers the cost now and refuses a missing or non-image file, before any cost is asked and with nothing sent', async () => {
    const before = (await control(r.sandbox.url, 'stats')).creates;
    const missing = join(dir, 'gone.png');
    const err = await r.services.apps
      .check('pS7kQ2xa', { product_image: missing, scene: 'x' })
      .catch((e) => e as DeskError);
    expect(err).toMatchObject({
      code: 'invalid',
      invalid: [{ field: 'product_image', reason: 'names a file that does not exist' }],
    });
    const notes = join(dir, 'notes.txt');
    writeFileSync(notes, 'not an image');
    await expect(r.services.apps.check('pS7kQ2xa', { product_image: notes, scene: 'x' })).rejects.toMatchObject({
      invalid: [{ field: 'product_image', reason: 'is not an image file (PNG, JPEG or WebP)' }],
    });
    await control(r.sandbox.url, 'apps/pS7kQ2xa/cost', { cost: 15 });
    try {
      expect((await r.services.apps.check('pS7kQ2xa', { product_image: image, scene: 'x' })).cost).toBe(15);
    } finally {
      await control(r.sandbox.url, 'apps/pS7kQ2xa/cost', { cost: 12 });
    }
    expect((await control(r.sandbox.url, 'stats')).creates).toEqual(before);
  });

  it("apps.check refuses a missing file, a folder, a non-image and a file over 20 MB in the run's own words, reading no named file whole", async () => {
    const big = join(dir, 'huge.png');
    // A PNG by its first bytes, 20 MB and one byte long (sparse: nothing is written past the header).
    writeFileSync(big, readFileSync(image).subarray(0, 16));
    truncateSync(big, 20 * 1024 * 1024 + 1);
    const folder = join(dir, 'a-folder.png');
    mkdirSync(folder, { recursive: true });
    const notes = join(dir, 'notes.txt');
    writeFileSync(notes, 'not an image');
    const before = (await control(r.sandbox.url, 'stats')).creates;
    const reasons: string[] = [];
    for (const file of [join(dir, 'gone.png'), folder, notes, big]) {
      const inputs = { product_image: file, scene: 'x' };
      const checked = await r.services.apps.check('pS7kQ2xa', inputs).catch((e: unknown) => e as DeskError);
      const ran = await r.services.apps
        .run({ appId: 'pS7kQ2xa', confirmedCost: 12, inputs })
        .catch((e: unknown) => e as DeskError);
      expect(checked, file).toBeInstanceOf(DeskError);
      const words = (e: DeskError) => ({ code: e.code, message: e.message, invalid: e.invalid });
      expect(words(checked as DeskError), file).toEqual(words(ran as DeskError));
      reasons.push((checked as DeskError).invalid![0].reason);
    }
    expect(reasons).toEqual([
      'names a file that does not exist',
      'is a folder, not an image file (PNG, JPEG or WebP)',
      'is not an image file (PNG, JPEG or WebP)',
      'is larger than 20 MB',
    ]);
    expect((await control(r.sandbox.url, 'stats')).creates).toEqual(before);

    // An image is checked by its size and first bytes; the run reads it whole, to send it.
    wholeReads.length = 0;
    expect((await r.services.apps.check('pS7kQ2xa', { product_image: image, scene: 'x' })).cost).toBe(12);
    expect(wholeReads).not.toContain(image);
    await expect(
      r.services.apps.run({ appId: 'pS7kQ2xa', confirmedCost: 5, inputs: { product_image: image, scene: 'x' } }),
    ).rejects.toMatchObject({ code: 'conflict' });
    expect(wholeReads).toContain(image);
  });

  it("a failed run reports the server's error_message; retry submits anew only with the cost confirmed", async () => {
    await control(r.sandbox.url, 'faults', { failureRate: 1 });
    const run = await r.services.apps.run({ appId: 'jM4nX8sc', confirmedCost: 8, inputs: { brief: 'x' } });
    const failed = await settled(r, run.id);
    await control(r.sandbox.url, 'faults', { failureRate: 0 });
    expect(failed.state).toBe('failed');
    expect(failed.runStatus).toBe('failed');
    expect(failed.error).toMatch(/A step of the workflow failed/);
    expect(r.services.apps.one(run.id).retry).toBe('submit');
    const posts = (await control(r.sandbox.url, 'stats')).requests['POST /v1/ai/flows/:appId/run'];
    await expect(r.services.apps.retry(run.id)).rejects.toMatchObject({
      code: 'conflict',
      message: `retrying run ${run.id.slice(0, 8)} sends it again as a new run: Jingle maker costs 8 credits; confirm the cost to retry it`,
    });
    await expect(r.services.apps.retry(run.id, undefined, 5)).rejects.toMatchObject({
      code: 'conflict',
      message: 'Jingle maker now costs 8 credits, not 5; confirm the new cost to retry it',
    });
    expect(r.services.apps.one(run.id).state).toBe('failed');
    expect((await control(r.sandbox.url, 'stats')).requests['POST /v1/ai/flows/:appId/run']).toBe(posts);
    await r.services.apps.retry(run.id, undefined, 8);
    expect((await settled(r, run.id)).state).toBe('done');
  });

  it("the service's other endings: completed_with_errors keeps the results made, cancelled says so", async () => {
    // The ending is fixed when the Sandbox receives the run, which happens after run() returns: one at a time.
    const ending = async (appRunEnding: string, start: () => Promise<{ id: string }>) => {
      await control(r.sandbox.url, 'faults', { appRunEnding });
      try {
        return await settled(r, (await start()).id);
      } finally {
        await control(r.sandbox.url, 'faults', { appRunEnding: 'completed' });
      }
    };
    const p = await ending('completed_with_errors', () =>
      r.services.apps.run({
        appId: 'pS7kQ2xa',
        confirmedCost: 12,
        inputs: { product_image: image, scene: 'on a shelf', variations: 3 },
      }),
    );
    const c = await ending('cancelled', () =>
      r.services.apps.run({ appId: 'jM4nX8sc', confirmedCost: 8, inputs: { brief: 'x' } }),
    );
    expect(p.state).toBe('done');
    expect(p.runStatus).toBe('completed_with_errors');
    expect(p.error).toMatch(
      /^Some steps failed: One step of the workflow failed.*the results that were produced are kept\.$/,
    );
    expect(p.outputs).toHaveLength(2);
    for (const f of p.outputs) expect(statSync(f).size).toBeGreaterThan(0);
    expect(c.state).toBe('failed');
    expect(c.runStatus).toBe('cancelled');
    expect(c.error).toBe('The run was cancelled on the server.');
  });

  it('the Business-plan key is refused with a plain message', async () => {
    r.key.value = 'sandbox-business';
    try {
      const err = (await r.services.apps.list().catch((e) => e)) as DeskError;
      expect(err).toBeInstanceOf(DeskError);
      expect(err.code).toBe('forbidden');
      expect(err.message).toMatch(/Enterprise plans only/);
      expect(err.message).toMatch(/Workflow apps are available to Enterprise customers only/);
    } finally {
      r.key.value = 'sandbox-owner';
    }
  });

  it('a run left `submitting` by a crash goes to needs_attention when the queue is taken, and is never re-sent', async () => {
    r.lease.held = false;
    const run = await r.services.apps.run({ appId: 'jM4nX8sc', confirmedCost: 8, inputs: { brief: 'crash' } });
    // What a process killed between committing `submitting` and storing the run id leaves behind.
    expect(r.services.apps.store.move(run.id, 'queued', 'submitting', { attemptId: 'x', attempts: 1 })).toBe(true);
    const creates = JSON.stringify((await control(r.sandbox.url, 'stats')).creates);
    r.services.apps.runner.tick();
    r.lease.held = true;
    r.services.apps.runner.tick();
    const row = r.services.apps.store.get(run.id)!;
    expect(row.state).toBe('needs_attention');
    expect(row.error).toMatch(/may have been created and charged/);
    // A submit either tick started has reached the Sandbox once the runner is settled.
    await r.services.apps.runner.settled();
    expect(JSON.stringify((await control(r.sandbox.url, 'stats')).creates)).toBe(creates);
    r.services.apps.cancel(run.id);
  });

  it('runs survive a restart: a queued run left by a closed process completes in the next one', async () => {
    const home = tmp('restart');
    const a = await rig({ sandbox: r.sandbox, home });
    a.lease.held = false;
    const run = await a.services.apps.run({ appId: 'jM4nX8sc', confirmedCost: 8, inputs: { brief: 'later' } });
    await a.close();
    const store = new AppRunStore(openDatabase(join(home, 'mediadesk.db'), QUEUE_MIGRATIONS));
    expect(store.get(run.id)!.state).toBe('queued');
    store.db.close();
    const b = await rig({ sandbox: r.sandbox, home });
    try {
      const done = await settled(b, run.id);
      expect(done.state).toBe('done');
      expect(existsSync(done.outputs[0])).toBe(true);
    } finally {
      await b.close();
      cleanup(home);
    }
  });
  it('an output folder that is a file is refused before the run is queued or paid', async () => {
    const file = join(dir, 'not-a-folder');
    writeFileSync(file, 'x');
    const before = r.services.apps.runs().length;
    await expect(
      r.services.apps.run({
        appId: 'pS7kQ2xa',
        confirmedCost: 12,
        inputs: { product_image: image, scene: 'x' },
        outDir: join(file, 'out'),
      }),
    ).rejects.toMatchObject({
      code: 'invalid',
      message: `output folder: ${join(file, 'out')} cannot be created: ${file} is a file`,
    });
    expect(r.services.apps.runs().length).toBe(before);
  });

  it('with resume, a pending run of the same app, inputs and folder is followed, never sent again', async () => {
    const out = join(dir, 'resume-out');
    const same = {
      appId: 'pS7kQ2xa',
      confirmedCost: 12,
      inputs: { product_image: image, scene: 'resume me' },
      outDir: out,
    };
    const posts = async () => (await control(r.sandbox.url, 'stats')).requests['POST /v1/ai/flows/:appId/run'] ?? 0;
    r.lease.held = false;
    // `only` follows a pending run or says there is none; it never queues one (nothing was confirmed).
    const count = r.services.apps.runs(500).length;
    await expect(r.services.apps.run({ ...same, resume: 'only' })).rejects.toMatchObject({ code: 'not_found' });
    expect(r.services.apps.runs(500).length).toBe(count);
    const first = await r.services.apps.run(same);
    expect(first.resumed).toBe(false);
    expect(await r.services.apps.run({ ...same, resume: 'only', confirmedCost: 99 })).toMatchObject({
      id: first.id,
      resumed: true,
    });
    // Pending in every way a run can be: queued, needs attention, or paid with its download failed.
    const again = await r.services.apps.run({ ...same, resume: true });
    expect([again.id, again.resumed]).toEqual([first.id, true]);
    expect((await r.services.apps.run({ ...same, resume: true, confirmedCost: 99 })).id).toBe(first.id);
    expect(r.services.apps.store.move(first.id, 'queued', 'submitting', { attemptId: 'x', attempts: 1 })).toBe(true);
    expect((await r.services.apps.run({ ...same, resume: true })).id).toBe(first.id);
    r.services.apps.store.move(first.id, 'submitting', 'needs_attention', { error: 'left by a crash' });
    expect(await r.services.apps.run({ ...same, resume: true })).toMatchObject({
      id: first.id,
      state: 'needs_attention',
      resumed: true,
    });
    // Another folder, other inputs, or no resume asked for: runs of their own.
    const other = [
      await r.services.apps.run({ ...same, resume: true, outDir: join(dir, 'elsewhere') }),
      await r.services.apps.run({ ...same, resume: true, inputs: { ...same.inputs, scene: 'another scene' } }),
      await r.services.apps.run(same),
    ];
    expect(new Set([first.id, ...other.map((o) => o.id)]).size).toBe(4);
    for (const o of other) r.services.apps.cancel(o.id);
    r.services.apps.cancel(first.id);
    // A settled run is not pending: the same request queues anew.
    const before = await posts();
    r.lease.held = true;
    const fresh = await r.services.apps.run({ ...same, resume: true });
    expect(fresh.resumed).toBe(false);
    expect((await settled(r, fresh.id)).state).toBe('done');
    expect(await posts()).toBe(before + 1);
    // Paid, download failed: resuming fetches the results again, with no new run.
    r.services.apps.store.db
      .prepare(`UPDATE app_runs SET state = 'failed', outputs = '[]', error = 'Download failed' WHERE id = ?`)
      .run(fresh.id);
    expect(await r.services.apps.run({ ...same, resume: true })).toMatchObject({
      id: fresh.id,
      state: 'downloading',
      resumed: true,
    });
    expect((await settled(r, fresh.id)).state).toBe('done');
    expect(await posts()).toBe(before + 1);
  });
});

describe('on Windows, results whose path would pass its 259 characters', () => {
  /** A folder `length` characters long in all, under `dir`. */
  const deepFolder = (length: number) => {
    const base = join(dir, 'deep');
    const folder = `${base}/${'d'.repeat(length - base.length - 1)}`;
    mkdirSync(folder, { recursive: true });
    expect(folder.length).toBe(length);
    return folder;
  };

  it('an app run into a folder too deep for its results is refused before it is queued or paid, naming the path', async () => {
    const win = await rig({ sandbox: r.sandbox, platform: 'win32' });
    try {
      const out = deepFolder(240);
      const posts = async () => (await control(r.sandbox.url, 'stats')).requests['POST /v1/ai/flows/:appId/run'] ?? 0;
      const before = await posts();
      const runs = win.services.apps.runs().length;
      const refused = win.services.apps.run({
        appId: 'pS7kQ2xa',
        confirmedCost: 12,
        inputs: { product_image: image, scene: 'x' },
        outDir: out,
      });
      await expect(refused).rejects.toMatchObject({ code: 'invalid' });
      await expect(refused).rejects.toThrow(
        /^output folder: its results cannot be written: .*deep\/d+\/product_product-shot-studio_99\.webp would be \d+ characters long, more than 244 .*; choose an output folder with a shorter path$/,
      );
      expect(win.services.apps.runs().length).toBe(runs);
      expect(await posts()).toBe(before);
      // A shorter folder is fine on Windows too.
      const ok = await win.services.apps.run({
        appId: 'pS7kQ2xa',
        confirmedCost: 12,
        inputs: { product_image: image, scene: 'x' },
        outDir: deepFolder(150),
      });
      expect((await settled(win, ok.id)).state).toBe('done');
      expect(await posts()).toBe(before + 1);
    } finally {
      await win.close();
      cleanup(win.home);
    }
  });

  it('a creation with a long name is saved under a shortened name that fits; a folder with no room for any name is refused before the download', async () => {
    const win = await rig({ sandbox: r.sandbox, platform: 'win32' });
    try {
      const prompt = 'a lighthouse on a granite cliff at dawn, waves breaking below, gulls, long exposure';
      await win.client.create('/v1/ai/text-to-image/flux-kontext-pro', { prompt });
      const c = await vi.waitFor(async () => {
        const page = await win.services.creations.list({ page: 1, perPage: 10, thumbnails: false });
        const found = page.items.find((i) => i.url && i.name?.startsWith('a lighthouse on a granite'));
        expect(found).toBeDefined();
        return found;
      });
      const out = deepFolder(200);
      const saved = await win.services.creations.download(c!.id, out);
      expect(saved.startsWith(`${out}/`)).toBe(true);
      expect(saved.length).toBeLessThanOrEqual(253);
      // Cut, with a hash that keeps two cut names apart, its extension kept.
      expect(saved.slice(out.length + 1)).toMatch(/^a lighthouse on a granite[^/]*~[0-9a-f]{8}\.png$/);
      expect(statSync(saved).size).toBeGreaterThan(0);
      // Saved again beside it: the number it takes still fits.
      const again = await win.services.creations.download(c!.id, out);
      expect(again).toBe(saved.replace(/\.png$/, '-2.png'));
      expect(again.length).toBeLessThanOrEqual(259);
      await expect(win.services.creations.download(c!.id, deepFolder(245))).rejects.toThrow(
        /^output folder: the creation cannot be saved there: .* would be \d+ characters long, more than 253 .*; choose an output folder with a shorter path$/,
      );
    } finally {
      await win.close();
      cleanup(win.home);
    }
  });
});
