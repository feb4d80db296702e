import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, truncateSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeClip } from '../media/fixtures.ts';
import { BIN, cliEnv, runCli } from '../cli.ts';
import { until } from '../wait.ts';
import { control, creates, engineFor, engineSuite, makeImages, settle } from './helpers.ts';

/**
 * Local files for URL-only fields travel through the service's upload flow, as the Sandbox serves
 * it: request-url (with the key), PUT to the signed URL (without it), the asset URL in the create.
 */
const suite = engineSuite('uploads', 100);

const REQUEST_URL = 'POST /v1/ai/uploads/request-url';
const PUT = 'PUT /storage/uploads/:fileId';
const stats = () => control(suite.url, 'stats');
/** What the client sent in a task's create, as the Sandbox received it. */
const sentOf = async (taskId: string | null) => (await control(suite.url, `tasks/${taskId}`)).sent;

/** Every request a client made: none names a Sandbox-only path, and the flow's three steps are there. */
async function expectOnlyServicePaths() {
  const { requests } = (await control(suite.url, 'requests')) as { requests: string[] };
  expect(requests.filter((r) => r.includes('__sandbox'))).toEqual([]);
  expect(requests.some((r) => r === 'POST /v1/ai/uploads/request-url')).toBe(true);
  expect(requests.some((r) => r.startsWith('PUT /storage/uploads/upl_'))).toBe(true);
}

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

async function cameraBatch(home: string, input: string, out: string) {
  const e = suite.engine(home);
  const r = await e.startBatch({ tool: 'change-camera', inputs: [input], params: { zoom: 3 }, outDir: out });
  e.start();
  await settle(e, r.jobIds);
  return { e, r };
}

describe('uploads of local inputs', () => {
  it('a Change camera batch over a folder of local images: each uploaded (PUT without the key), its asset URL in the create', async () => {
    const dir = suite.folder();
    await makeImages(join(dir, 'in'), ['a.png', 'b.png', 'c.png'], 300);
    const { e, r } = await cameraBatch(join(dir, 'home'), join(dir, 'in'), join(dir, 'out'));
    const jobs = e.store.byIds(r.jobIds);
    expect(jobs.map((j) => j.state)).toEqual(['done', 'done', 'done']);
    const s = await stats();
    expect(s.requests[REQUEST_URL]).toBe(3);
    expect(s.requests[PUT]).toBe(3);
    // The Sandbox refuses a PUT that carries a key: all three were stored, none refused.
    expect(s.uploads).toEqual({ stored: 3, refused: {} });
    expect(creates(s)).toBe(3);
    // The Sandbox fetched each asset URL a create named (without a key), and stored the very bytes of each input.
    expect(s.requests['GET /uploads/:fileId']).toBe(3);
    for (const j of jobs) {
      const sha = createHash('sha256').update(readFileSync(j.inputPath!)).digest('hex');
      expect((await sentOf(j.taskId)).image).toBe(`inp_${sha.slice(0, 24)}`);
    }
    await expectOnlyServicePaths();
  });

  it('a video-upscaler job from a local MP4 runs end to end through the upload flow', async () => {
    const dir = suite.folder();
    const clip = await makeClip(dir, 'clip', { w: 640, h: 360, fps: 24, sec: 2 });
    const e = suite.engine(join(dir, 'home'));
    const r = await e.startBatch({
      tool: 'video-upscaler',
      inputs: [clip],
      params: { enhancement_model: 'starlight_fast_2' },
      outDir: join(dir, 'out'),
    });
    e.start();
    await settle(e, r.jobIds);
    const job = e.job(r.jobIds[0]);
    expect(job.state).toBe('done');
    expect((await sentOf(job.taskId)).video).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/uploads\/upl_vid_[0-9a-f]+\?expires=\d+&signature=[0-9a-f]+$/,
    );
    expect((await stats()).uploads).toEqual({ stored: 1, refused: {} });
    await expectOnlyServicePaths();
  });

  it('a PUT that fails is retried without a second create; nothing is created before the file is stored', async () => {
    const dir = suite.folder();
    await makeImages(join(dir, 'in'), ['one.png'], 300);
    await control(suite.url, 'faults', { failPuts: 1 });
    const { e, r } = await cameraBatch(join(dir, 'home'), join(dir, 'in'), join(dir, 'out'));
    expect(e.job(r.jobIds[0]).state).toBe('done');
    const s = await stats();
    expect(s.uploads).toEqual({ stored: 1, refused: { fault: 1 } });
    expect(s.requests[PUT]).toBe(2);
    expect(creates(s)).toBe(1);
  });

  it('an upload is recorded and reused while its asset URL lasts; one that may expire before the create is asked for again', async () => {
    const dir = suite.folder();
    const [img] = await makeImages(join(dir, 'in'), ['same.png'], 300);
    const dayLong = join(dir, 'home-day');
    const first = await cameraBatch(dayLong, img, join(dir, 'out1'));
    // A day left: the second batch of the same file sends the recorded asset URL.
    const second = await cameraBatch(dayLong, img, join(dir, 'out2'));
    expect(second.e.job(second.r.jobIds[0]).state).toBe('done');
    expect((await stats()).requests[REQUEST_URL]).toBe(1);
    // Asset URLs that last a minute from now on: less than the margin a task waiting at the service needs.
    await control(suite.url, 'faults', { assetUrlExpiresInSec: 60 });
    const minuteLong = join(dir, 'home-minute');
    await cameraBatch(minuteLong, img, join(dir, 'out3'));
    const fourth = await cameraBatch(minuteLong, img, join(dir, 'out4'));
    expect(fourth.e.job(fourth.r.jobIds[0]).state).toBe('done');
    const s = await stats();
    expect(s.requests[REQUEST_URL]).toBe(3);
    expect(s.uploads.stored).toBe(3);
    expect(creates(s)).toBe(4);
    expect(first.e.job(first.r.jobIds[0]).state).toBe('done');
  });

  it('a kill between the upload and the create: the next run creates once, the job is done', async () => {
    const dir = suite.folder();
    await makeImages(join(dir, 'in'), ['k.png'], 300);
    const env = cliEnv(join(dir, 'home'), suite.url);
    const args = ['run', 'change-camera', join(dir, 'in'), '--out', join(dir, 'out'), '-p', 'zoom=3'];
    // The Sandbox stores the bytes and holds the PUT's answer: the upload is done, the client not told.
    await control(suite.url, 'faults', { putAnswerDelayMs: 60_000 });
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: 'ignore' });
    const exited = new Promise((res) => child.once('exit', res));
    await until(async () => (await stats()).uploads.stored >= 1, { what: 'the upload stored' });
    child.kill('SIGKILL');
    await exited;
    expect(creates(await stats())).toBe(0);
    await control(suite.url, 'faults', { putAnswerDelayMs: 0 });
    const again = await runCli(args, { env });
    expect(again.code, again.err).toBe(0);
    expect(creates(await stats())).toBe(1);
  });

  it('a Sandbox that cannot be reached: the job stays queued, saying why it waits and that nothing was charged', async () => {
    // A port nothing listens on: the upload's connection is refused.
    const closed = createServer();
    await new Promise<void>((res) => closed.listen(0, '127.0.0.1', res));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((res) => closed.close(res));
    const { e, r } = await videoBatch(`http://127.0.0.1:${port}`);
    try {
      e.start();
      await until(() => e.job(r.jobIds[0]).error, { what: 'why the job waits' });
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
    expect(creates(await stats())).toBe(0);
  });
});

