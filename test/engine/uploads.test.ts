import { truncateSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeClip } from '../media/fixtures.ts';
import { control, creates, engineFor, engineSuite, settle } from './helpers.ts';

/** Local files that travel as Sandbox uploads (reference videos): what a job says when the upload does not go through. */
const suite = engineSuite('uploads', 100);

async function videoBatch(url: string | null) {
  const dir = suite.folder();
  // Within the reference-video limits the batch measures (2-15 s, 24-60 fps, at least 409,600 pixels).
  const clip = await makeClip(dir, 'reference', { w: 640, h: 640, fps: 24, sec: 2.5 });
  const e = url ? engineFor(join(dir, 'home'), url) : suite.engine(join(dir, 'home'));
  const r = await e.startBatch({
    tool: 'video-2x',
    params: { prompt: 'a walk, like @Video1', reference_videos: [clip] },
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

  it('an upload the Sandbox refuses for good (the file emptied since it was queued) fails the job, naming the file and the answer, unpaid', async () => {
    const { e, r, clip } = await videoBatch(null);
    // Checked when queued; a sync or an editor empties it before the engine sends it.
    truncateSync(clip, 0);
    e.start();
    await settle(e, r.jobIds);
    expect(e.job(r.jobIds[0])).toMatchObject({
      state: 'failed',
      error: `The server refused the upload of the input ${clip} (HTTP 400 Your request parameters didn't validate: body must be the raw file bytes); no task was created and nothing was paid. Fix or replace the file, then Retry (or Cancel the job).`,
      invalid: [{ field: 'reference_videos', reason: expect.stringContaining(clip) }],
    });
    expect(creates(await control(suite.url, 'stats'))).toBe(0);
  });
});
