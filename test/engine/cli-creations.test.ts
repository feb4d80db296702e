import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli.ts';
import { cleanup, makeImages, tmp } from './helpers.ts';

/**
 * A new user on the built-in Sandbox (no key, no API URL): each `mediadesk` command starts its own
 * Sandbox, so the jobs `mediadesk run` made must still be listed by the next command's
 * `mediadesk creations`, as the service lists them.
 */
const dir = tmp('cli-creations');
afterAll(() => cleanup(dir));
const env = { MEDIADESK_HOME: join(dir, 'home'), MEDIADESK_API_URL: '', MEDIADESK_API_KEY: '' };
const cli = (args: string[]) => runCli(args, { env });

describe('mediadesk creations on the built-in Sandbox', () => {
  it('lists the jobs just run through mediadesk run, newest first, and new ones after them', async () => {
    const photos = join(dir, 'photos');
    await makeImages(photos, ['a.png', 'b.png', 'c.png']);
    const run = await cli(['run', 'upscaler-precision', photos, '--out', join(dir, 'out')]);
    expect(run.code, run.err).toBe(0);
    const listed = await cli(['creations', '--json']);
    expect(listed.code, listed.err).toBe(0);
    const page = JSON.parse(listed.out) as { items: { toolName: string }[]; total: number };
    expect(page.total).toBe(3);
    expect(page.items.map((c) => c.toolName)).toEqual(Array(3).fill('upscaler-precision'));

    const prompt = await cli(['run', 'hires', '--param', 'prompt=a red kite', '--param', 'resolution=1k']);
    expect(prompt.code, prompt.err).toBe(0);
    const again = await cli(['creations']);
    expect(again.err).toContain('(4 creations)');
    expect(again.out.split('\n')[1]).toMatch(/\s+hires\s+image\s+a red kite$/);
  });
});
