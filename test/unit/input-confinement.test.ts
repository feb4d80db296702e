// Inputs a page names are the person's own (shared/contract/paths.ts, `input`): a page of the web
// host (its token holder, or a compromised renderer) cannot have any file on the disk sent to the
// service, nor served back through /media. Real web host, real Sandbox, real files.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { askOver } from '../ws-ask.ts';
import { startWebHost } from '../../electron/host/web/server.ts';
import { GIVE_IN_WEB, PathPolicy } from '../../electron/core/path-policy.ts';
import { CHOSEN_CHANNEL, chosenPath } from '../../electron/main/policy.ts';
import { chooseFiles } from '../../electron/main/choose.ts';
import { givenFolders, WEB_FOLDERS_ENV } from '../../electron/host/web/launch.ts';
import { COMMAND_NAMES } from '../../shared/contract/index.ts';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'md-confine-')));
const home = join(root, 'home');
const outputRoot = join(home, 'results');
// The person's own files, never given to MediaDesk.
const ssh = join(root, 'user', '.ssh');
const photos = join(root, 'user', 'photos');
// A folder the person named when starting the web host (--folder).
const given = join(root, 'user', 'given');
mkdirSync(ssh, { recursive: true });
mkdirSync(photos, { recursive: true });
mkdirSync(join(given, 'shoot'), { recursive: true });
mkdirSync(outputRoot, { recursive: true });
const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#c33' } })
  .png()
  .toBuffer();
writeFileSync(join(ssh, 'id_rsa'), '-----BEGIN OPENSSH PRIVATE KEY-----\n');
writeFileSync(join(photos, 'private.png'), png);
writeFileSync(join(given, 'shoot', 'b.png'), png);
// A result MediaDesk's output folder holds, and a link in it out to the person's photos.
mkdirSync(join(outputRoot, 'Precision upscaler', 'shoot'), { recursive: true });
writeFileSync(join(outputRoot, 'Precision upscaler', 'shoot', 'a_upscaled.png'), png);
symlinkSync(photos, join(outputRoot, 'link-out'));

const host = await startWebHost({ home, env: { MEDIADESK_OUTPUT_DIR: outputRoot }, folders: [given] });
const ws = new WebSocket(`${host.origin.replace('http', 'ws')}/ws?token=${host.token}`, { origin: host.origin });
await new Promise((ok, fail) => ws.once('open', ok).once('error', fail));
afterAll(async () => {
  ws.close();
  await host.close();
});

const send = askOver(ws);

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
        `product_image: ${join(photos, 'private.png')} is not a file or folder you gave MediaDesk: ${GIVE_IN_WEB}`,
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

    const watched = join(given, 'watched');
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

/** GET `route` (/download, /media) of `path` behind the token: status and body. */
function fetchFile(route: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const q = new URLSearchParams({ token: host.token, path });
    request(`${host.origin}${route}?${q}`, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });
}
const download = (path: string) => fetchFile('/download', path);

/** A result a job of a batch started from the page wrote (one 1k image of `prompt`, into `outDir`). */
async function madeResult(prompt: string, outDir: string): Promise<string> {
  const started = await send('batches.start', {
    tool: 'hires',
    inputs: [],
    params: { prompt, resolution: '1k' },
    outDir,
  });
  expect([started.ok, started.error]).toEqual([true, undefined]);
  const batchId = (started.result as { batch: { id: string } }).batch.id;
  let result = '';
  await vi.waitFor(
    async () => {
      const r = (await send('jobs.list', { batchId })).result as { jobs: { state: string; outputs: string[] }[] };
      expect(r.jobs.map((j) => j.state)).toEqual(['done']);
      result = r.jobs[0]!.outputs[0]!;
    },
    { timeout: 60_000, interval: 200 },
  );
  return result;
}

