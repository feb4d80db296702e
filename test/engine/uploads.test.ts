import { truncateSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeClip } from '../media/fixtures.ts';
import { control, creates, engineFor, engineSuite, settle } from './helpers.ts';

/** Local files that travel as Sandbox uploads (the video upscaler's video): what a job says when the upload does not go through. */
const suite = engineSuite('uploads', 100);

async function videoBatch(url: string | null) {
  const dir = suite.folder();
  const clip = await makeClip(dir, 'reference', { w: 640, h: 640, fps: 24, sec: 2.5 });
  const e = url ? engineFor(join(dir, 'home'), url) : suite.engine(join(dir, 'home'));
  const r = await e.startBatch({
    tool: 'video-upscaler',
    inputs: [clip],
    params: { enhancement_model: 'starlight_precise_2_5' },
    outDir: join(dir, 'out'),
  });
  return { e, r, clip };
}

describe('uploads of local inputs', () => {
  it('a Sandbox that cannot be reached: the job stays queued, saying why it waits and that nothing was charged', async () => {
    // A port nothing listens on: the upload's connection is refused.
    const closed = createServer();
    await new Promise<void>((res) => closed.listen(0, '127.0.0.1', res));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((res) => closed.close(res));
    const { e, r } = await videoBatch(`http://127.0.0.1:${port}`);
    try {
      e.start();
      // No timed assertion: waits for the engine to record why (the test's timeout bounds it).
      while (!e.job(r.jobIds[0]).error) await new Promise((res) => setTimeout(res, 20));
      expect(e.job(r.jobIds[0])).toMatchObject({
        state: 'queued',
        error:
          'Waiting: cannot reach the server: it refused the connection (ECONNREFUSED). It is sent again by itself; nothing was charged.',
      });
    } finally {
      await e.close();
    }
  });

  it('an input emptied since it was queued fails the job before its upload, naming the file, unpaid', async () => {
    const { e, r, clip } = await videoBatch(null);
    // Checked when queued; a sync or an editor empties it before the engine sends it.
    truncateSync(clip, 0);
    e.start();
    await settle(e, r.jobIds);
    expect(e.job(r.jobIds[0])).toMatchObject({
      state: 'failed',
      error: `The input ${clip} is empty (checked again before sending); nothing was sent or paid. Restore or fix the file, then Retry (or Cancel the job).`,
      invalid: [{ field: 'video', reason: expect.stringContaining(clip) }],
    });
    expect(creates(await control(suite.url, 'stats'))).toBe(0);
  });
});
