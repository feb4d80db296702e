import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeClip } from '../media/fixtures.ts';
import { engineSuite, settle } from './helpers.ts';

/** The one naming rule of results, for jobs whose input sits in their parameters rather than a batch. */
const suite = engineSuite('result-names', 100);

describe('results of a job whose input is one of its parameters', () => {
  it("a video upscaled from the Video screen (no batch input) is named after the video, not after the job's id", async () => {
    const dir = suite.folder();
    const clip = await makeClip(dir, 'beach walk', { w: 640, h: 360, fps: 24, sec: 1 });
    const e = suite.engine(join(dir, 'home'));
    const r = await e.startBatch({
      tool: 'video-upscaler',
      params: { video: clip, enhancement_model: 'starlight_fast_2', resolution: '1k' },
      outDir: join(dir, 'out'),
    });
    e.start();
    await settle(e, r.jobIds);
    const job = e.job(r.jobIds[0]);
    expect(job.state).toBe('done');
    expect(basename(job.outputs[0])).toBe('beach walk_video-upscaler.mp4');
  });
});
