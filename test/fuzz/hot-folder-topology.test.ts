import fc from 'fast-check';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loopOf, outputLoop } from '../../electron/core/hot-folders/loops.ts';
import { isWithin } from '../../electron/core/paths.ts';
import { fuzzRuns } from './fuzz.ts';

fuzzRuns('test/fuzz/hot-folder-topology.test.ts', { numRuns: 500, timeMs: 10_000 });

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
