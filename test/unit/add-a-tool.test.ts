import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { defaultsOf, getTool, TOOLS, validateRequest } from '../../shared/catalogue/index.ts';
import { findOperation, requestProblems } from '../../shared/official/index.ts';
import { bodyOf } from '../../electron/core/api/tools.ts';
import { runCli } from '../../electron/host/cli/main.ts';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { MUSIC_TOOLS, STUDIO_SECTIONS, STUDIO_TOOLS, VIDEO_FAMILIES } from '../../renderer/src/lib/tool-lists.ts';
import { NEW_TOOLS } from './fixtures/new-tools.ts';
import { capture } from '../cli.ts';

/**
 * Adding a tool touches only its catalogue entry and its operations in the reference: the fixture's
 * entries are loaded into both as data, and every part (CLI, Sandbox, the Studio's lists) runs as it is.
 */
vi.mock('../../shared/catalogue/tools.ts', async (importOriginal) => {
  const catalogue = await importOriginal<typeof import('../../shared/catalogue/tools.ts')>();
  const { NEW_TOOLS: added } = await import('./fixtures/new-tools.ts');
  return { ...catalogue, TOOLS: [...catalogue.TOOLS, ...added] };
});
vi.mock('../../shared/official/docs-and-spec.json', async (importOriginal) => {
  const file = (await importOriginal<{ default: { operations: unknown[] } }>()).default;
  const { NEW_OPERATIONS: added } = await import('./fixtures/new-tools.ts');
  return { default: { ...file, operations: [...file.operations, ...added] } };
});

let sandbox: RunningSandbox;
const home = mkdtempSync(join(tmpdir(), 'md-add-a-tool-'));
beforeAll(async () => {
  sandbox = await startSandbox({ taskDurationMs: 50 });
});
afterAll(async () => {
  await sandbox.close();
  rmSync(home, { recursive: true, force: true });
});

/** `mediadesk …` in this process, so it sees the catalogue this test loaded; against the Sandbox over HTTP. */
async function cli(argv: string[]) {
  const out = capture();
  const err = capture();
  const env = { MEDIADESK_HOME: home, MEDIADESK_API_URL: sandbox.url, MEDIADESK_API_KEY: 'sandbox-owner' };
  const code = await runCli(argv, { stdout: out.stream, stderr: err.stream, env, home });
  return { code, out: out.text(), err: err.text() };
}

const api = (path: string, body: unknown) =>
  fetch(sandbox.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-magnific-api-key': 'sandbox-owner' },
    body: JSON.stringify(body),
  });

describe('a new image, video and audio tool: a catalogue entry and a reference entry each', () => {
  it('are in the catalogue, and agree with the reference on every request the app builds', () => {
    for (const added of NEW_TOOLS) {
      const tool = getTool(added.id);
      expect(TOOLS).toContain(tool);
      const params = { ...defaultsOf(tool), prompt: 'a lighthouse at dusk' };
      expect(validateRequest(tool, params).ok, tool.id).toBe(true);
      const op = findOperation('POST', tool.create);
      expect(op?.generates, tool.id).toBe(tool.result);
      expect(requestProblems(op!, bodyOf(tool, params)), tool.id).toEqual([]);
    }
  });

  it('the Studio, the Video builder and Music list them', () => {
    expect(STUDIO_TOOLS.map((t) => t.id)).toContain('fixture-sketch');
    const image = STUDIO_SECTIONS.find((s) => s.label === 'Image')!;
    expect(image.tools.map((t) => t.id)).toContain('fixture-sketch');
    // A new variant of the lite family: the lite tab offers it beside the other two.
    expect(VIDEO_FAMILIES.find((f) => f.id === 'lite')?.tools).toEqual(['lite-t2v', 'lite-i2v', 'fixture-lite-r2v']);
    expect(VIDEO_FAMILIES.map((f) => f.label)).toEqual([
      '2.x generation',
      '2.5 multi-shot',
      'Image to video, end frame',
      'Lite',
      'Kling',
      'WAN',
      'Lip-sync',
      'Upscaler',
    ]);
    expect(MUSIC_TOOLS).toEqual([
      'music',
      'music-instrumental',
      'music-variants',
      'sound-effects',
      'voiceover',
      'audio-isolation',
      'fixture-jingle',
    ]);
  });

  it('the Sandbox accepts a valid request and refuses a bad field, by the reference', async () => {
    const ok = await api('/v1/ai/text-to-image/fixture-sketch', {
      prompt: 'a lighthouse',
      aspect_ratio: 'widescreen_16_9',
    });
    expect(ok.status).toBe(200);
    expect((await ok.json()).data).toMatchObject({ status: 'CREATED', generated: [] });

    const misspelt = await api('/v1/ai/text-to-image/fixture-sketch', { prompt: 'a lighthouse', aspect: 'square_1_1' });
    expect(misspelt.status).toBe(400);
    expect((await misspelt.json()).invalid_params).toEqual([
      { field: 'aspect', name: 'aspect', reason: 'is not a parameter of this endpoint' },
    ]);
    const outOfRange = await api('/v1/ai/music-generation/fixture-jingle', { prompt: 'a jingle', length_seconds: 31 });
    expect(outOfRange.status).toBe(400);
    expect((await outOfRange.json()).invalid_params).toEqual([
      { field: 'length_seconds', name: 'length_seconds', reason: 'must be at most 30' },
    ]);
  });

  it('the Sandbox serves what the reference says a path generates, with no catalogue entry for it', async () => {
    const created = await api('/v1/ai/fixture-reference-only', { prompt: 'a jingle' });
    expect(created.status).toBe(200);
    const id = (await created.json()).data.task_id;
    let task: { status: string; generated: string[] } | undefined;
    await vi.waitFor(
      async () => {
        const res = await fetch(`${sandbox.url}/v1/ai/fixture-reference-only/${id}`, {
          headers: { 'x-magnific-api-key': 'sandbox-owner' },
        });
        task = (await res.json()).data;
        expect(task!.status).toBe('COMPLETED');
      },
      { timeout: 5000, interval: 50 },
    );
    const result = await fetch(task!.generated[0]);
    expect(result.headers.get('content-type')).toBe('audio/mpeg');
  });

  it('the CLI lists them and runs each against the Sandbox, saving an image, a video and a track', async () => {
    const named = await cli(['tools']);
    expect(named.code).toBe(0);
    for (const t of NEW_TOOLS) expect(named.out).toContain(t.id);

    for (const [id, ext] of [
      ['fixture-sketch', 'png'],
      ['fixture-lite-r2v', 'mp4'],
      ['fixture-jingle', 'mp3'],
    ] as const) {
      const out = join(home, `out-${id}`);
      const r = await cli(['run', id, '--param', 'prompt=a lighthouse at dusk', '--out', out]);
      expect(r.code, r.err).toBe(0);
      const files = readdirSync(out);
      expect(files, id).toEqual([expect.stringMatching(new RegExp(`_${id}\\.${ext}$`))]);
      if (ext === 'png') expect((await sharp(readFileSync(join(out, files[0]))).metadata()).format).toBe('png');
    }
  });
});
