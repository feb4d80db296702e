import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { runParts } from '../../electron/core/apps/store.ts';
import sharp from 'sharp';
import { exifReader } from './exif-reader.ts';
import { createCore, type Core } from '../../electron/core/index.ts';
import { MemorySecretStore } from '../../electron/core/secrets.ts';
import { sidecarPathOf } from '../../electron/core/metadata/result-metadata.ts';
import { APP_VERSION } from '../../electron/core/app-version.ts';
import { AUDIO_ASSET, VIDEO_ASSET } from '../../electron/sandbox/render.ts';
import { DeskError, type CommandName, type Req, type Res } from '../../shared/contract/index.ts';
import { SETTLED_STATES } from '../../shared/contract/jobs.ts';
import type { Settings } from '../../shared/settings.ts';
import { until } from '../wait.ts';
import { control, sandboxAndHomes } from '../team/helpers.ts';

// Whole cores (createCore, as the app and the CLI build them) over one Sandbox and real files.
const at = sandboxAndHomes('meta-more', 100);

const readTags = exifReader();

const cores: Core[] = [];
afterAll(async () => {
  for (const c of cores) await c.close();
});

async function openCore(settings: Partial<Settings> = {}): Promise<{ core: Core; home: string }> {
  const home = at.home();
  const core = await createCore({
    home,
    host: 'cli',
    env: { MEDIADESK_API_URL: at.url, MEDIADESK_API_KEY: 'sandbox-owner', MEDIADESK_OUTPUT_DIR: join(home, 'results') },
    secrets: new MemorySecretStore(),
    startSandbox: () => Promise.reject(new Error('this test uses its own Sandbox')),
  });
  cores.push(core);
  if (Object.keys(settings).length) await call(core, 'settings.set', settings);
  return { core, home };
}

async function call<K extends CommandName>(core: Core, name: K, req: Req<K>): Promise<Res<K>> {
  const reply = await core.dispatch(name, req);
  if (!reply.ok) throw DeskError.from(reply.error);
  return reply.result as Res<K>;
}

async function runApp(core: Core, req: Req<'apps.run'>) {
  const { id } = await call(core, 'apps.run', req);
  return until(() => {
    const run = core.apps.one(id);
    return SETTLED_STATES.includes(run.state) && run;
  });
}

/** Runs one prompt-only job of `tool` to its end through the core, as the Studio's Start does. */
async function runTool(core: Core, tool: string, params: Record<string, unknown>, outDir: string) {
  const { jobIds } = await call(core, 'batches.start', { tool, inputs: [], params, outDir });
  return until(() => {
    const [job] = core.engine.store.byIds(jobIds);
    return SETTLED_STATES.includes(job.state) && job;
  });
}

/** A phone photo: camera, date and a P3 profile, its pixels turned by EXIF 6. */
async function cameraPhoto(path: string): Promise<string> {
  mkdirSync(dirname(path), { recursive: true });
  await sharp({ create: { width: 48, height: 32, channels: 3, background: { r: 90, g: 140, b: 200 } } })
    .withMetadata({ orientation: 6, icc: 'p3' })
    .withExif({ IFD0: { Make: 'Canon', Model: 'EOS R5' } })
    .jpeg()
    .toFile(path);
  return path;
}

const PROVENANCE_TAGS = (tags: Record<string, unknown>) =>
  Object.keys(tags).filter((k) => k.startsWith('XMP-mediadesk'));