describe('/download sends a result only when the queue recorded it', () => {
  it('a result a job wrote is sent; a media file put beside it by hand is refused, saying why', async () => {
    const result = await madeResult('a red chair in a white room', join(outputRoot, 'chairs'));
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

describe("the web host's folders the person named at start (--folder, MEDIADESK_WEB_FOLDERS)", () => {
  it('a typed path inside one is taken; one outside is refused, saying to drop the files or restart with --folder', async () => {
    const inside = await send('batches.check', batch([join(given, 'shoot')]));
    expect([inside.ok, inside.error]).toEqual([true, undefined]);
    const outside = await send('batches.check', batch([photos]));
    expect(outside.error).toMatchObject({
      code: 'forbidden',
      message: `inputs: ${photos} is not a file or folder you gave MediaDesk: ${GIVE_IN_WEB}`,
    });
    expect(GIVE_IN_WEB).toMatch(/drop the files on the page .*restart the web host with --folder/);
  });

  it('are read from each --folder and the variable (split as PATH is), resolved; one that is not a folder is named', () => {
    const env = { [WEB_FOLDERS_ENV]: [photos, '', join(given, 'shoot')].join(delimiter) };
    expect(givenFolders([given, `${given}/./`], env)).toEqual([given, photos, join(given, 'shoot')]);
    expect(() => givenFolders([join(root, 'nowhere')], {})).toThrow(
      `--folder ${join(root, 'nowhere')}: no such folder`,
    );
    expect(() => givenFolders([], { [WEB_FOLDERS_ENV]: join(ssh, 'id_rsa') })).toThrow(
      `${WEB_FOLDERS_ENV} ${join(ssh, 'id_rsa')}: is a file, not a folder`,
    );
  });
});

describe('a hot folder added from a page is one the person gave', () => {
  it('refuses a folder not given (nothing is watched), takes one inside a given folder', async () => {
    const refused = await send('hotFolders.add', { folder: photos, tool: 'upscaler-precision', params: {} });
    expect(refused.error).toMatchObject({
      code: 'forbidden',
      message: `folder: ${photos} is not a file or folder you gave MediaDesk: ${GIVE_IN_WEB}`,
    });
    const listed = (await send('hotFolders.list', {})).result as { folders: { folder: string }[] };
    expect(listed.folders.map((f) => f.folder)).not.toContain(photos);
    const inGiven = join(given, 'hot');
    mkdirSync(inGiven);
    const added = await send('hotFolders.add', { folder: inGiven, tool: 'upscaler-precision', params: {} });
    expect([added.ok, added.error]).toEqual([true, undefined]);
  });
});

describe("the desktop app's own chooser (files.choose, served by main alone)", () => {
  it('grants what the person chose in the dialog, nothing when they cancel; the web host does not offer it', async () => {
    const policy = new PathPolicy({ inbox: join(home, 'inbox'), outputRoot: () => outputRoot, usedOutputs: () => [] });
    const asked: unknown[] = [];
    let answer = { canceled: true, filePaths: [photos] };
    const choose = chooseFiles(
      async (o) => (asked.push(o), answer),
      (p) => policy.grant(p),
    );
    expect(await choose({ kind: 'folder' })).toEqual({ paths: [] });
    expect(() => policy.checkInput('inputs', join(photos, 'private.png'))).toThrow(/is not a file or folder you gave/);
    answer = { canceled: false, filePaths: [photos] };
    expect(await choose({ kind: 'folder' })).toEqual({ paths: [photos] });
    policy.checkInput('inputs', join(photos, 'private.png'));
    policy.check('hotFolders.add', { folder: photos });
    expect(asked).toEqual([
      { title: 'Choose a folder', properties: ['openDirectory'] },
      { title: 'Choose a folder', properties: ['openDirectory'] },
    ]);
    await choose({ kind: 'files' });
    expect(asked[2]).toEqual({ title: 'Choose files', properties: ['openFile', 'multiSelections'] });

    const web = await send('files.choose', { kind: 'folder' });
    expect(web.error).toEqual({ code: 'unavailable', message: '"files.choose" is not available in this host' });
  });
});

const media = async (path: string) => (await fetchFile('/media', path)).status;

describe('/media shows recorded results and what the person gave, not any media in a folder the app uses', () => {
  it('a recorded result and a given file are served; a file dropped by hand in the output folder or beside a batch input is not', async () => {
    const result = await madeResult('a blue lamp on a desk', join(outputRoot, 'lamps'));
    expect(await media(result)).toBe(200);
    expect(await media(join(given, 'shoot', 'b.png'))).toBe(200);

    const byHand = join(outputRoot, 'lamps', 'dropped-by-hand.png');
    writeFileSync(byHand, png);
    expect(await media(byHand)).toBe(403);
    expect(await media(join(outputRoot, 'Precision upscaler', 'shoot', 'a_upscaled.png'))).toBe(403);
  });
});

describe("an audit file sink's folder named from a page is inside the output folder", () => {
  it('audit.sinkSave and settings.set refuse a folder elsewhere, naming it; one inside the output folder is taken', async () => {
    const sink = (folder: string) => ({ id: 'archive', kind: 'file', folder, enabled: true });
    const refused = await send('audit.sinkSave', { sink: sink(ssh) });
    expect(refused.error).toMatchObject({ code: 'forbidden' });
    expect(refused.error?.message).toContain(`sink.folder: ${ssh} is outside the output folder`);
    const viaSettings = await send('settings.set', { auditSinks: [sink(photos)] });
    expect(viaSettings.error?.message).toContain(`auditSinks[].folder: ${photos} is outside the output folder`);
    const listed = (await send('audit.forwardStatus', {})).result as { sinks: { id: string }[] };
    expect(listed.sinks.map((s) => s.id)).not.toContain('archive');
    const inside = await send('audit.sinkSave', { sink: sink(join(outputRoot, 'audit-archive')) });
    expect([inside.ok, inside.error]).toEqual([true, undefined]);
  });
});
