import { chmodSync, cpSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Engine } from '../../electron/core/engine/engine.ts';
import { MediaGate } from '../../electron/core/media-gate.ts';
import sharp from 'sharp';
import { control, creates, engineSuite, makeImages, settle } from './helpers.ts';

/**
 * Folders as designers drop them: files that cannot be read, are cut short, change after the drop,
 * or are dropped twice. Each file that cannot succeed is named with its reason before anything is
 * paid; the rest of the folder runs.
 */
const sb = engineSuite('messy', 100);

function setup() {
  const dir = sb.folder();
  const e = sb.engine(join(dir, 'home'));
  return { dir, e, input: join(dir, 'in'), out: join(dir, 'out') };
}

describe('messy folders', () => {
  // Root opens any file whatever its mode: there the unreadable file cannot be made.
  it.skipIf(process.getuid?.() === 0)(
    'a file the user may not read is rejected by name; the rest of the folder still runs',
    async () => {
      const { e, input, out } = setup();
      await makeImages(input, ['a.png', 'locked.png', 'z.png']);
      chmodSync(join(input, 'locked.png'), 0o000);
      const r = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
      expect(r.queued).toBe(2);
      expect(r.rejected).toEqual([{ path: join(input, 'locked.png'), reason: 'cannot be read (permission denied)' }]);
      chmodSync(join(input, 'locked.png'), 0o644);
    },
  );

  it('a photo cut short by an interrupted copy is rejected before it is paid for, not after', async () => {
    const { e, input, out } = setup();
    await makeImages(input, ['a.png']);
    const photo = await sharp({
      create: {
        width: 800,
        height: 600,
        channels: 3,
        background: '#000',
        noise: { type: 'gaussian', mean: 128, sigma: 40 },
      },
    })
      .jpeg()
      .toBuffer();
    writeFileSync(join(input, 'IMG_0001.jpg'), photo.subarray(0, photo.length >> 1));
    const r = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
    expect(r.queued).toBe(1);
    expect(r.rejected).toEqual([
      {
        path: join(input, 'IMG_0001.jpg'),
        reason: expect.stringMatching(
          /^is truncated or damaged: the image data ends early \(.*premature end of JPEG.*\); was it still being copied\?$/,
        ),
      },
    ]);
    e.start();
    await settle(e, r.jobIds);
    expect(e.store.byIds(r.jobIds).map((j) => j.state)).toEqual(['done']);
    expect(creates(await control(sb.url, 'stats'))).toBe(1);
  });

  it('a file that changed after it was queued is checked again before sending: nothing is paid for what cannot succeed', async () => {
    const { e, input, out } = setup();
    const [a, b, c] = await makeImages(input, ['a.png', 'b.png', 'c.png'], 64);
    const r = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
    expect(r.queued).toBe(3);
    // Between the drop and the submission: one is saved over half-written, one replaced by a text.
    const whole = readFileSync(a);
    writeFileSync(a, whole.subarray(0, whole.length - 20));
    writeFileSync(b, 'moved to the cloud; this is a placeholder');
    e.start();
    await settle(e, r.jobIds);
    const jobs = e.store.byIds(r.jobIds).sort((x, y) => x.inputPath!.localeCompare(y.inputPath!));
    expect(jobs.map((j) => [j.inputPath, j.state, j.taskId])).toEqual([
      [a, 'failed', null],
      [b, 'failed', null],
      [c, 'done', expect.any(String)],
    ]);
    expect(jobs[0].error).toMatch(
      new RegExp(
        `^The input ${a} is truncated or damaged: .* \\(checked again before sending\\); nothing was sent or paid\\. Restore or fix the file, then Retry \\(or Cancel the job\\)\\.$`,
      ),
    );
    expect(jobs[1].error).toBe(
      `The input ${b} is not a readable image (checked again before sending); nothing was sent or paid. Restore or fix the file, then Retry (or Cancel the job).`,
    );
    expect(creates(await control(sb.url, 'stats'))).toBe(1);
  });

  it('the same folder started twice at once (app and script, or a double drop) is queued and paid for once', async () => {
    const { dir, e, input, out } = setup();
    await makeImages(input, ['a.png', 'b.png', 'sub/c.png']);
    // A second process on the same data folder: the CLI beside the app.
    const other = sb.engine(join(dir, 'home'));
    const start = (x: Engine) => x.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
    const runs = await Promise.all([start(e), start(other), start(e)]);
    expect(runs.map((r) => r.queued).reduce((a, n) => a + n, 0)).toBe(3);
    const ids = new Set(runs.flatMap((r) => r.jobIds));
    expect(ids.size).toBe(3);
    // Every run follows the same three jobs, whichever of them queued them.
    for (const r of runs) expect(new Set(r.jobIds)).toEqual(ids);
    e.start();
    await settle(e, [...ids]);
    expect(creates(await control(sb.url, 'stats'))).toBe(3);
    expect(e.store.batches(50, 0)).toHaveLength(1);
  });

  it('one folder reached two ways (through a link; on macOS and Windows also typed in another case) is one folder: queued and paid for once', async () => {
    const { dir, e, input, out } = setup();
    await makeImages(input, ['a.png', 'sub/b.png']);
    symlinkSync(input, join(dir, 'shortcut'));
    symlinkSync(dir, join(dir, 'outside'));
    const first = await e.startBatch({
      tool: 'upscaler-precision',
      inputs: [join(dir, 'shortcut')],
      outDir: join(dir, 'outside', 'out'),
    });
    expect(first.queued).toBe(2);
    // Recorded as the file system names them, so the second start finds the same jobs.
    expect(first.batch!.outDir).toBe(out);
    expect(
      e.store
        .byIds(first.jobIds)
        .map((j) => j.inputPath)
        .sort(),
    ).toEqual([join(input, 'a.png'), join(input, 'sub', 'b.png')]);
    const again = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
    expect([again.queued, new Set(again.resumed)]).toEqual([0, new Set(first.jobIds)]);
    e.start();
    await settle(e, first.jobIds);
    expect(creates(await control(sb.url, 'stats'))).toBe(2);
  });

  it('a folder copied off a Mac (its name decomposed, NFD) typed or pasted composed (NFC) is that folder, for inputs and results alike', async () => {
    const { dir, e } = setup();
    const onDisk = join(dir, 'Cafe\u0301 shoot');
    const typed = join(dir, 'Caf\u00e9 shoot');
    await makeImages(onDisk, ['cre\u0300me.png', 'sub/b.png']);
    const first = await e.startBatch({ tool: 'upscaler-precision', inputs: [typed], outDir: join(typed, 'results') });
    expect([first.queued, first.rejected]).toEqual([2, []]);
    expect(first.batch!.outDir).toBe(join(onDisk, 'results'));
    expect(
      e.store
        .byIds(first.jobIds)
        .map((j) => j.inputPath)
        .sort(),
    ).toEqual([join(onDisk, 'cre\u0300me.png'), join(onDisk, 'sub', 'b.png')]);
    // A file typed composed too; and the folder as the file manager gives it is the same batch.
    const again = await e.startBatch({
      tool: 'upscaler-precision',
      inputs: [onDisk, join(typed, 'cr\u00e8me.png')],
      outDir: join(onDisk, 'results'),
    });
    expect([again.queued, new Set(again.resumed)]).toEqual([0, new Set(first.jobIds)]);
    e.start();
    await settle(e, first.jobIds);
    // One results folder, inside the one shoot folder: not a look-alike made beside it.
    expect(readdirSync(dir).filter((n) => n.includes('shoot'))).toEqual(['Cafe\u0301 shoot']);
    expect(e.store.byIds(first.jobIds).map((j) => j.state)).toEqual(['done', 'done']);
  });

  it('results of an earlier batch in a folder inside the shoot are not paid for again by the next tool run over the shoot', async () => {
    const { dir, e } = setup();
    const shoot = join(dir, 'shoot 📷');
    const [a, b] = await makeImages(shoot, ['a.png', 'sub/b.png'], 64);
    const up = await e.startBatch({ tool: 'upscaler-precision', inputs: [shoot], outDir: join(shoot, 'upscaled') });
    e.start();
    await settle(e, up.jobIds);
    const made = e.store
      .byIds(up.jobIds)
      .flatMap((j) => j.outputs)
      .sort();
    expect(made).toEqual([
      join(shoot, 'upscaled', 'a_upscaler-precision.png'),
      join(shoot, 'upscaled', 'sub', 'b_upscaler-precision.png'),
    ]);
    // The next tool over the shoot: its photos, and each earlier result named as skipped before anything is paid.
    const prompts = await e.startBatch({ tool: 'image-to-prompt', inputs: [shoot], outDir: join(shoot, 'prompts') });
    expect(
      e.store
        .byIds(prompts.jobIds)
        .map((j) => j.inputPath)
        .sort(),
    ).toEqual([a, b]);
    expect(prompts.skipped.sort((x, y) => x.path.localeCompare(y.path))).toEqual(
      made.map((path) => ({
        path,
        reason:
          'is a result of an earlier upscaler-precision batch; choose its folder itself to use its results as inputs',
      })),
    );
    await settle(e, prompts.jobIds);
    // A third run over the shoot meets the prompts (text) as results too, not as files of a wrong type.
    const x4 = await e.startBatch({
      tool: 'upscaler-precision',
      inputs: [shoot],
      params: { scale_factor: 4 },
      outDir: join(dir, 'x4'),
    });
    expect([x4.queued, x4.rejected, x4.skipped.length]).toEqual([2, [], 4]);
    await settle(e, x4.jobIds);
    // Chosen itself, the results folder is the input: the results are what the user means.
    const chained = await e.startBatch({
      tool: 'image-to-prompt',
      inputs: [join(shoot, 'upscaled')],
      outDir: join(dir, 'prompts-of-upscaled'),
    });
    expect([chained.queued, chained.skipped]).toEqual([2, []]);
    await settle(e, chained.jobIds);
    expect(creates(await control(sb.url, 'stats'))).toBe(8);
  });

  it('results written into a folder inside the shoot are not read back as inputs when the same run is started again', async () => {
    const { e, input } = setup();
    const photos = await makeImages(input, ['a.png', 'sub/b.png']);
    const out = join(input, 'results');
    const first = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
    e.start();
    await settle(e, first.jobIds);
    const again = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
    expect([again.queued, again.rejected, again.skipped.map((x) => x.path)]).toEqual([0, [], photos]);
    expect(creates(await control(sb.url, 'stats'))).toBe(2);
  });

  it('results beside the photos (the output folder is the shoot itself): the photos run, and a re-run skips both photos and results by name', async () => {
    const { e, input } = setup();
    const [a, b] = await makeImages(input, ['a.png', 'sub/b.png']);
    const first = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: input });
    expect([first.queued, first.rejected, first.skipped]).toEqual([2, [], []]);
    e.start();
    await settle(e, first.jobIds);
    const made = [join(input, 'a_upscaler-precision.png'), join(input, 'sub', 'b_upscaler-precision.png')];
    const again = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: input });
    expect(again.queued).toBe(0);
    const byPath = (x: { path: string }, y: { path: string }) => x.path.localeCompare(y.path);
    expect(again.skipped.sort(byPath)).toEqual(
      [
        { path: a, reason: `its output ${made[0]} already exists` },
        { path: made[0], reason: 'is a result of an earlier upscaler-precision batch into this output folder' },
        { path: b, reason: `its output ${made[1]} already exists` },
        { path: made[1], reason: 'is a result of an earlier upscaler-precision batch into this output folder' },
      ].sort(byPath),
    );
    expect(creates(await control(sb.url, 'stats'))).toBe(2);
  });

  it('a second memory card into the same results folder: IMG_0001 of each is its own photo, not "output exists"', async () => {
    const { dir, e, out } = setup();
    const [cardA, cardB] = [join(dir, 'card A'), join(dir, 'card B')];
    await makeImages(cardA, ['IMG_0001.png', 'IMG_0002.png']);
    await makeImages(cardB, ['IMG_0001.png', 'IMG_0002.jpg', 'IMG_0003.png'], 48);
    const first = await e.startBatch({ tool: 'upscaler-precision', inputs: [cardA], outDir: out });
    e.start();
    await settle(e, first.jobIds);
    const second = await e.startBatch({ tool: 'upscaler-precision', inputs: [cardB], outDir: out });
    expect(second.skipped).toEqual([]);
    expect(second.queued).toBe(3);
    await settle(e, second.jobIds);
    expect(
      e.store
        .byIds(second.jobIds)
        .sort((x, y) => x.seq - y.seq)
        .map((j) => j.outputs.map((o) => o.slice(out.length + 1))),
    ).toEqual([
      ['IMG_0001_upscaler-precision-2.png'],
      ['IMG_0002_upscaler-precision-2.png'],
      ['IMG_0003_upscaler-precision.png'],
    ]);
    // Each card again: every photo has its own result now, and says which.
    for (const [card, names] of [
      [cardA, ['IMG_0001.png', 'IMG_0002.png']],
      [cardB, ['IMG_0001.png', 'IMG_0002.jpg', 'IMG_0003.png']],
    ] as const) {
      const again = await e.startBatch({ tool: 'upscaler-precision', inputs: [card], outDir: out });
      expect(again.queued).toBe(0);
      expect(again.skipped.map((x) => x.path)).toEqual(names.map((n) => join(card, n)));
    }
    expect(
      (await e.startBatch({ tool: 'upscaler-precision', inputs: [join(cardB, 'IMG_0002.jpg')], outDir: out })).skipped,
    ).toEqual([
      {
        path: join(cardB, 'IMG_0002.jpg'),
        reason: `its output ${join(out, 'IMG_0002_upscaler-precision-2.png')} already exists`,
      },
    ]);
    expect(creates(await control(sb.url, 'stats'))).toBe(5);
  });

  it('a file moved away after it was queued fails in words, before anything is sent', async () => {
    const { e, input, out } = setup();
    const [a, b] = await makeImages(input, ['a.png', 'b.png']);
    const r = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
    rmSync(a);
    e.start();
    await settle(e, r.jobIds);
    const jobs = e.store.byIds(r.jobIds).sort((x, y) => x.seq - y.seq);
    expect(jobs.map((j) => [j.inputPath, j.state, j.error])).toEqual([
      [
        a,
        'failed',
        `The input ${a} could not be read (it no longer exists); nothing was sent or paid. Restore or fix the file, then Retry (or Cancel the job).`,
      ],
      [b, 'done', null],
    ]);
    expect(jobs[0].invalid).toEqual([{ field: 'image', reason: `${a} could not be read (it no longer exists)` }]);
    expect(creates(await control(sb.url, 'stats'))).toBe(1);
  });

  it('photo.jpg beside photo.png: two results, each whole under its own name, never one file written by both', async () => {
    const { dir, input, out } = setup();
    const e = sb.engine(join(dir, 'home2'), { concurrency: 8 });
    const names = Array.from({ length: 6 }, (_, i) => [`shot${i}.png`, `shot${i}.jpg`]).flat();
    const made = await makeImages(
      input,
      names.map((n) => n.replace('.jpg', '-j.png')),
    );
    // The .jpg of each pair is a real JPEG (distinct colours, so each prompt is its own).
    for (const [i, n] of names.entries())
      if (n.endsWith('.jpg')) writeFileSync(join(input, n), await sharp(made[i]).jpeg().toBuffer());
    for (const [i, n] of names.entries()) if (n.endsWith('.jpg')) rmSync(made[i]);
    for (const tool of ['image-to-prompt', 'upscaler-precision']) {
      const r = await e.startBatch({ tool, inputs: [input], outDir: join(out, tool) });
      expect(r.queued).toBe(12);
      e.start();
      await settle(e, r.jobIds);
      const jobs = e.store.byIds(r.jobIds);
      expect(jobs.filter((j) => j.state !== 'done').map((j) => j.error)).toEqual([]);
      const outputs = jobs.flatMap((j) => j.outputs);
      expect(new Set(outputs).size).toBe(12);
      if (tool === 'image-to-prompt')
        for (const j of jobs) expect(readFileSync(j.outputs[0], 'utf8').trimEnd()).toBe(j.generated!.join('\n'));
    }
  });

  it('the same folder dropped again in the browser (copied anew, under a new path) is not paid for again; an edited photo in it is', async () => {
    const { dir, e, out } = setup();
    const drop = (id: string) => join(dir, 'home', 'inbox', id, 'shoot');
    const first = await makeImages(drop('d1'), ['a.png', 'sub/b.png', 'c.png'], 40);
    const r1 = await e.startBatch({ tool: 'upscaler-precision', inputs: [drop('d1')], outDir: out });
    e.start();
    await settle(e, r1.jobIds);
    // The second drop: the same bytes, but c.png was retouched since.
    for (const f of first) mkdirSync(dirname(f.replace('d1', 'd2')), { recursive: true });
    for (const f of first) writeFileSync(f.replace('d1', 'd2'), readFileSync(f));
    writeFileSync(
      join(drop('d2'), 'c.png'),
      await sharp({ create: { width: 40, height: 40, channels: 3, background: '#0c0' } })
        .png()
        .toBuffer(),
    );
    const r2 = await e.startBatch({ tool: 'upscaler-precision', inputs: [drop('d2')], outDir: out });
    expect(e.store.byIds(r2.jobIds).map((j) => j.inputPath)).toEqual([join(drop('d2'), 'c.png')]);
    expect(r2.skipped.map((x) => [x.path, x.reason])).toEqual([
      [join(drop('d2'), 'a.png'), `its output ${join(out, 'a_upscaler-precision.png')} already exists`],
      [join(drop('d2'), 'sub', 'b.png'), `its output ${join(out, 'sub', 'b_upscaler-precision.png')} already exists`],
    ]);
    await settle(e, r2.jobIds);
    expect(creates(await control(sb.url, 'stats'))).toBe(4);
  });

  it('the same folder dropped again after the first copy was cleared from the inbox is still not paid for again; a retouched photo of the same size is', async () => {
    const { dir, e, out } = setup();
    const drop = (id: string) => join(dir, 'home', 'inbox', id, 'shoot');
    const [a, b] = await makeImages(drop('d1'), ['a.png', 'sub/b.png'], 40);
    const r1 = await e.startBatch({ tool: 'upscaler-precision', inputs: [drop('d1')], outDir: out });
    e.start();
    await settle(e, r1.jobIds);
    const sent = { a: readFileSync(a), b: readFileSync(b) };
    // The first drop's copy is gone (the inbox cleared to free space); the photos are dropped again.
    rmSync(join(dir, 'home', 'inbox', 'd1'), { recursive: true });
    mkdirSync(join(drop('d2'), 'sub'), { recursive: true });
    writeFileSync(join(drop('d2'), 'a.png'), sent.a);
    // b retouched since: other pixels, the same size.
    const retouched = await sharp({ create: { width: 40, height: 40, channels: 3, background: { r: 1, g: 0, b: 78 } } })
      .png()
      .toBuffer();
    expect([retouched.length, retouched.equals(sent.b)]).toEqual([sent.b.length, false]);
    writeFileSync(join(drop('d2'), 'sub', 'b.png'), retouched);
    const r2 = await e.startBatch({ tool: 'upscaler-precision', inputs: [drop('d2')], outDir: out });
    expect(r2.skipped).toEqual([
      { path: join(drop('d2'), 'a.png'), reason: `its output ${join(out, 'a_upscaler-precision.png')} already exists` },
    ]);
    expect([r2.queued, r2.rejected]).toEqual([1, []]);
    await settle(e, r2.jobIds);
    expect(e.store.byIds(r2.jobIds).map((j) => [j.inputPath, j.state])).toEqual([
      [join(drop('d2'), 'sub', 'b.png'), 'done'],
    ]);
    expect(creates(await control(sb.url, 'stats'))).toBe(3);
  });

  it('the shoot dropped again in the browser with the results folder the user chose inside it: its photos are done, and its results are not taken as new inputs', async () => {
    const { dir, e } = setup();
    // The shoot on the user's disk; each drop in the browser is copied anew into the inbox, all of it.
    const shoot = join(dir, 'Shoot 📷');
    await makeImages(shoot, ['a.png', 'sub/b.png'], 40);
    const dropped = (id: string) => {
      const to = join(dir, 'home', 'inbox', id, 'Shoot 📷');
      cpSync(shoot, to, { recursive: true });
      return to;
    };
    const upscaled = join(shoot, 'upscaled');
    const first = await e.startBatch({ tool: 'upscaler-precision', inputs: [dropped('d1')], outDir: upscaled });
    e.start();
    await settle(e, first.jobIds);
    expect(readdirSync(upscaled, { recursive: true }).map(String).sort()).toEqual([
      'a_upscaler-precision.png',
      'sub',
      join('sub', 'b_upscaler-precision.png'),
    ]);
    // Dropped again: the copy holds upscaled/ too, under paths the queue never wrote.
    const d2 = dropped('d2');
    const again = await e.startBatch({ tool: 'upscaler-precision', inputs: [d2], outDir: upscaled });
    expect([again.queued, again.rejected]).toEqual([0, []]);
    expect(again.skipped.map((x) => [x.path, x.reason]).sort()).toEqual(
      [
        [join(d2, 'a.png'), `its output ${join(upscaled, 'a_upscaler-precision.png')} already exists`],
        [join(d2, 'sub', 'b.png'), `its output ${join(upscaled, 'sub', 'b_upscaler-precision.png')} already exists`],
        [
          join(d2, 'upscaled', 'a_upscaler-precision.png'),
          `is named as the upscaler-precision result of ${join(d2, 'a.png')}; choose it itself to use it as an input`,
        ],
        [
          join(d2, 'upscaled', 'sub', 'b_upscaler-precision.png'),
          `is named as the upscaler-precision result of ${join(d2, 'sub', 'b.png')}; choose it itself to use it as an input`,
        ],
      ].sort(),
    );
    // Another tool over the new copy: the photos run, the results do not.
    const prompts = await e.startBatch({ tool: 'image-to-prompt', inputs: [d2], outDir: join(dir, 'prompts') });
    expect(
      e.store
        .byIds(prompts.jobIds)
        .map((j) => j.inputPath)
        .sort(),
    ).toEqual([join(d2, 'a.png'), join(d2, 'sub', 'b.png')]);
    await settle(e, prompts.jobIds);
    expect(creates(await control(sb.url, 'stats'))).toBe(4);
  });

  it('results the queue never knew (a fresh data folder; made on another machine and copied along) are not inputs of a run over the shoot; photos merely named alike are', async () => {
    const { dir, e } = setup();
    const shoot = join(dir, 'shoot');
    const [a, b] = await makeImages(shoot, ['a.png', 'sub/b.png']);
    const first = await e.startBatch({ tool: 'upscaler-precision', inputs: [shoot], outDir: join(shoot, 'upscaled') });
    e.start();
    await settle(e, first.jobIds);
    // Photos of the user's own that only look like results: no photo of their name is in the shoot, or no tool makes them.
    const own = await makeImages(
      shoot,
      ['c_upscaler-precision.png', 'a_retouched.png', 'edits/b_upscaler-precision-final.png'],
      48,
    );
    const fresh = sb.engine(join(dir, 'other machine'));
    const r = await fresh.startBatch({ tool: 'image-to-prompt', inputs: [shoot], outDir: join(dir, 'prompts') });
    expect(
      fresh.store
        .byIds(r.jobIds)
        .map((j) => j.inputPath)
        .sort(),
    ).toEqual([a, ...own, b].sort());
    expect(r.skipped.map((x) => x.path).sort()).toEqual([
      join(shoot, 'upscaled', 'a_upscaler-precision.png'),
      join(shoot, 'upscaled', 'sub', 'b_upscaler-precision.png'),
    ]);
    // The results folder chosen itself: its results are the inputs the user means.
    const chained = await fresh.startBatch({
      tool: 'image-to-prompt',
      inputs: [join(shoot, 'upscaled')],
      outDir: join(dir, 'prompts of upscaled'),
    });
    expect([chained.queued, chained.skipped]).toEqual([2, []]);
    fresh.start();
    await settle(fresh, [...r.jobIds, ...chained.jobIds]);
    expect(creates(await control(sb.url, 'stats'))).toBe(2 + 5 + 2);
  });

  it('a new input never resumes the part file another job left for Retry under the same name', async () => {
    const { dir, input, out } = setup();
    const e = sb.engine(join(dir, 'home2'), { downloadAttempts: 1 });
    const [png] = await makeImages(input, ['photo.png'], 200);
    await control(sb.url, 'faults', { truncateDownloads: true });
    const first = await e.startBatch({ tool: 'upscaler-precision', inputs: [png], outDir: out });
    e.start();
    await settle(e, first.jobIds);
    expect(e.store.get(first.jobIds[0])!.state).toBe('failed');
    // The half it received waits as photo_upscaler-precision.png.part for the user's Retry.
    const part = join(out, 'photo_upscaler-precision.png.part');
    expect(readFileSync(part).length).toBeGreaterThan(0);
    await control(sb.url, 'faults', { truncateDownloads: false });
    const jpg = join(input, 'photo.jpg');
    writeFileSync(
      jpg,
      await sharp({ create: { width: 200, height: 100, channels: 3, background: '#c33' } })
        .jpeg()
        .toBuffer(),
    );
    const second = await e.startBatch({ tool: 'upscaler-precision', inputs: [jpg], outDir: out });
    await settle(e, second.jobIds);
    const made = e.store.get(second.jobIds[0])!;
    expect(made.outputs).toEqual([join(out, 'photo_upscaler-precision-2.png')]);
    expect(await sharp(made.outputs[0]).metadata()).toMatchObject({ width: 400, height: 200 });
    e.retryJob(first.jobIds[0]);
    await settle(e, first.jobIds);
    const retried = e.store.get(first.jobIds[0])!;
    expect(retried.outputs).toEqual([join(out, 'photo_upscaler-precision.png')]);
    expect(await sharp(retried.outputs[0]).metadata()).toMatchObject({ width: 400, height: 400 });
    expect(creates(await control(sb.url, 'stats'))).toBe(2);
  });

  it('a phone photo stored sideways with an orientation tag (PNG eXIf, JPEG EXIF) comes back, and shows, upright as the user sees it', async () => {
    const { dir, e, input, out } = setup();
    // Stored 120x80 with a red band along its left edge; orientation 6 turns it to a 80x120 portrait, band on top.
    const band = await sharp({ create: { width: 12, height: 80, channels: 3, background: '#f00' } })
      .png()
      .toBuffer();
    const stored = sharp({ create: { width: 120, height: 80, channels: 3, background: '#00f' } }).composite([
      { input: band, left: 0, top: 0 },
    ]);
    const files = [join(input, 'IMG_0001.png'), join(input, 'IMG_0002.JPG')];
    mkdirSync(input, { recursive: true });
    await stored.clone().png().withMetadata({ orientation: 6 }).toFile(files[0]);
    await stored.clone().jpeg().withMetadata({ orientation: 6 }).toFile(files[1]);
    const topCentre = async (path: string) => {
      const { width, height } = await sharp(path).metadata();
      const px = await sharp(path)
        .extract({ left: Math.floor(width! / 2), top: 2, width: 1, height: 1 })
        .raw()
        .toBuffer();
      return { width, height, red: px[0] > 200 && px[2] < 60 };
    };
    const r = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], outDir: out });
    expect(r.queued).toBe(2);
    e.start();
    await settle(e, r.jobIds);
    for (const j of e.store.byIds(r.jobIds))
      expect(await topCentre(j.outputs[0]), j.inputPath!).toEqual({ width: 160, height: 240, red: true });
    const gate = new MediaGate(join(dir, 'home'), () => [input]);
    for (const f of files)
      expect(await topCentre(await gate.thumbnail(f, 60)), f).toEqual({ width: 40, height: 60, red: true });
  });

  it('a JPEG saved as .jfif (how Windows names a picture saved from a browser) runs like any JPEG', async () => {
    const { dir, e, input, out } = setup();
    const jfif = join(input, 'moodboard.jfif');
    await makeImages(input, ['a.png']);
    writeFileSync(
      jfif,
      await sharp({ create: { width: 120, height: 80, channels: 3, background: '#48a' } })
        .jpeg()
        .toBuffer(),
    );
    for (const tool of ['upscaler-precision', 'image-to-prompt']) {
      const r = await e.startBatch({ tool, inputs: [input], outDir: join(out, tool) });
      expect(r.rejected).toEqual([]);
      expect(r.queued).toBe(2);
      e.start();
      await settle(e, r.jobIds);
      expect(e.store.byIds(r.jobIds).map((j) => [j.state, j.error])).toEqual([
        ['done', null],
        ['done', null],
      ]);
    }
    // The app shows it (its thumbnail) like any other input.
    await expect(new MediaGate(join(dir, 'home'), () => [input]).thumbnail(jfif, 32)).resolves.toMatch(/\.webp$/);
  });
});