describe('a workflow app run', () => {
  it("carries the local image's metadata and how the run made it, in XMP and in the record beside it", async () => {
    const { core, home } = await openCore({ provenanceSidecar: true });
    const photo = await cameraPhoto(join(home, 'in', 'product.jpg'));
    const out = join(home, 'app-out');
    const run = await runApp(core, {
      appId: 'pS7kQ2xa',
      confirmedCost: 12,
      inputs: { product_image: photo, scene: 'a marble table at dawn', variations: 1, style: 'studio' },
      outDir: out,
    });
    expect([run.state, run.error]).toEqual(['done', null]);
    const [result] = run.outputs;
    const tags = await readTags(result);
    const def = await call(core, 'apps.get', { id: 'pS7kQ2xa' });
    expect(tags['XMP-mediadesk:Origin']).toBe('app');
    expect(tags['XMP-mediadesk:Tool']).toBe('pS7kQ2xa');
    expect(tags['XMP-mediadesk:ToolTitle']).toBe(def.name);
    expect(tags['XMP-mediadesk:ModelPath']).toBe('/v1/ai/flows/pS7kQ2xa/run');
    expect(tags['XMP-mediadesk:TaskId']).toBe(run.runId);
    expect(tags['XMP-mediadesk:AppVersion']).toBe(APP_VERSION);
    expect(tags['XMP-mediadesk:SourceFile']).toBe('product.jpg');
    // The image went to the service inline; the record names the file, never its bytes or folders.
    expect(JSON.parse(String(tags['XMP-mediadesk:Parameters']))).toEqual({
      product_image: 'product.jpg',
      scene: 'a marble table at dawn',
      variations: 1,
      style: 'studio',
    });
    // The local image is the source: its camera and colour profile are kept.
    expect(tags['IFD0:Make']).toBe('Canon');
    expect(tags['ICC_Profile:ProfileDescription']).toBe('sP3C');
    const sidecar = JSON.parse(readFileSync(sidecarPathOf(result), 'utf8'));
    expect(sidecar).toMatchObject({
      origin: 'app',
      tool: 'pS7kQ2xa',
      taskId: run.runId,
      source: 'product.jpg',
      result: basename(result),
    });
    expect(readdirSync(out).sort()).toEqual([basename(result), basename(sidecarPathOf(result))].sort());
  });
});

describe('an app run stopped after placing its result with metadata, before recording it', () => {
  it('is recognised by that copy: recorded once, with no second file and nothing left beside it', async () => {
    const { core, home } = await openCore();
    const photo = await cameraPhoto(join(home, 'in', 'product.jpg'));
    const out = join(home, 'app-out');
    const run = await runApp(core, {
      appId: 'pS7kQ2xa',
      confirmedCost: 12,
      inputs: { product_image: photo, scene: 'once', variations: 1 },
      outDir: out,
    });
    const [result] = run.outputs;
    // As a killed process leaves things: the part as downloaded, the copy linked at the result's name.
    const { part, twin } = runParts(core.apps.store.get(run.id)!, result);
    writeFileSync(part, 'the part as downloaded');
    linkSync(result, twin);
    core.apps.store.db.prepare("UPDATE app_runs SET state = 'downloading', outputs = '[]' WHERE id = ?").run(run.id);
    core.apps.runner.kick();
    await until(() => core.apps.one(run.id).state === 'done', { what: 'the run done again' });
    expect([core.apps.one(run.id).outputs, core.apps.one(run.id).error]).toEqual([[result], null]);
    expect(readdirSync(out)).toEqual([basename(result)]);
    expect((await readTags(result))['IFD0:Make']).toBe('Canon');
  });
});

describe('a recent creation downloaded', () => {
  it('carries what the service says of how it was made: its tool, id and date; nothing of a source', async () => {
    const { core, home } = await openCore();
    const made = await runTool(core, 'context-t2i', { prompt: 'a lighthouse at dusk' }, join(home, 'made'));
    expect(made.state).toBe('done');
    const page = await call(core, 'creations.list', { page: 1, perPage: 20 });
    const creation = page.items.find((c) => c.id === made.taskId)!;
    expect(creation.toolName).toBe('context-t2i');
    const { path } = await call(core, 'creations.download', { id: creation.id });
    const tags = await readTags(path);
    expect(tags['XMP-mediadesk:Origin']).toBe('creation');
    expect(tags['XMP-mediadesk:Tool']).toBe('context-t2i');
    expect(tags['XMP-mediadesk:ToolTitle']).toBe('Context-guided text to image');
    expect(tags['XMP-mediadesk:TaskId']).toBe(creation.id);
    expect(String(tags['XMP-mediadesk:MadeAt'])).toBe(
      creation.createdAt!.replace(/^(\d{4})-(\d\d)-(\d\d)T/, '$1:$2:$3 '),
    );
    // The service does not say which model made it, nor with what.
    expect(tags['XMP-mediadesk:ModelPath']).toBeUndefined();
    expect(tags['XMP-mediadesk:SourceFile']).toBeUndefined();
    // No sidecar unless asked, and no part or copy left behind.
    expect(readdirSync(dirname(path))).toEqual([basename(path)]);
  });
});

