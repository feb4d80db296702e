import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, createWriteStream, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { watch as chokidarWatch } from 'chokidar';
import sharp from 'sharp';
import { describe, expect, it, vi } from 'vitest';
import { openHotFolderDb } from '../../electron/core/hot-folders/service.ts';
import { HotFolderStore } from '../../electron/core/hot-folders/store.ts';
import type { FolderWatch } from '../../electron/core/hot-folders/watcher.ts';
import { createCore } from '../../electron/core/index.ts';
import { MemorySecretStore } from '../../electron/core/secrets.ts';
import { startSandbox } from '../../electron/sandbox/index.ts';
import type { Res } from '../../shared/contract/index.ts';
import { BIN, cliEnv } from '../cli.ts';
import { TestClock } from '../clock.ts';
import { control, creates, folderOf, makeImages, givenFolder, sandboxAndFolder } from './helpers.ts';

const ctx = sandboxAndFolder('hot-folders', 150);
/** How often the watcher looks at waiting files (watcher.ts): a clock moved by this gives it one look. */
const TICK_MS = 250;
const WAIT = { timeout: 30_000, interval: 20 };

/** A PNG of some 300 KB (noise does not compress), so a slow copy takes many writes. */
const bigPng = (seed: number) =>
  sharp(Buffer.from(Array.from({ length: 320 * 320 * 3 }, (_, i) => (i * 7919 + seed * 104729) % 251)), {
    raw: { width: 320, height: 320, channels: 3 },
  })
    .png({ compressionLevel: 0 })
    .toBuffer();

/** Writes `bytes` to `path` in 12 chunks over about 1.5 s, as a slow copy from a camera card or a share does. */
async function copySlowly(path: string, bytes: Buffer): Promise<void> {
  const out = createWriteStream(path);
  const step = Math.ceil(bytes.length / 12);
  for (let at = 0; at < bytes.length; at += step) {
    await new Promise<void>((res, rej) => out.write(bytes.subarray(at, at + step), (e) => (e ? rej(e) : res())));
    await new Promise((r) => setTimeout(r, 125));
  }
  await new Promise<void>((res) => out.end(res));
}

