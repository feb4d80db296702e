import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../cli.ts';
import { sandboxAndFolder } from './helpers.ts';
import { makeSamples } from './tool-requests.ts';
import { ALL_TOOLS } from '../../shared/catalogue/index.ts';

/** `mediadesk tools` and a generated tool run from a terminal, against the Sandbox over HTTP. */
const at = sandboxAndFolder('cli-tools', 50);
const cli = (args: string[]) => runCli(args, { env: cliEnv(join(at.dir, 'home'), at.url), cwd: at.dir });
const filesIn = (dir: string) => readdirSync(dir, { recursive: true, withFileTypes: true }).filter((d) => d.isFile());

describe('mediadesk tools', () => {
  it('lists every tool, curated and generated, with id, name, kind and the path it creates with', async () => {
    const r = await cli(['tools', '--json']);
    expect(r.code, r.err).toBe(0);
    const tools = JSON.parse(r.out) as { id: string; name: string; kind: string; path: string; generated: boolean }[];
    expect(tools.map((t) => t.id)).toEqual(ALL_TOOLS.map((t) => t.id));
    expect(tools.find((t) => t.id === 'image-upscaler-precision')).toMatchObject({
      name: 'Image upscaler precision',
      kind: 'image',
      path: '/v1/ai/image-upscaler-precision',
      generated: true,
    });
    expect(tools.find((t) => t.id === 'relight')).toMatchObject({ generated: false, path: '/v1/ai/image-relight' });
    expect(tools.find((t) => t.id === 'upscaler-precision')).toMatchObject({ generated: false, kind: 'image' });
    const text = await cli(['tools']);
    expect(text.out).toMatch(
      /^image-upscaler-precision +Image upscaler precision +image +\/v1\/ai\/image-upscaler-precision$/m,
    );
    expect(text.out).toContain(`${ALL_TOOLS.length} tools`);
    const found = await cli(['tools', '--search', 'Upscaler VIDEO', '--json']);
    expect(JSON.parse(found.out).map((t: { id: string }) => t.id)).toEqual(
      ALL_TOOLS.filter((t) => /upscaler/i.test(t.title + t.id) && t.result === 'video').map((t) => t.id),
    );
    expect(JSON.parse(found.out).length).toBeGreaterThanOrEqual(3);
    expect((await cli(['tools', '--search', 'no such words'])).code).toBe(1);
  });

  it('shows a tool’s fields: type, bounds, default, required, help; and why one cannot run', async () => {
    const r = await cli(['tools', 'show', 'image-upscaler-precision', '--json']);
    expect(r.code, r.err).toBe(0);
    const shown = JSON.parse(r.out);
    expect(shown.fields.find((f: { name: string }) => f.name === 'sharpen')).toEqual({
      name: 'sharpen',
      type: 'int',
      bounds: '>= 0, <= 100',
      default: 50,
      required: false,
      help: expect.stringMatching(/Sharpen the image/),
    });
    const text = await cli(['tools', 'show', 'image-upscaler-precision']);
    expect(text.out).toMatch(/^image +image \(a file: sent inline; or a URL\) +yes +Base64 image to upscale/m);
    expect(text.out).toContain('price: no published price');
    const icon = await cli(['tools', 'show', 'text-to-icon']);
    expect(icon.out).toMatch(/cannot be run from MediaDesk: the service answers it only by calling its webhook_url/);
    const unknown = await cli(['tools', 'show', 'no-such-tool']);
    expect([unknown.code, unknown.err.trim()]).toEqual([
      2,
      'mediadesk tools: unknown tool "no-such-tool" (mediadesk tools lists them)',
    ]);
  });

  it('runs a generated tool with --param, a media field taking a local path relative to the shell', async () => {
    const samples = await makeSamples(at.dir);
    const out = join(at.dir, 'relit');
    const r = await cli([
      'run',
      'image-upscaler-precision',
      '--param',
      'image=photo.png',
      '--param',
      'sharpen=60',
      '--param',
      'filter_nsfw=true',
      '--out',
      out,
    ]);
    expect(r.code, r.err).toBe(0);
    const made = filesIn(out);
    expect(made).toHaveLength(1);
    expect(readFileSync(join(made[0].parentPath, made[0].name)).subarray(1, 4).toString()).toBe('PNG');

    // A video batch input beside an audio file that only travels as a URL: uploaded first.
    const synced = join(at.dir, 'synced');
    const lip = await cli(['run', 'lip-sync', samples.video, '--param', 'audio_url=voice.wav', '--out', synced]);
    expect(lip.code, lip.err).toBe(0);
    const video = filesIn(synced);
    expect(readFileSync(join(video[0].parentPath, video[0].name)).subarray(4, 8).toString()).toBe('ftyp');

    const missing = await cli(['run', 'image-upscaler-precision', '--param', 'image=nope.png', '--out', out]);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('--param image: no such file:');
    const icon = await cli(['run', 'text-to-icon', '--param', 'prompt=a cat', '--out', out]);
    expect(icon.code).toBe(2);
    expect(icon.err).toMatch(/Text to icon cannot be run from MediaDesk/);
  });
});
