// `mediadesk loras train` and `mediadesk apps mine`, each its own process against a Sandbox over HTTP.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../cli.ts';
import { makeImages, sandboxAndFolder } from './helpers.ts';

const at = sandboxAndFolder('cli-loras', 300);

describe('mediadesk loras and apps mine', () => {
  it('trains a style LoRA from a folder to its new id, and the catalogue lists it as mine', async () => {
    const folder = join(at.dir, 'shoot');
    await makeImages(folder, ['1.png', '2.png', '3.png', '4.png', '5.png', '6.png', '7.png'], 20);
    const env = { ...cliEnv(join(at.dir, 'home'), at.url), MEDIADESK_POLL_MIN_MS: '50' };
    const r = await runCli(['loras', 'train', '--kind', 'style', '--name', 'cli-look', folder], { env });
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/^7 images; Price unknown/m);
    const id = /^style LoRA cli-look trained: id (\d+)$/m.exec(r.out)?.[1];
    expect(id).toBeDefined();
    const listed = await runCli(['loras', 'list', '--json'], { env });
    expect(JSON.parse(listed.out)).toContainEqual(
      expect.objectContaining({ id: Number(id), name: 'cli-look', custom: true }),
    );
    const trainings = await runCli(['loras', 'trainings'], { env });
    expect(trainings.out).toMatch(/done .* style +cli-look +7 +\d+/);
  });

  it('refuses a character without its gender, naming it, and sends nothing', async () => {
    const folder = join(at.dir, 'faces');
    await makeImages(
      folder,
      Array.from({ length: 8 }, (_, i) => `${i}.png`),
      20,
    );
    const r = await runCli(['loras', 'train', '--kind', 'character', '--name', 'hero', folder], {
      env: cliEnv(join(at.dir, 'home2'), at.url),
    });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/The character LoRA cannot be trained: gender is required/);
    expect(r.err).not.toMatch(/queued/);
  });

  it('lists my own flows with the drafts marked', async () => {
    const r = await runCli(['apps', 'mine'], { env: cliEnv(join(at.dir, 'home3'), at.url) });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^uqzQLDr2Aw +draft +My Custom Sketch to Image$/m);
    expect(r.out).toMatch(/^pS7kQ2xa +Product shot studio$/m);
  });
});
