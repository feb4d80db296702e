import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { openHotFolderDb } from '../../electron/core/hot-folders/service.ts';
import { HotFolderStore } from '../../electron/core/hot-folders/store.ts';
import { createCore, type Core } from '../../electron/core/index.ts';
import { MemorySecretStore } from '../../electron/core/secrets.ts';
import { startSandbox } from '../../electron/sandbox/index.ts';
import type { Res } from '../../shared/contract/index.ts';
import { cliEnv, runCli } from '../cli.ts';
import { control, creates, folderOf, makeImages, givenFolder, sandboxAndFolder } from './helpers.ts';

const ctx = sandboxAndFolder('hot-folder-loops', 150);

async function scene(name: string) {
  await control(ctx.url, 'reset', {});
  const root = join(ctx.dir, name);
  const dirs = { a: join(root, 'a'), b: join(root, 'b'), c: join(root, 'c'), elsewhere: join(root, 'elsewhere') };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
  return { home: join(root, 'home'), ...dirs };
}

const openCore = (home: string, env: Record<string, string> = {}) =>
  createCore({
    home,
    host: 'web',
    secrets: new MemorySecretStore(),
    startSandbox: () => startSandbox({ port: 0 }),
    // Every scene's folders lie in ctx.dir: a page's results folders must be inside the output folder.
    env: { MEDIADESK_API_URL: ctx.url, MEDIADESK_API_KEY: 'sandbox-owner', MEDIADESK_OUTPUT_DIR: ctx.dir, ...env },
  }).then(givenFolder(ctx.dir));

/** The hot folder files' states by path, read from the database as any process would. */
function fileStates(home: string): Record<string, { state: string; reason: string | null }> {
  const db = openHotFolderDb(join(home, 'hot-folders.db'));
  try {
    const rows = db.prepare('SELECT path, state, reason FROM hot_folder_files').all() as {
      path: string;
      state: string;
      reason: string | null;
    }[];
    return Object.fromEntries(rows.map((r) => [r.path, { state: r.state, reason: r.reason }]));
  } finally {
    db.close();
  }
}

const until = (what: string, test: () => boolean | Promise<boolean>, log: () => string): Promise<void> =>
  vi.waitFor(
    async () => {
      if (!(await test())) throw new Error(`waiting for ${what}; ${log()}`);
    },
    { timeout: 60_000, interval: 100 },
  );

async function listed(core: Core): Promise<Res<'hotFolders.list'>['folders']> {
  const list = await core.dispatch('hotFolders.list', {});
  if (!list.ok) throw new Error(list.error.message);
  return (list.result as Res<'hotFolders.list'>).folders;
}

const add = { tool: 'upscaler-precision', params: {} };