describe("the Sandbox's upload host, as the service's", () => {
  const ask = async (contentType = 'image/png') => {
    const res = await fetch(`${suite.url}/v1/ai/uploads/request-url`, {
      method: 'POST',
      headers: { 'x-magnific-api-key': 'sandbox-owner', 'content-type': 'application/json' },
      body: JSON.stringify({ files: [{ content_type: contentType }] }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { files: Record<string, any>[] }).files[0];
  };
  const png = Buffer.from('89504e470d0a1a0a', 'hex');

  it('answers request-url as documented, and validates it against the reference', async () => {
    const f = await ask();
    expect(f).toMatchObject({ expires_in: 120, asset_url_expires_in: 86_400, file_id: expect.stringMatching(/^upl_/) });
    expect(f.headers['Content-Type']).toBe('image/png');
    const bad = await fetch(`${suite.url}/v1/ai/uploads/request-url`, {
      method: 'POST',
      headers: { 'x-magnific-api-key': 'sandbox-owner', 'content-type': 'application/json' },
      body: JSON.stringify({ files: [] }),
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain('must have at least 1 item');
  });

  it('a PUT with an API key, with changed headers or with no signature is refused; the asset is not there until stored', async () => {
    const f = await ask();
    const put = (headers: Record<string, string>, url = f.upload_url) =>
      fetch(url, { method: 'PUT', headers, body: png }).then((r) => r.status);
    expect(await put({ ...f.headers, 'x-magnific-api-key': 'sandbox-owner' })).toBe(403);
    expect(await put({ ...f.headers, 'Content-Type': 'image/jpeg' })).toBe(403);
    expect(await put(f.headers, f.upload_url.replace(/signature=\w+/, 'signature=00'))).toBe(403);
    expect((await fetch(f.asset_url)).status).toBe(404);
    expect(await put(f.headers)).toBe(200);
    expect((await fetch(f.asset_url)).status).toBe(200);
    expect((await stats()).uploads.refused).toEqual({ api_key: 1, headers: 1, signature: 1 });
    // The control API expires every asset URL handed out so far.
    expect((await control(suite.url, 'assets/expire', {})).expired).toBeGreaterThan(0);
    expect((await fetch(f.asset_url)).status).toBe(410);
  });
});
