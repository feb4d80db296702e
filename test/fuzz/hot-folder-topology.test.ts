import fc from 'fast-check';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loopOf, outputLoop } from '../../electron/core/hot-folders/loops.ts';
import { createCore, type Core } from '../../electron/core/index.ts';
import { isWithin } from '../../electron/core/paths.ts';
import { MemorySecretStore } from '../../electron/core/secrets.ts';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import type { Res } from '../../shared/contract/index.ts';
import { fuzzRuns } from './fuzz.ts';

fuzzRuns('test/fuzz/hot-folder-topology.test.ts', { numRuns: 200, timeMs: 10_000 });

/** Folders of a small tree, so that random picks nest, cross and coincide often. */
const folder = fc
  .array(fc.constantFrom('a', 'b', 'c', 'a b', 'é'), { minLength: 0, maxLength: 3 })
  .map((parts) => join('/r', ...parts));
const hotFolder = fc.record({ folder, outDir: folder });

/** The rule, said plainly: results land in outDir or below it; a folder watches only its own files. */
const feeds = (outDir: string, watched: string) => isWithin(outDir, watched) || isWithin(watched, outDir);

describe('hot-folder topologies (nested, crossed, output inside input)', () => {
  it('a set of folders accepted one by one never has an output folder that reaches a watched folder', () => {
    fc.assert(
      fc.property(fc.array(hotFolder, { maxLength: 6 }), (wanted) => {
        const accepted: { id: string; folder: string; outDir: string }[] = [];
        for (const [i, w] of wanted.entries()) {
          if (accepted.some((f) => f.folder === w.folder)) continue;
          const row = { ...w, id: String(i) };
          if (!loopOf(row, [...accepted, row])) accepted.push(row);
        }
        for (const f of accepted)
          for (const g of accepted) expect(feeds(f.outDir, g.folder), `${f.outDir} -> ${g.folder}`).toBe(false);
      }),
    );
  });

  it('outputLoop refuses exactly the outputs that are, contain or lie inside a watched folder', () => {
    fc.assert(
      fc.property(folder, fc.array(folder, { maxLength: 4 }), (outDir, watched) => {
        expect(outputLoop(outDir, watched) !== null).toBe(watched.some((w) => feeds(outDir, w)));
      }),
    );
  });

  it('a prefix that is not a parent ("/r/a b" beside "/r/a") is no loop', () => {
    expect(outputLoop('/r/a b', ['/r/a'])).toBeNull();
    expect(outputLoop('/r/a', ['/r/a b'])).toBeNull();
  });
});

describe('hot-folder topologies added through the commands, real folders and links', () => {
  let root: string;
  let core: Core;
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0 });
    root = realpathSync(mkdtempSync(join(tmpdir(), 'md-fuzz-hot-')));
    for (const d of ['a/x', 'b/y', 'c']) mkdirSync(join(root, d), { recursive: true });
    // A link to a folder inside a: watching or writing through it is the same as through a/x.
    symlinkSync(join(root, 'a', 'x'), join(root, 'lx'));
    symlinkSync(join(root, 'b'), join(root, 'lb'));
    core = await createCore({
      home: join(root, 'home'),
      host: 'cli',
      runQueue: false,
      secrets: new MemorySecretStore(),
      startSandbox: () => startSandbox({ port: 0 }),
      env: { MEDIADESK_API_URL: sandbox.url, MEDIADESK_API_KEY: 'sandbox-owner' },
    });
  });
  afterAll(async () => {
    await core?.close();
    await sandbox?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('whatever is asked, in any order, the folders kept never feed one another', async () => {
    const names = ['a', 'a/x', 'b', 'b/y', 'c', 'lx', 'lb', '.'];
    const pick = fc.constantFrom(...names);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ folder: pick, outDir: pick }), { maxLength: 5 }), async (asks) => {
        const list = async () =>
          ((await core.dispatch('hotFolders.list', {})) as { result: Res<'hotFolders.list'> }).result.folders;
        for (const f of await list()) await core.dispatch('hotFolders.remove', { id: f.id });
        for (const ask of asks)
          await core.dispatch('hotFolders.add', {
            folder: join(root, ask.folder),
            outDir: join(root, ask.outDir),
            tool: 'upscaler-precision',
            params: {},
          });
        const kept = await list();
        // Something is kept whenever the first ask has no loop of its own: the adds were not all refused for another reason.
        if (asks.length && !feeds(realpathSync(join(root, asks[0].outDir)), realpathSync(join(root, asks[0].folder))))
          expect(kept.length).toBeGreaterThan(0);
        for (const f of kept)
          for (const g of kept)
            expect(feeds(realpathSync(f.outDir), realpathSync(g.folder)), `${f.outDir} -> ${g.folder}`).toBe(false);
      }),
      { numRuns: 40 },
    );
  }, 60_000);
});
