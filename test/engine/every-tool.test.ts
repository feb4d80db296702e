import { closeSync, openSync, readSync, readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import type { Engine } from '../../electron/core/engine/engine.ts';
import { ALL_TOOLS, DEFAULT_SLUGS, pathFields, resolvePaths, type ToolEntry } from '../../shared/catalogue/index.ts';
import { OPERATIONS } from '../../shared/official/index.ts';
import { cleanup, engineFor, settle, tmp } from './helpers.ts';
import { makeSamples, requestFor, type Samples } from './tool-requests.ts';

/**
 * Every create of the reference run through the engine against the Sandbox over HTTP, with the
 * least valid request and with every optional field set, each to a result of the right kind on
 * disk. Tools that cannot run from a desktop app are skipped, and said.
 */
const CREATES = OPERATIONS.filter((op) => op.method === 'POST' && op.generates && !op.path.includes('{'));
/** The tool of each create path, with the path-field values (a resolution) that make it. */
const toolOfPath = new Map<string, { tool: ToolEntry; pathParams: Record<string, unknown> }>();
for (const tool of ALL_TOOLS) {
  let combos: Record<string, unknown>[] = [{}];
  for (const f of pathFields(tool))
    combos = combos.flatMap((c) => (f.kind === 'enum' ? f.options : [undefined]).map((o) => ({ ...c, [f.name]: o })));
  for (const pathParams of combos)
    toolOfPath.set(resolvePaths(tool, DEFAULT_SLUGS, pathParams).create, { tool, pathParams });
}

/** What a result file's first bytes say it is. */
function kindOf(file: string): string {
  const head = Buffer.alloc(16);
  const fd = openSync(file, 'r');
  const n = readSync(fd, head, 0, 16, 0);
  closeSync(fd);
  const b = head.subarray(0, n);
  const ascii = (from: number, to: number) => b.subarray(from, to).toString('latin1');
  if (extname(file) === '.txt') return n > 0 ? 'text' : 'empty text';
  if (ascii(1, 4) === 'PNG' || (b[0] === 0xff && b[1] === 0xd8) || (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP'))
    return 'image';
  if (ascii(4, 8) === 'ftyp' || ascii(0, 4) === '\x1aE\xdf\xa3') return 'video';
  if (ascii(0, 3) === 'ID3' || (b[0] === 0xff && (b[1] & 0xe0) === 0xe0) || ascii(8, 12) === 'WAVE') return 'audio';
  if (ascii(0, 4) === 'fLaC' || ascii(0, 4) === 'OggS') return 'audio';
  return `unknown (${b.toString('hex')})`;
}

let sb: RunningSandbox;
let engine: Engine & { close(): Promise<void> };
let dir = '';
let samples: Samples;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, taskDurationMs: 30 });
  dir = tmp('every-tool');
  samples = await makeSamples(dir);
  engine = engineFor(join(dir, 'home'), sb.url, { concurrency: 12 });
  engine.start();
});
afterAll(async () => {
  await engine?.close();
  await sb?.close();
  if (dir) cleanup(dir);
});

describe('every create of the reference, through the engine', () => {
  it('ends each with a result of its kind on disk, with the least request and with every field set', async () => {
    const skipped: string[] = [];
    const runs: { label: string; tool: ToolEntry; jobId: string; out: string; dropped: string[] }[] = [];
    const refused: string[] = [];
    for (const op of CREATES) {
      const { tool, pathParams } = toolOfPath.get(op.path) ?? {};
      if (!tool) {
        refused.push(`${op.path}: no tool makes it`);
        continue;
      }
      if (tool.unusable) {
        skipped.push(`${tool.id} (${op.path}): ${tool.unusable}`);
        continue;
      }
      for (const full of [false, true]) {
        const at = Object.values(pathParams ?? {}).join('-');
        const label = `${tool.id}${at ? ` ${at}` : ''} ${full ? 'full' : 'least'}`;
        const req = requestFor(tool, full, samples, `${sb.url}/__sandbox/health`, pathParams);
        const out = join(dir, 'out', label.replaceAll(' ', '_'));
        try {
          const r = await engine.startBatch({
            tool: tool.id,
            inputs: req.input ? [req.input] : [],
            params: req.params,
            outDir: out,
          });
          if (r.jobIds.length !== 1) throw new Error(`queued ${r.jobIds.length}: ${JSON.stringify(r.rejected)}`);
          runs.push({ label, tool, jobId: r.jobIds[0], out, dropped: req.dropped });
        } catch (err) {
          refused.push(`${label}: ${(err as Error).message}`);
        }
      }
    }
    await settle(
      engine,
      runs.map((r) => r.jobId),
    );
    const failed: string[] = [...refused];
    for (const run of runs) {
      const job = engine.store.get(run.jobId)!;
      if (job.state !== 'done') {
        failed.push(`${run.label}: ${job.state}: ${job.error}`);
        continue;
      }
      const files = readdirSync(run.out, { recursive: true, withFileTypes: true }).filter((d) => d.isFile());
      const kinds = files.map((d) => kindOf(join(d.parentPath, d.name)));
      if (!kinds.length || kinds.some((k) => k !== run.tool.result))
        failed.push(`${run.label}: made ${kinds.join(', ') || 'nothing'}, not ${run.tool.result}`);
    }
    const dropped = runs.filter((r) => r.dropped.length).map((r) => `${r.label}: ${r.dropped.join(', ')}`);
    console.log(
      [
        `${CREATES.length} creates in the reference; ${runs.length} runs through the engine, ${runs.length - failed.length + refused.length} ended with a result of their kind`,
        `skipped ${skipped.length}:`,
        ...skipped.map((s) => `  ${s}`),
        `left out of a full request as the description forbids them beside the rest (${dropped.length}):`,
        ...dropped.map((s) => `  ${s}`),
        ...(failed.length ? [`failed ${failed.length}:`, ...failed.map((s) => `  ${s}`)] : []),
      ].join('\n'),
    );
    expect(failed).toEqual([]);
    expect(runs.length + skipped.length * 2).toBe(CREATES.length * 2);
  }, 300_000);
});
