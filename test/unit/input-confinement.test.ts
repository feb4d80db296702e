// Inputs a page names are the person's own (shared/contract/paths.ts, `input`): a page of the web
// host (its token holder, or a compromised renderer) cannot have any file on the disk sent to the
// service, nor served back through /media. Real web host, real Sandbox, real files.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { startWebHost } from '../../electron/host/web/server.ts';
import { PathPolicy } from '../../electron/core/path-policy.ts';
import { CHOSEN_CHANNEL, chosenPath } from '../../electron/main/policy.ts';
import { COMMAND_NAMES } from '../../shared/contract/index.ts';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'md-confine-')));
const home = join(root, 'home');
const outputRoot = join(home, 'results');
// The person's own files, never given to MediaDesk.
const ssh = join(root, 'user', '.ssh');
const photos = join(root, 'user', 'photos');
mkdirSync(ssh, { recursive: true });
mkdirSync(photos, { recursive: true });
mkdirSync(outputRoot, { recursive: true });
const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#c33' } })
  .png()
  .toBuffer();
writeFileSync(join(ssh, 'id_rsa'), '-----BEGIN OPENSSH PRIVATE KEY-----\n');
writeFileSync(join(photos, 'private.png'), png);
// A result MediaDesk's output folder holds, and a link in it out to the person's photos.
mkdirSync(join(outputRoot, 'Precision upscaler', 'shoot'), { recursive: true });
writeFileSync(join(outputRoot, 'Precision upscaler', 'shoot', 'a_upscaled.png'), png);
symlinkSync(photos, join(outputRoot, 'link-out'));

const host = await startWebHost({ home, env: { MEDIADESK_OUTPUT_DIR: outputRoot } });
const ws = new WebSocket(`${host.origin.replace('http', 'ws')}/ws?token=${host.token}`, { origin: host.origin });
await new Promise((ok, fail) => ws.once('open', ok).once('error', fail));
afterAll(async () => {
  ws.close();
  await host.close();
});

type Reply = { ok: boolean; result?: unknown; error?: { code: string; message: string } };
let seq = 0;
function send(cmd: string, payload: unknown): Promise<Reply> {
  const id = ++seq;
  return new Promise((done) => {
    const on = (raw: Buffer) => {
      const m = JSON.parse(raw.toString()) as { id?: number };
      if (m.id !== id) return;
      ws.off('message', on);
      done(m as Reply);
    };
    ws.on('message', on);
    ws.send(JSON.stringify({ id, cmd, payload }));
  });
}

/** A file dropped in the browser, as the renderer's upload sends it. */
function upload(drop: string, rel: string, body: Buffer): Promise<{ path: string; folder: string }> {
  return new Promise((resolve, reject) => {
    const q = new URLSearchParams({ token: host.token, drop, rel });
    const req = request(`${host.origin}/upload?${q}`, { method: 'PUT' }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(text)) : reject(new Error(text))));
    });
    req.end(body);
  });
}

const batch = (inputs: string[]) => ({ tool: 'upscaler-precision', inputs, params: {} });
const appRun = (product_image: string) => ({
  appId: 'pS7kQ2xa',
  confirmedCost: 12,
  inputs: { product_image, scene: 'A kitchen table at dawn' },
});

