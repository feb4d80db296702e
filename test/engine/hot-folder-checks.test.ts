import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../electron/core/db/open.ts';
import { HOT_FOLDER_MIGRATIONS } from '../../electron/core/hot-folders/migrations.ts';
import { openHotFolderDb } from '../../electron/core/hot-folders/service.ts';
import { HotFolderStore } from '../../electron/core/hot-folders/store.ts';
import { createCore, type Core } from '../../electron/core/index.ts';
import { MemorySecretStore } from '../../electron/core/secrets.ts';
import { startSandbox } from '../../electron/sandbox/index.ts';
import type { Res } from '../../shared/contract/index.ts';
import { runCli, cliEnv } from '../cli.ts';
import { folderOf, givenFolder, makeImages, sandboxAndFolder } from './helpers.ts';

const ctx = sandboxAndFolder('hot-folder-checks', 100);
let core: Core;
let watched: string;

beforeAll(async () => {
  watched = join(ctx.dir, 'drop');
  mkdirSync(watched, { recursive: true });
  writeFileSync(join(ctx.dir, 'a-file.png'), 'x');
  core = await createCore({
    home: join(ctx.dir, 'home'),
    host: 'web',
    secrets: new MemorySecretStore(),
    startSandbox: () => startSandbox({ port: 0 }),
    env: { MEDIADESK_API_URL: ctx.url, MEDIADESK_API_KEY: 'sandbox-owner', MEDIADESK_OUTPUT_DIR: ctx.dir },
  }).then(givenFolder(ctx.dir));
});
afterAll(() => core?.close());

async function refusal(req: Record<string, unknown>) {
  const reply = await core.dispatch('hotFolders.add', req);
  if (reply.ok) throw new Error(`accepted ${JSON.stringify(req)}`);
  return reply.error;
}

const add = { tool: 'upscaler-precision', params: {} };