/** `mediadesk watch …` as its own process: the host that watches, which the test kills and starts again. */
function startWatch(home: string, args: string[]): { child: ChildProcess; out: () => string; exited: Promise<void> } {
  const child = spawn(process.execPath, [BIN, 'watch', ...args], {
    env: { ...process.env, ...cliEnv(home, ctx.url), MEDIADESK_POLL_MIN_MS: '50' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  return { child, out: () => out, exited };
}

const until = (what: string, test: () => boolean, log: () => string): Promise<void> =>
  vi.waitFor(
    () => {
      if (!test()) throw new Error(`waiting for ${what}; output:\n${log()}`);
    },
    { timeout: 60_000, interval: 100 },
  );

/** The hot folder's files by state, read from its database as any process would. */
/** Jobs whose create the watching process may have sent without an answer yet. */
function submitting(home: string): number {
  const db = new Database(join(home, 'mediadesk.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT count(*) FROM jobs WHERE state = 'submitting'").pluck().get() as number;
  } finally {
    db.close();
  }
}

function fileStates(home: string): Record<string, string> {
  const db = openHotFolderDb(join(home, 'hot-folders.db'));
  try {
    const store = new HotFolderStore(db);
    const [folder] = store.folders();
    if (!folder) return {};
    const rows = db.prepare('SELECT path, state FROM hot_folder_files').all() as { path: string; state: string }[];
    return Object.fromEntries(rows.map((r) => [r.path, r.state]));
  } finally {
    db.close();
  }
}

/** A fresh Sandbox count and a scratch folder with a data folder, a folder to watch and one for results. */
async function scene(name: string) {
  await control(ctx.url, 'reset', {});
  const root = join(ctx.dir, name);
  const watched = join(root, 'drop');
  mkdirSync(watched, { recursive: true });
  return { home: join(root, 'home'), watched, out: join(root, 'results') };
}

/** The core as the web host builds it (it runs the queue, so it watches), on the test's Sandbox. */
const openCore = (home: string, hotFolders?: TestClock, watchFolder?: FolderWatch) =>
  createCore({
    home,
    host: 'web',
    secrets: new MemorySecretStore(),
    startSandbox: () => startSandbox({ port: 0 }),
    env: { MEDIADESK_API_URL: ctx.url, MEDIADESK_API_KEY: 'sandbox-owner', MEDIADESK_OUTPUT_DIR: ctx.dir },
    clocks: { hotFolders },
    watchFolder,
  }).then(givenFolder(ctx.dir));

/**
 * chokidar's watch, whose first read of the folder does not report `name`: as when the file lands after
 * chokidar read the folder and before it watched it. Nothing changes in the folder afterwards.
 */
const missedByFirstRead =
  (name: string): FolderWatch =>
  (paths, options) => {
    const watcher = chokidarWatch(paths, options);
    const emit = watcher.emit.bind(watcher) as (event: string, ...args: unknown[]) => boolean;
    let ready = false;
    watcher.emit = ((event: string, ...args: unknown[]) => {
      if (event === 'ready') ready = true;
      else if (!ready && event === 'add' && basename(String(args[0])) === name) return false;
      return emit(event, ...args);
    }) as typeof watcher.emit;
    return watcher;
  };

/** The size the hot folder last saw of a file (its row), read from its database. */
function seenSize(home: string, path: string): number | undefined {
  const db = openHotFolderDb(join(home, 'hot-folders.db'));
  try {
    return (db.prepare('SELECT size FROM hot_folder_files WHERE path = ?').get(path) as { size: number } | undefined)
      ?.size;
  } finally {
    db.close();
  }
}

describe('hot folders', () => {
  it('processes each file once: some copied slowly, the watching process killed midway, files arriving while it is down', async () => {
    const { home, watched, out } = await scene('killed');
    // There before anything watched: picked up by the first scan.
    await makeImages(watched, ['early-1.png', 'early-2.png']);
    const args = [watched, '--tool', 'upscaler-precision', '--out', out, '--settle', '1s'];
    let host = startWatch(home, args);
    await until('the first watch', () => host.out().includes('watching'), host.out);
    await makeImages(watched, ['quick-1.png', 'quick-2.png']);
    const slow = [copySlowly(join(watched, 'slow-1.png'), await bigPng(1))];
    await until('a file queued', () => /queued .*early/.test(host.out()), host.out);
    const slow2 = await bigPng(2);
    slow.push(copySlowly(join(watched, 'slow-2.png'), slow2));
    // Killed while slow-2 is still being written (a quarter of it there): it finishes arriving while
    // nothing watches. Not while a create is out: that job would rightly need the user (maybe paid).
    await vi.waitFor(
      () => {
        expect(statSync(join(watched, 'slow-2.png')).size).toBeGreaterThanOrEqual(slow2.length / 4);
        expect(submitting(home)).toBe(0);
      },
      { timeout: 10_000, interval: 10 },
    );
    expect(statSync(join(watched, 'slow-2.png')).size).toBeLessThan(slow2.length);
    host.child.kill('SIGKILL');
    await host.exited;
    const firstRun = host.out();
    await makeImages(watched, ['while-down-1.png', 'while-down-2.png']);
    writeFileSync(join(watched, 'notes.txt'), 'not an image');
    await Promise.all(slow);

    host = startWatch(home, args);
    const images = readdirSync(watched).filter((n) => n.endsWith('.png'));
    expect(images).toHaveLength(8);
    await until(
      'every image done',
      () => {
        const states = fileStates(home);
        return images.every((n) => states[join(watched, n)] === 'done');
      },
      () => `${firstRun}\n--- restarted ---\n${host.out()}`,
    );
    host.child.kill('SIGINT');
    await host.exited;

    // Exactly once: one paid create per image, one result per image, the text file skipped with its reason.
    expect(creates(await control(ctx.url, 'stats'))).toBe(images.length);
    const results = readdirSync(out).sort();
    expect(results).toEqual(images.map((n) => n.replace('.png', '_upscaler-precision.png')).sort());
    expect(fileStates(home)[join(watched, 'notes.txt')]).toBe('rejected');
    expect(host.out()).toMatch(/skipped .*notes\.txt: this tool does not take \.txt files/);
    // A file still being copied is never taken half-written (and refused as a broken image).
    expect(`${firstRun}${host.out()}`).not.toMatch(/skipped .*slow/);
  }, 120_000);

  it('in the app or web host: a hot folder added through the commands survives a restart of the host', async () => {
    const { home, watched, out } = await scene('app');
    let core = await openCore(home);
    const added = await core.dispatch('hotFolders.add', {
      folder: watched,
      tool: 'upscaler-precision',
      params: { scale_factor: 2 },
      outDir: out,
    });
    expect(added.ok).toBe(true);
    const slow = copySlowly(join(watched, 'slow.png'), await bigPng(3));
    await makeImages(watched, ['a.png']);
    const states = () => fileStates(home);
    await until(
      'a.png queued',
      () => ['queued', 'done'].includes(states()[join(watched, 'a.png')]),
      () => '',
    );
    await core.close();
    await slow;
    await makeImages(watched, ['while-closed.png']);

    core = await openCore(home);
    try {
      await until(
        'every image done',
        () => ['a.png', 'slow.png', 'while-closed.png'].every((n) => states()[join(watched, n)] === 'done'),
        () => JSON.stringify(states()),
      );
      const list = await core.dispatch('hotFolders.list', {});
      expect(list.ok && (list.result as Res<'hotFolders.list'>).folders[0]).toMatchObject({
        folder: watched,
        state: 'active',
        watched: true,
        counts: { done: 3, queued: 0, waiting: 0, failed: 0, skipped: 0 },
        problem: null,
      });
    } finally {
      await core.close();
    }
    expect(creates(await control(ctx.url, 'stats'))).toBe(3);
    expect(readdirSync(out)).toHaveLength(3);
  }, 120_000);

  it('with the web host running the queue, `mediadesk watch` on the same folder waits: each file is queued once, by the host', async () => {
    const { home, watched, out } = await scene('both');
    const core = await openCore(home);
    let cli: ReturnType<typeof startWatch> | null = null;
    try {
      const added = await core.dispatch('hotFolders.add', { folder: watched, tool: 'upscaler-precision', outDir: out });
      expect(added.ok).toBe(true);
      cli = startWatch(home, [watched, '--settle', '1s']);
      await until('the CLI to wait', () => cli!.out().includes('another MediaDesk process runs the queue'), cli.out);
      const names = ['one.png', 'two.png', 'three.png'];
      await makeImages(watched, names);
      await until(
        'every image done',
        () => names.every((n) => fileStates(home)[join(watched, n)] === 'done'),
        () => JSON.stringify(fileStates(home)),
      );
    } finally {
      cli?.child.kill('SIGINT');
      await cli?.exited;
      await core.close();
    }
    expect(cli!.out()).not.toMatch(/^queued /m);
    expect(creates(await control(ctx.url, 'stats'))).toBe(3);
    expect(readdirSync(out)).toHaveLength(3);
  }, 120_000);

  it('a file that lands while the folder is first read, and nothing after it, is still taken', async () => {
    const { home, watched, out } = await scene('between');
    await makeImages(watched, ['between.png']);
    const core = await openCore(home, undefined, missedByFirstRead('between.png'));
    try {
      await core.dispatch('hotFolders.add', { folder: watched, tool: 'upscaler-precision', outDir: out });
      await until(
        'between.png done',
        () => fileStates(home)[join(watched, 'between.png')] === 'done',
        () => JSON.stringify(fileStates(home)),
      );
    } finally {
      await core.close();
    }
    expect(creates(await control(ctx.url, 'stats'))).toBe(1);
    expect(readdirSync(out)).toEqual(['between_upscaler-precision.png']);
  }, 60_000);

  it("a folder's longer wait: a copy that stalls is taken only once it is whole, past the default wait", async () => {
    const { home, watched, out } = await scene('stall');
    // The watcher's time stands still until the test moves it: each wait is passed exactly, not slept.
    const clock = new TestClock();
    const core = await openCore(home, clock);
    const state = (path: string) => fileStates(home)[path];
    try {
      const added = await core.dispatch('hotFolders.add', { folder: watched, tool: 'upscaler-precision', outDir: out });
      expect(folderOf(added).settleSeconds).toBe(2);
      // Changed after it was added: the watcher takes the new wait for the files that arrive next.
      const changed = await core.dispatch('hotFolders.setSettle', {
        id: folderOf(added).id,
        settleSeconds: 5,
      });
      expect(folderOf(changed).settleSeconds).toBe(5);
      const path = join(watched, 'stalled.png');
      const bytes = await bigPng(4);
      const half = Math.floor(bytes.length / 2);
      // A copy that stalls half way (a network share): its first half now, the rest once shown waiting.
      writeFileSync(path, bytes.subarray(0, half));
      clock.advance(TICK_MS);
      await vi.waitFor(() => expect(state(path)).toBe('waiting'), WAIT);
      // A folder at the default 2 s whose whole file arrives a second later: taken at 2 s, when the
      // stalled one has sat 3 s, past the default wait but not its folder's 5 s.
      const other = join(dirname(watched), 'other');
      mkdirSync(other);
      const second = await core.dispatch('hotFolders.add', {
        folder: other,
        tool: 'upscaler-precision',
        outDir: join(dirname(out), 'other-results'),
      });
      expect(folderOf(second).settleSeconds).toBe(2);
      await makeImages(other, ['whole.png']);
      const whole = join(other, 'whole.png');
      clock.advance(1000);
      await vi.waitFor(() => expect(state(whole)).toBe('waiting'), WAIT);
      clock.advance(2000);
      // The same look that takes the whole file leaves the half one waiting.
      await vi.waitFor(() => expect(['queued', 'done']).toContain(state(whole)), WAIT);
      expect(state(path)).toBe('waiting');
      appendFileSync(path, bytes.subarray(half));
      await vi.waitFor(() => expect(seenSize(home, path)).toBe(bytes.length), WAIT);
      clock.advance(5000);
      await vi.waitFor(() => expect(['done', 'failed', 'rejected', 'skipped']).toContain(state(path)), WAIT);
      expect(state(path)).toBe('done');
    } finally {
      await core.close();
    }
    expect(creates(await control(ctx.url, 'stats'))).toBe(2);
    expect(readdirSync(out)).toEqual(['stalled_upscaler-precision.png']);
  }, 120_000);
});