describe('hot folders never feed themselves', () => {
  it('refuses crossed, nested and enclosing output folders when a folder is added', async () => {
    const { home, a, b, c } = await scene('topology');
    const core = await openCore(home);
    try {
      expect((await core.dispatch('hotFolders.add', { ...add, folder: a, outDir: b })).ok).toBe(true);
      // B into A closes the loop A -> B -> A.
      const crossed = await core.dispatch('hotFolders.add', { ...add, folder: b, outDir: a });
      expect(crossed).toMatchObject({ ok: false, error: { code: 'invalid' } });
      expect(!crossed.ok && crossed.error.message).toMatch(
        /output folder: .*\/a is the watched folder .*\/a|folder: .*\/b cannot be watched: the hot folder .*\/a writes its results to .*\/b/,
      );
      // Into a folder inside A, and into the folder that holds A.
      const nested = await core.dispatch('hotFolders.add', { ...add, folder: c, outDir: join(a, 'sub') });
      expect(!nested.ok && nested.error.message).toBe(
        `output folder: ${join(a, 'sub')} is inside the watched folder ${a}, so its results would be processed again; choose a folder outside every hot folder`,
      );
      const enclosing = await core.dispatch('hotFolders.add', { ...add, folder: c, outDir: join(a, '..') });
      expect(!enclosing.ok && enclosing.error.message).toMatch(/^output folder: \S+ contains the watched folder /);
      // B is where A's results go: watching it, whatever its own output, would take them.
      const intoOutput = await core.dispatch('hotFolders.add', { ...add, folder: b, outDir: c });
      expect(!intoOutput.ok && intoOutput.error.message).toBe(
        `folder: ${b} cannot be watched: the hot folder ${a} writes its results to ${b}, so they would be processed here again`,
      );
      const list = await core.dispatch('hotFolders.list', {});
      expect(list.ok && (list.result as Res<'hotFolders.list'>).folders.map((f) => f.folder)).toEqual([a]);
    } finally {
      await core.close();
    }
  });

  it('a loop stored before the check (crossed A and B) is named and not watched: no file is queued', async () => {
    const { home, a, b } = await scene('stored-loop');
    const db = openHotFolderDb(join(home, 'hot-folders.db'));
    const store = new HotFolderStore(db);
    const row = { tool: 'upscaler-precision', params: {}, state: 'active' as const, settleSeconds: 1, createdAt: 1 };
    store.insertFolder({ ...row, id: 'a', folder: a, outDir: b });
    store.insertFolder({ ...row, id: 'b', folder: b, outDir: a });
    db.close();
    await makeImages(a, ['dropped.png']);
    const core = await openCore(home);
    try {
      const problems = async () => {
        return (await listed(core)).map((f) => f.problem ?? '');
      };
      await until(
        'both folders named as a loop',
        async () => (await problems()).every((p) => p.startsWith('not watched: ')),
        () => '',
      );
      expect((await problems())[0]).toContain(`its output folder ${b} is the watched folder ${b}`);
      const resumed = await core.dispatch('hotFolders.resume', { id: 'a' });
      expect(!resumed.ok && resumed.error.message).toMatch(/^cannot resume .*: its output folder/);
    } finally {
      await core.close();
    }
    // Never watched, so never seen: the file was not even recorded.
    expect(fileStates(home)).toEqual({});
    expect(creates(await control(ctx.url, 'stats'))).toBe(0);
  }, 60_000);

  it('`run --out` into a watched folder: its results, and a result copied from another data folder, are never queued', async () => {
    const { home, a, b, elsewhere } = await scene('run-out');
    const core = await openCore(home);
    try {
      expect((await core.dispatch('hotFolders.add', { ...add, folder: a, outDir: b, settleSeconds: 1 })).ok).toBe(true);
      const inputs = await makeImages(elsewhere, ['one.png', 'two.png']);
      const run = await runCli(['run', 'upscaler-precision', '--out', a, ...inputs], {
        env: cliEnv(home, ctx.url),
      });
      expect(run.code, run.err).toBe(0);
      const results = readdirSync(a).filter((n) => n.endsWith('.png'));
      expect(results.sort()).toEqual(['one_upscaler-precision.png', 'two_upscaler-precision.png']);
      // Another data folder's result, copied in: known by its provenance XMP alone.
      const otherHome = join(elsewhere, 'other-home');
      const other = await runCli(['run', 'upscaler-precision', '--out', join(elsewhere, 'out'), inputs[0]], {
        env: cliEnv(otherHome, ctx.url),
      });
      expect(other.code, other.err).toBe(0);
      copyFileSync(join(elsewhere, 'out', 'one_upscaler-precision.png'), join(a, 'copied.png'));
      const all = [...results, 'copied.png'].map((n) => join(a, n));
      await until(
        'every result looked at',
        () => all.every((p) => fileStates(home)[p]?.state === 'rejected'),
        () => JSON.stringify(fileStates(home)),
      );
      for (const p of all)
        expect(fileStates(home)[p].reason).toBe(
          'MediaDesk made it (a result): a hot folder never processes results again',
        );
    } finally {
      await core.close();
    }
    // Two for the first run, one for the other data folder's: none for the hot folder.
    expect(creates(await control(ctx.url, 'stats'))).toBe(3);
    expect(readdirSync(b)).toEqual([]);
  }, 120_000);

  it('the spend guard pauses a folder that queues more than its limit from files named as results', async () => {
    const { home, a, b } = await scene('guard');
    const core = await openCore(home, { MEDIADESK_HOT_FOLDER_GUARD: '2' });
    try {
      const added = folderOf(await core.dispatch('hotFolders.add', { ...add, folder: a, outDir: b, settleSeconds: 1 }));
      // As a sync tool that strips metadata would bring results back: named as results, no mark of ours.
      await makeImages(a, ['x_upscaler-precision.png', 'plain.png', 'y_upscaler-precision_2.png']);
      const states = () => fileStates(home);
      await until(
        'three files queued',
        () => Object.values(states()).filter((s) => ['queued', 'done'].includes(s.state)).length === 3,
        () => JSON.stringify(states()),
      );
      await makeImages(a, ['z_upscaler-precision.png']);
      const folder = async () => (await listed(core))[0];
      await until(
        'the guard to pause it',
        async () => (await folder()).state === 'paused',
        () => '',
      );
      expect((await folder()).problem).toMatch(/^paused by the spend guard: it would queue more than 2 jobs/);
      expect(states()[join(a, 'z_upscaler-precision.png')].state).toBe('waiting');
      expect(creates(await control(ctx.url, 'stats'))).toBe(3);
      // A person resumes it: the count starts again and the waiting file is taken.
      expect((await core.dispatch('hotFolders.resume', { id: added.id })).ok).toBe(true);
      await until(
        'the waiting file queued',
        () => ['queued', 'done'].includes(states()[join(a, 'z_upscaler-precision.png')].state),
        () => JSON.stringify(states()),
      );
    } finally {
      await core.close();
    }
  }, 120_000);
});
