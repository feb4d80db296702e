import { describe, expect, it } from 'vitest';
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { exifReader } from './exif-reader.ts';
import { engineFor, engineSuite, settle } from './helpers.ts';
import { startSandbox } from '../../electron/sandbox/index.ts';
import { cliEnv, runCli } from '../cli.ts';
import { ResultMetadata, provenanceOf, sidecarPathOf } from '../../electron/core/metadata/result-metadata.ts';
import { DEFAULT_SETTINGS, type Settings } from '../../shared/settings.ts';
import { until } from '../wait.ts';
import { APP_VERSION } from '../../electron/core/app-version.ts';

const sb = engineSuite('meta', 100);

const readTags = exifReader();

/** A camera photo as a phone stores it: landscape pixels turned by EXIF 6, a P3 profile, camera and date. */
async function cameraPhoto(path: string, format: 'jpeg' | 'png' = 'jpeg'): Promise<string> {
  mkdirSync(join(path, '..'), { recursive: true });
  const img = sharp({ create: { width: 60, height: 40, channels: 3, background: { r: 120, g: 160, b: 60 } } })
    .composite([
      {
        input: { create: { width: 20, height: 40, channels: 3, background: { r: 250, g: 20, b: 20 } } },
        left: 0,
        top: 0,
      },
    ])
    .withMetadata({ orientation: 6, icc: 'p3' })
    .withExif({
      IFD0: { Make: 'Canon', Model: 'EOS R5' },
      IFD2: { DateTimeOriginal: '2024:05:06 07:08:09' },
    });
  await (format === 'jpeg' ? img.jpeg() : img.png()).toFile(path);
  return path;
}

function setup() {
  const dir = sb.folder();
  return { home: join(dir, 'home'), input: join(dir, 'in'), out: join(dir, 'out') };
}

async function upscale(settings: Partial<Settings>, input: string, out: string, home: string) {
  const e = sb.engine(home, { settings });
  const r = await e.startBatch({
    tool: 'upscaler-precision',
    inputs: [input],
    params: { scale_factor: 2 },
    outDir: out,
  });
  e.start();
  await settle(e, r.jobIds);
  const [job] = e.store.byIds(r.jobIds);
  expect(job.state).toBe('done');
  return job;
}