describe('adding a hot folder refuses, saying why', () => {
  it('a folder that is not there, or is a file', async () => {
    const missing = join(ctx.dir, 'nowhere');
    expect(await refusal({ ...add, folder: missing, outDir: join(ctx.dir, 'out') })).toMatchObject({
      code: 'invalid',
      message: `folder: ${missing} does not exist`,
    });
    const file = join(ctx.dir, 'a-file.png');
    expect(await refusal({ ...add, folder: file, outDir: join(ctx.dir, 'out') })).toMatchObject({
      code: 'invalid',
      message: `folder: ${file} is a file, not a folder`,
    });
  });

  it('an output folder inside the watched folder, whose results would be queued again', async () => {
    const inside = join(watched, 'results');
    expect(await refusal({ ...add, folder: watched, outDir: inside })).toMatchObject({
      code: 'invalid',
      message: `output folder: ${inside} is inside the watched folder ${watched}, so its results would be processed again; choose a folder outside every hot folder`,
    });
    expect((await refusal({ ...add, folder: watched, outDir: watched })).message).toContain('is the watched folder');
  });

  it('an unknown tool, a tool that takes no files, and settings the tool refuses', async () => {
    const outDir = join(ctx.dir, 'out');
    expect(await refusal({ folder: watched, tool: 'no-such-tool', outDir })).toMatchObject({
      code: 'invalid',
      message: expect.stringMatching(/^unknown tool "no-such-tool"; known tools: /),
    });
    expect((await refusal({ folder: watched, tool: 'music', outDir })).message).toMatch(
      /takes no input files, so it cannot process a folder/,
    );
    const bad = await refusal({ folder: watched, tool: 'upscaler-precision', params: { scale_factor: 99 }, outDir });
    expect(bad.code).toBe('invalid');
    expect(bad.invalid?.map((p) => p.field)).toContain('scale_factor');
  });

  it('a folder that is already a hot folder; nothing stored is lost by the refusals', async () => {
    const outDir = join(ctx.dir, 'out');
    const first = await core.dispatch('hotFolders.add', { ...add, folder: watched, outDir });
    expect(first.ok).toBe(true);
    expect(await refusal({ ...add, folder: watched, outDir })).toMatchObject({
      code: 'conflict',
      message: `${watched} is already a hot folder (Precision upscaler); remove it first to watch it with other settings`,
    });
    const list = await core.dispatch('hotFolders.list', {});
    const { folders } = list.ok ? (list.result as Res<'hotFolders.list'>) : { folders: [] };
    expect(folders.map((f) => [f.folder, f.outDir, f.state])).toEqual([[watched, outDir, 'active']]);
  });

  it('a watched folder that goes away is named in the list, and watched again once it is back', async () => {
    const gone = join(ctx.dir, 'unplugged');
    mkdirSync(gone);
    const added = await core.dispatch('hotFolders.add', { ...add, folder: gone, outDir: join(ctx.dir, 'out-2') });
    expect(added.ok).toBe(true);
    const problem = async () => {
      const list = await core.dispatch('hotFolders.list', {});
      return list.ok
        ? (list.result as Res<'hotFolders.list'>).folders.find((f) => f.folder === gone)!.problem
        : 'error';
    };
    rmSync(gone, { recursive: true });
    await expect
      .poll(problem, { timeout: 20_000 })
      .toBe(
        `${gone} is not there any more (moved, renamed or its drive unplugged); put it back or remove this hot folder`,
      );
    mkdirSync(gone);
    await expect.poll(problem, { timeout: 20_000 }).toBeNull();
  });

  it('the CLI says the same, exit 2, and --pause, --resume, --remove name the folder', async () => {
    const env = cliEnv(join(ctx.dir, 'home'), ctx.url);
    const inside = await runCli(['watch', watched, '--tool', 'upscaler-precision', '--out', join(watched, 'r')], {
      env,
    });
    expect(inside.code).toBe(2);
    expect(inside.err).toContain('is already a hot folder with Precision upscaler');
    const other = join(ctx.dir, 'other');
    mkdirSync(other);
    const refused = await runCli(['watch', other, '--tool', 'upscaler-precision', '--out', join(other, 'r')], {
      env,
    });
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('is inside the watched folder');
    const noTool = await runCli(['watch', other], { env });
    expect(noTool.code).toBe(2);
    expect(noTool.err).toContain('is not a hot folder yet: name a tool with --tool');
    const paused = await runCli(['watch', '--pause', watched], { env });
    expect(paused.out).toContain(`paused ${watched}`);
    const list = await runCli(['watch', '--list'], { env });
    expect(list.out).toMatch(/paused\s+upscaler-precision/);
    expect((await runCli(['watch', '--resume', watched], { env })).out).toContain(`resumed ${watched}`);
    expect((await runCli(['watch', '--remove', watched], { env })).out).toContain(`removed ${watched}`);
    const unknown = await runCli(['watch', '--remove', watched], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('is not a hot folder (mediadesk watch --list names them)');
  }, 60_000);
});

describe("a hot folder's wait before it takes a file", () => {
  const rule = 'must be a whole number of seconds from 1 to 60';

  it('is refused outside 1 to 60 whole seconds, when added or changed; a good one is kept with the folder', async () => {
    const folder = join(ctx.dir, 'waits');
    mkdirSync(folder);
    const outDir = join(ctx.dir, 'out-waits');
    for (const settleSeconds of [0, 61, 1.5])
      expect(await refusal({ ...add, folder, outDir, settleSeconds })).toMatchObject({
        code: 'invalid',
        message: `the wait before a file is taken ${rule}; got ${settleSeconds}`,
        invalid: [{ field: 'settleSeconds', reason: rule }],
      });
    const added = await core.dispatch('hotFolders.add', { ...add, folder, outDir });
    const record = folderOf(added);
    expect(record.settleSeconds).toBe(2);
    const tooLong = await core.dispatch('hotFolders.setSettle', { id: record.id, settleSeconds: 90 });
    expect(tooLong.ok ? 'accepted' : tooLong.error.message).toBe(`the wait before a file is taken ${rule}; got 90`);
    const changed = await core.dispatch('hotFolders.setSettle', { id: record.id, settleSeconds: 10 });
    expect(folderOf(changed).settleSeconds).toBe(10);

    const env = cliEnv(join(ctx.dir, 'home'), ctx.url);
    for (const raw of ['90', '0', '2.5', '5m']) {
      const bad = await runCli(['watch', folder, '--settle', raw], { env });
      expect(bad.code).toBe(2);
      expect(bad.err).toContain(`--settle ${rule}, such as 5, got "${raw}"`);
    }
    const list = await runCli(['watch', '--list'], { env });
    expect(list.out).toMatch(new RegExp(`active\\s+upscaler-precision\\s+10s\\s+.*${folder}`));
    await core.dispatch('hotFolders.remove', { id: record.id });
  }, 60_000);

  it('is 2 seconds for a hot folder saved before it could be chosen (migration 2), its other details kept', () => {
    const path = join(ctx.dir, 'v1', 'hot-folders.db');
    const v1 = openDatabase(path, HOT_FOLDER_MIGRATIONS.slice(0, 1));
    v1.prepare(
      'INSERT INTO hot_folders (id, folder, tool, params, out_dir, state, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ).run('h1', '/photos/drop', 'upscaler-precision', '{"scale_factor":4}', '/out', 'paused', 123);
    v1.close();
    const db = openHotFolderDb(path);
    try {
      const store = new HotFolderStore(db);
      expect(store.folders()).toEqual([
        {
          id: 'h1',
          folder: '/photos/drop',
          tool: 'upscaler-precision',
          params: { scale_factor: 4 },
          outDir: '/out',
          state: 'paused',
          settleSeconds: 2,
          shared: false,
          teamKey: null,
          problem: null,
          createdAt: 123,
        },
      ]);
      store.setSettleSeconds('h1', 30);
      expect(store.folder('h1')?.settleSeconds).toBe(30);
    } finally {
      db.close();
    }
  });
});

describe('a shared hot folder without a team server', () => {
  it('is not shared unless asked; shared, its files wait and it says why, until it is not shared', async () => {
    const folder = join(ctx.dir, 'shared-drop');
    mkdirSync(folder);
    const added = folderOf(await core.dispatch('hotFolders.add', { ...add, folder, outDir: join(ctx.dir, 'out-sh') }));
    expect(added.shared).toBe(false);
    const shared = folderOf(await core.dispatch('hotFolders.setShared', { id: added.id, shared: true }));
    expect(shared.shared).toBe(true);
    await makeImages(folder, ['s.png']);
    const record = async () => {
      const list = await core.dispatch('hotFolders.list', {});
      if (!list.ok) throw new Error(list.error.message);
      return (list.result as Res<'hotFolders.list'>).folders.find((f) => f.id === added.id)!;
    };
    await expect
      .poll(async () => (await record()).problem, { timeout: 30_000 })
      .toBe(
        'shared with the team, so its files wait: no team server is set (Settings > Team, mediadesk team connect URL); or stop sharing it to process it here alone',
      );
    expect((await record()).counts).toMatchObject({ waiting: 1, queued: 0, done: 0 });
    await core.dispatch('hotFolders.setShared', { id: added.id, shared: false });
    await expect.poll(async () => (await record()).counts.done, { timeout: 60_000 }).toBe(1);
    expect((await record()).problem).toBeNull();
    await core.dispatch('hotFolders.remove', { id: added.id });
  }, 90_000);
});