describe('a page names inputs only the person gave', () => {
  it('batches.start and batches.check refuse a file or folder the person never gave, naming it and why', async () => {
    for (const path of [join(ssh, 'id_rsa'), photos, join(outputRoot, 'link-out', 'private.png'), `${outputRoot}/..`]) {
      for (const cmd of ['batches.start', 'batches.check']) {
        const r = await send(cmd, batch([path]));
        expect([cmd, path, r.ok, r.error?.code]).toEqual([cmd, path, false, 'forbidden']);
        expect(r.error?.message).toContain('is not a file or folder you gave MediaDesk');
        expect(r.error?.message).toMatch(/^inputs: \//);
      }
    }
    const listed = (await send('batches.list', {})).result as unknown[];
    expect(listed).toEqual([]);
  });

  it('a workflow app run refuses a local file the person never gave, before it is uploaded or paid', async () => {
    for (const cmd of ['apps.run', 'apps.check']) {
      const r = await send(
        cmd,
        cmd === 'apps.run'
          ? appRun(join(photos, 'private.png'))
          : { appId: 'pS7kQ2xa', inputs: appRun(join(photos, 'private.png')).inputs },
      );
      expect([cmd, r.ok, r.error?.code]).toEqual([cmd, false, 'forbidden']);
      expect(r.error?.message).toBe(
        `product_image: ${join(photos, 'private.png')} is not a file or folder you gave MediaDesk: drop it or choose it (Choose a folder…, Choose files…), or add it as a hot folder, so it is sent; a path typed in a page is not read (the mediadesk command takes one)`,
      );
    }
    const runs = (await send('apps.runs', { limit: 10 })).result as { runs: unknown[] };
    expect(runs.runs).toEqual([]);
  });

  it('takes a dropped upload, a result in the output folder and a hot folder, in a batch and an app run', async () => {
    const up = await upload('drop-confine-1', 'shoot/a.png', png);
    const checked = await send(
      'batches.check',
      batch([join(up.folder, 'shoot'), join(outputRoot, 'Precision upscaler')]),
    );
    expect([checked.ok, checked.error]).toEqual([true, undefined]);
    const started = await send('batches.start', batch([join(up.folder, 'shoot')]));
    expect([started.ok, started.error]).toEqual([true, undefined]);

    const watched = join(root, 'user', 'watched');
    mkdirSync(watched);
    const added = await send('hotFolders.add', { folder: watched, tool: 'upscaler-precision', params: {} });
    expect(added.ok).toBe(true);
    const inWatched = await send('batches.check', batch([watched]));
    expect(inWatched.error?.code).not.toBe('forbidden');

    const ran = await send('apps.run', appRun(up.path));
    expect([ran.ok, ran.error]).toEqual([true, undefined]);
  });
});

describe('the desktop app grants what the preload took from a real File', () => {
  const gave = join(root, 'user', 'dropped');
  mkdirSync(gave, { recursive: true });
  writeFileSync(join(gave, 'a.png'), png);
  symlinkSync(join(ssh, 'id_rsa'), join(gave, 'key.png'));
  const policy = new PathPolicy({ inbox: join(home, 'inbox'), outputRoot: () => outputRoot, usedOutputs: () => [] });

  it('a granted folder covers its own files, never a link out of it nor a sibling', () => {
    const refused = (p: string) => () => policy.check('batches.start', batch([p]));
    expect(refused(gave)).toThrow(/is not a file or folder you gave MediaDesk/);
    policy.grant(gave);
    policy.check('batches.start', batch([gave, join(gave, 'a.png')]));
    policy.checkInput('product_image', join(gave, 'a.png'));
    expect(refused(join(gave, 'key.png'))).toThrow(`${join(gave, 'key.png')} is not a file or folder you gave`);
    expect(refused(join(gave, '..', 'photos'))).toThrow(/is not a file or folder you gave/);
    expect(refused(`${gave}-other`)).toThrow(/is not a file or folder you gave/);
    expect(readFileSync(join(ssh, 'id_rsa'), 'utf8')).toContain('PRIVATE KEY');
  });

  it("main grants only an absolute path from its own window's preload, on a channel no page command reaches", () => {
    expect(chosenPath(true, '/home/me/shoot')).toBe('/home/me/shoot');
    expect(chosenPath(true, 'C:\\Users\\me\\shoot')).toBe('C:\\Users\\me\\shoot');
    expect(chosenPath(false, '/home/me/shoot')).toBeNull();
    for (const bad of ['', 'shoot', '../x', 42, null, { path: '/x' }, '/a\0b'])
      expect(chosenPath(true, bad)).toBeNull();
    expect(
      (COMMAND_NAMES as readonly string[]).some((c) => c === CHOSEN_CHANNEL || `desk:cmd:${c}` === CHOSEN_CHANNEL),
    ).toBe(false);
  });
});

/** GET /download of `path` behind the token: status and body. */
function download(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const q = new URLSearchParams({ token: host.token, path });
    request(`${host.origin}/download?${q}`, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });
}

describe('/download sends a result only when the queue recorded it', () => {
  it('a result a job wrote is sent; a media file put beside it by hand is refused, saying why', async () => {
    const started = await send('batches.start', {
      tool: 'hires',
      inputs: [],
      params: { prompt: 'a red chair in a white room', resolution: '1k' },
      outDir: join(outputRoot, 'chairs'),
    });
    expect([started.ok, started.error]).toEqual([true, undefined]);
    const batchId = (started.result as { batch: { id: string } }).batch.id;
    let outputs: string[] = [];
    await vi.waitFor(
      async () => {
        const r = (await send('jobs.list', { batchId })).result as { jobs: { state: string; outputs: string[] }[] };
        expect(r.jobs.map((j) => j.state)).toEqual(['done']);
        outputs = r.jobs[0]!.outputs;
      },
      { timeout: 60_000, interval: 200 },
    );
    const result = outputs[0]!;
    expect((await download(result)).status).toBe(200);

    const byHand = join(outputRoot, 'chairs', 'dropped-by-hand.png');
    writeFileSync(byHand, png);
    const refused = await download(byHand);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).message).toBe(
      `${byHand} is in a results folder but MediaDesk did not make it (no job or app run recorded it), so it is not handed out`,
    );
  });
});