describe('a result keeps its source metadata and says how it was made', () => {
  it('copies camera, date and colour profile into an upscaled result, shows it upright, and records the job in XMP', async () => {
    const { home, input, out } = setup();
    await cameraPhoto(join(input, 'beach.jpg'));
    const job = await upscale({}, input, out, home);
    expect(job.error).toBeNull();
    const [result] = job.outputs;
    // The Sandbox returns a PNG, its pixels already turned upright (shown 40x60, doubled).
    expect(result.endsWith('.png')).toBe(true);
    const tags = await readTags(result);
    expect([tags['PNG:ImageWidth'], tags['PNG:ImageHeight']]).toEqual([80, 120]);
    // Copying the source's 6 would turn the upright pixels a second time: the result says normal.
    expect(tags['IFD0:Orientation']).toBe(1);
    expect(tags['IFD0:Make']).toBe('Canon');
    expect(tags['IFD0:Model']).toBe('EOS R5');
    expect(String(tags['ExifIFD:DateTimeOriginal'])).toBe('2024-05-06T07:08:09');
    expect(tags['ICC_Profile:ProfileDescription']).toBe('sP3C');
    expect(tags['XMP-mediadesk:Tool']).toBe('upscaler-precision');
    expect(tags['XMP-mediadesk:ToolTitle']).toBe('Precision upscaler');
    expect(tags['XMP-mediadesk:TaskId']).toBe(job.taskId);
    expect(String(tags['XMP-mediadesk:ModelPath'])).toMatch(/^\/v1\/ai\//);
    expect(JSON.parse(String(tags['XMP-mediadesk:Parameters']))).toMatchObject({ scale_factor: 2 });
    expect(tags['XMP-mediadesk:SourceFile']).toBe('beach.jpg');
    expect(tags['XMP-mediadesk:AppVersion']).toBe(APP_VERSION);
    expect(tags['XMP-xmp:CreatorTool']).toBe(`MediaDesk ${APP_VERSION}`);
    // No part or metadata copy left behind, and no sidecar unless asked.
    expect(readdirSync(out)).toEqual(['beach_upscaler-precision.png']);
  });

  it("keeps a PNG source's metadata too, and writes the JSON record beside the result when asked", async () => {
    const { home, input, out } = setup();
    await cameraPhoto(join(input, 'shot.png'), 'png');
    const job = await upscale({ provenanceSidecar: true }, input, out, home);
    expect(job.error).toBeNull();
    const [result] = job.outputs;
    const tags = await readTags(result);
    expect(tags['IFD0:Make']).toBe('Canon');
    expect(tags['ICC_Profile:ProfileDescription']).toBe('sP3C');
    const sidecar = JSON.parse(readFileSync(sidecarPathOf(result), 'utf8'));
    expect(sidecar).toMatchObject({
      tool: 'upscaler-precision',
      toolTitle: 'Precision upscaler',
      modelPath: tags['XMP-mediadesk:ModelPath'],
      parameters: { scale_factor: 2 },
      taskId: job.taskId,
      appVersion: APP_VERSION,
      source: 'shot.png',
      result: 'shot_upscaler-precision.png',
    });
    // One date in both: exiftool shows an XMP date its own way (2024:05:06 07:08:09.123Z).
    expect(sidecar.madeAt.replace(/^(\d{4})-(\d\d)-(\d\d)T/, '$1:$2:$3 ')).toBe(tags['XMP-mediadesk:MadeAt']);
  });

  it('copies nothing and records nothing with both settings off', async () => {
    const { home, input, out } = setup();
    await cameraPhoto(join(input, 'beach.jpg'));
    const job = await upscale({ keepMetadata: false, writeProvenance: false }, input, out, home);
    const tags = await readTags(job.outputs[0]);
    expect(tags['IFD0:Make']).toBeUndefined();
    expect(tags['ExifIFD:DateTimeOriginal']).toBeUndefined();
    expect(tags['ICC_Profile:ProfileDescription']).toBeUndefined();
    expect(tags['XMP-mediadesk:Tool']).toBeUndefined();
    expect(tags['XMP-xmp:CreatorTool']).toBeUndefined();
    expect(existsSync(sidecarPathOf(job.outputs[0]))).toBe(false);
  });

  it('records how it was made without the source metadata, and the other way round', async () => {
    const { home, input, out } = setup();
    await cameraPhoto(join(input, 'beach.jpg'));
    const provenanceOnly = await upscale({ keepMetadata: false }, input, join(out, 'a'), home);
    const a = await readTags(provenanceOnly.outputs[0]);
    expect(a['IFD0:Make']).toBeUndefined();
    expect(a['XMP-mediadesk:TaskId']).toBe(provenanceOnly.taskId);
    const metadataOnly = await upscale({ writeProvenance: false }, input, join(out, 'b'), home);
    const b = await readTags(metadataOnly.outputs[0]);
    expect(b['IFD0:Make']).toBe('Canon');
    expect(b['XMP-mediadesk:Tool']).toBeUndefined();
  });

  it('keeps the result and says plainly what was not copied when the source changed meanwhile', async () => {
    // Tasks that take a while, so the source can change after its upload and before the result.
    const slow = await startSandbox({ port: 0, taskDurationMs: 1500 });
    const { home, input, out } = setup();
    const photo = await cameraPhoto(join(input, 'beach.jpg'));
    const e = engineFor(home, slow.url);
    try {
      const r = await e.startBatch({ tool: 'upscaler-precision', inputs: [input], params: {}, outDir: out });
      e.start();
      await until(() => e.store.byIds(r.jobIds)[0].state === 'running', { what: 'the job running' });
      writeFileSync(photo, 'no longer a photo');
      await settle(e, r.jobIds);
      const [job] = e.store.byIds(r.jobIds);
      expect(job.state).toBe('done');
      expect(job.error).toBe('saved; its metadata could not be copied: the source beach.jpg is no longer an image');
      // The result is kept, and still says how it was made.
      const tags = await readTags(job.outputs[0]);
      expect(tags['XMP-mediadesk:TaskId']).toBe(job.taskId);
      expect(tags['IFD0:Make']).toBeUndefined();
      expect(readdirSync(out)).toEqual(['beach_upscaler-precision.png']);
    } finally {
      await e.close();
      await slow.close();
    }
  });
});

describe('a crash after the copy with metadata was placed', () => {
  it('is recognised by that copy: the result is recorded once, with no second file and nothing left beside it', async () => {
    const { home, input, out } = setup();
    await cameraPhoto(join(input, 'beach.jpg'));
    const job = await upscale({}, input, out, home);
    const [result] = job.outputs;
    // As a process killed between placing the copy and recording it leaves things: the part as
    // downloaded, the copy linked at the result's name, the job still downloading with no output.
    writeFileSync(`${result}.part`, 'the part as downloaded');
    linkSync(result, `${result}.meta`);
    const e = sb.engine(home);
    e.store.db.prepare("UPDATE jobs SET state = 'downloading', outputs = '[]' WHERE id = ?").run(job.id);
    e.start();
    await settle(e, [job.id]);
    const [again] = e.store.byIds([job.id]);
    expect([again.state, again.outputs, again.error]).toEqual(['done', [result], null]);
    expect(readdirSync(out)).toEqual(['beach_upscaler-precision.png']);
    expect((await readTags(result))['IFD0:Make']).toBe('Canon');
  });
});

describe('mediadesk run', () => {
  it('--no-metadata and --sidecar apply to that run: no EXIF copied, the record beside the result', async () => {
    const { home, input, out } = setup();
    await cameraPhoto(join(input, 'beach.jpg'));
    const r = await runCli(['run', 'upscaler-precision', input, '--out', out, '--no-metadata', '--sidecar'], {
      env: cliEnv(home, sb.url),
    });
    expect(r.code).toBe(0);
    const result = join(out, 'beach_upscaler-precision.png');
    const tags = await readTags(result);
    expect(tags['IFD0:Make']).toBeUndefined();
    expect(tags['XMP-mediadesk:Tool']).toBe('upscaler-precision');
    expect(JSON.parse(readFileSync(sidecarPathOf(result), 'utf8'))).toMatchObject({ tool: 'upscaler-precision' });
    // The settings themselves are unchanged: the next run copies the metadata again.
    const again = await runCli(['run', 'upscaler-precision', input, '--out', join(out, 'again'), '--no-provenance'], {
      env: cliEnv(home, sb.url),
    });
    expect(again.code).toBe(0);
    const next = await readTags(join(out, 'again', 'beach_upscaler-precision.png'));
    expect(next['IFD0:Make']).toBe('Canon');
    expect(next['XMP-mediadesk:Tool']).toBeUndefined();
  });
});

describe('ResultMetadata on its own', () => {
  it("copies the source's orientation when the service returned the pixels as stored", async () => {
    const dir = sb.folder();
    const source = await cameraPhoto(join(dir, 'src.jpg'));
    // The pixels as stored (60x40, not turned), doubled: they still need the source's turn.
    const result = join(dir, 'result.png.part');
    await sharp(source).resize(120, 80).png().toFile(result);
    const meta = new ResultMetadata();
    try {
      const provenance = provenanceOf({
        tool: 'upscaler-precision',
        toolTitle: 'Precision upscaler',
        modelPath: '/v1/ai/image-upscaler-precision-v2',
        params: { scale_factor: 2, reference: join(dir, 'private', 'ref.png') },
        taskId: 't-1',
        inputPath: source,
      });
      const into = join(dir, 'result.png.meta');
      const done = await meta.writeInto(result, into, {
        final: join(dir, 'result.png'),
        source,
        provenance,
        settings: DEFAULT_SETTINGS,
      });
      expect(done).toEqual({ written: true, problem: null });
      const tags = await readTags(into);
      expect(tags['IFD0:Orientation']).toBe(6);
      expect(tags['ICC_Profile:ProfileDescription']).toBe('sP3C');
      // A local file is named without its folders.
      expect(JSON.parse(String(tags['XMP-mediadesk:Parameters']))).toEqual({ scale_factor: 2, reference: 'ref.png' });
    } finally {
      await meta.end();
    }
  });

  it('writes results finishing together in shared calls, each with its own source and record', async () => {
    const dir = sb.folder();
    // With XMP of their own: what only exiftool copies (a camera's plain EXIF is written in process).
    const camera = async (path: string, make: string) => {
      mkdirSync(join(path, '..'), { recursive: true });
      await sharp({ create: { width: 30, height: 20, channels: 3, background: '#6a8' } })
        .withExif({ IFD0: { Make: make, Model: 'M' } })
        .withXmp(
          `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">` +
            `<rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmp:Rating="3"/></rdf:RDF></x:xmpmeta>`,
        )
        .jpeg()
        .toFile(path);
      return path;
    };
    // Two results of one name in two folders, and a video exiftool cannot write among them.
    const jobs = await Promise.all(
      ['a/photo', 'b/photo', 'c/one', 'c/two', 'c/three', 'c/four'].map(async (name, i) => {
        const source = await camera(join(dir, 'in', `${name}.jpg`), `Make ${i}`);
        const result = join(dir, 'out', `${name}.png.part`);
        mkdirSync(join(result, '..'), { recursive: true });
        await sharp({ create: { width: 8, height: 8, channels: 3, background: '#123' } })
          .png()
          .toFile(result);
        return { result, final: result.replace(/\.part$/, ''), source, taskId: `t-${i}` };
      }),
    );
    const video = join(dir, 'out', 'c', 'take.mp4.part');
    writeFileSync(video, 'not a playable file');
    jobs.push({ result: video, final: video.replace(/\.part$/, ''), source: null!, taskId: 't-video' });
    const meta = new ResultMetadata({ warn: () => undefined });
    try {
      const done = await Promise.all(
        jobs.map((j) =>
          meta.writeInto(j.result, j.final + '.meta', {
            final: j.final,
            source: j.source,
            settings: DEFAULT_SETTINGS,
            provenance: provenanceOf({
              tool: 'upscaler-precision',
              toolTitle: 'Precision upscaler',
              modelPath: '/v1/ai/image-upscaler-precision-v2',
              params: {},
              taskId: j.taskId,
              inputPath: j.source,
            }),
          }),
        ),
      );
      expect(meta.writtenInProcess).toBe(0);
      expect(meta.exiftoolCalls).toBeLessThan(jobs.length);
      for (const [i, j] of jobs.slice(0, -1).entries()) {
        expect(done[i]).toEqual({ written: true, problem: null });
        const tags = await readTags(j.final + '.meta');
        expect(tags['IFD0:Make']).toBe(`Make ${i}`);
        expect(tags['XMP-mediadesk:TaskId']).toBe(j.taskId);
        expect(tags['XMP-mediadesk:SourceFile']).toBe(j.source.split('/').pop());
      }
      expect(done.at(-1)).toEqual({
        written: false,
        problem: expect.stringMatching(/^how it was made could not be recorded in it: .+/),
      });
      expect(existsSync(`${video.replace(/\.part$/, '')}.meta`)).toBe(false);
      expect(readFileSync(video, 'utf8')).toBe('not a playable file');
    } finally {
      await meta.end();
    }
  });
});