describe('video and audio results', () => {
  it('an MP4 carries the provenance XMP and still reads as the same video; an MP3 gets the record beside it', async () => {
    const { core, home } = await openCore({ provenanceSidecar: true });
    const video = await runTool(core, 'lite-t2v', { prompt: 'waves on a beach' }, join(home, 'video'));
    expect([video.state, video.error]).toEqual(['done', null]);
    const [mp4] = video.outputs;
    expect(mp4).toMatch(/\.mp4$/);
    const tags = await readTags(mp4);
    expect(tags['XMP-mediadesk:Origin']).toBe('tool');
    expect(tags['XMP-mediadesk:Tool']).toBe('lite-t2v');
    expect(tags['XMP-mediadesk:TaskId']).toBe(video.taskId);
    expect(JSON.parse(String(tags['XMP-mediadesk:Parameters']))).toMatchObject({ prompt: 'waves on a beach' });
    const served = await readTags(VIDEO_ASSET);
    for (const k of ['QuickTime:Duration', 'Track1:ImageWidth', 'Track1:ImageHeight'])
      expect([k, tags[k]]).toEqual([k, served[k]]);
    expect(JSON.parse(readFileSync(sidecarPathOf(mp4), 'utf8'))).toMatchObject({ tool: 'lite-t2v' });

    // exiftool cannot write MP3: the file stays as served, the record beside it says how it was made.
    const music = await runTool(
      core,
      'music',
      { prompt: 'calm piano at dusk', music_length_seconds: 30 },
      join(home, 'music'),
    );
    expect([music.state, music.error]).toEqual(['done', null]);
    const [mp3] = music.outputs;
    expect(mp3).toMatch(/\.mp3$/);
    expect(readFileSync(mp3).equals(readFileSync(AUDIO_ASSET))).toBe(true);
    expect(PROVENANCE_TAGS(await readTags(mp3))).toEqual([]);
    expect(JSON.parse(readFileSync(sidecarPathOf(mp3), 'utf8'))).toMatchObject({
      origin: 'tool',
      tool: 'music',
      taskId: music.taskId,
      parameters: { prompt: 'calm piano at dusk', music_length_seconds: 30 },
      result: basename(mp3),
    });
  });

  it('a video exiftool cannot write is kept as downloaded: the job is done, says so, and the log warns', async () => {
    const { core, home } = await openCore();
    await control(at.url, 'faults', { damagedMedia: true });
    try {
      const job = await runTool(core, 'lite-t2v', { prompt: 'a damaged take' }, join(home, 'video'));
      expect(job.state).toBe('done');
      expect(job.error).toMatch(/^saved; how it was made could not be recorded in it: .+/);
      const [mp4] = job.outputs;
      expect(readFileSync(mp4, 'utf8')).toBe('not a playable file');
      expect(readdirSync(join(home, 'video'))).toEqual([basename(mp4)]);
      const logged = await until(
        () =>
          existsSync(core.log.file) &&
          readFileSync(core.log.file, 'utf8').includes(basename(mp4)) &&
          readFileSync(core.log.file, 'utf8'),
        { what: 'the log line', timeout: 5000 },
      );
      expect(logged).toContain(`${basename(mp4)} saved; how it was made could not be recorded in it`);
    } finally {
      await control(at.url, 'faults', { damagedMedia: false });
    }
  });
});

describe('with every metadata setting off', () => {
  it('app results, creations and videos are saved as downloaded, with nothing beside them', async () => {
    const { core, home } = await openCore({ keepMetadata: false, writeProvenance: false, provenanceSidecar: false });
    const photo = await cameraPhoto(join(home, 'in', 'product.jpg'));
    const run = await runApp(core, {
      appId: 'pS7kQ2xa',
      confirmedCost: 12,
      inputs: { product_image: photo, scene: 'plain', variations: 1 },
      outDir: join(home, 'app-out'),
    });
    const video = await runTool(core, 'lite-t2v', { prompt: 'plain waves' }, join(home, 'video'));
    const page = await call(core, 'creations.list', { page: 1, perPage: 20 });
    const { path: creation } = await call(core, 'creations.download', {
      id: page.items.find((c) => c.id === video.taskId)!.id,
    });
    expect([run.state, video.state]).toEqual(['done', 'done']);
    for (const file of [run.outputs[0], video.outputs[0], creation]) {
      const tags = await readTags(file);
      expect([file, PROVENANCE_TAGS(tags), tags['IFD0:Make'], tags['XMP-xmp:CreatorTool']]).toEqual([
        file,
        [],
        undefined,
        undefined,
      ]);
      expect(readdirSync(dirname(file))).toEqual([basename(file)]);
    }
    expect(readFileSync(video.outputs[0]).equals(readFileSync(VIDEO_ASSET))).toBe(true);
    expect(readFileSync(creation).equals(readFileSync(VIDEO_ASSET))).toBe(true);
  });
});
