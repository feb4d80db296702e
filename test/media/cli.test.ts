// `mediadesk video check` as a user runs it: a real process, real files, JSON on stdout, exit codes.
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeClip, makeImage, tempDir } from './fixtures.ts';
import { serveFolder } from './server.ts';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'mediadesk.js');

let dir = '';
let cleanup = async () => {};
let good = '';
let slow = '';
let small = '';
let still = '';

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
  [good, slow, small, still] = await Promise.all([
    makeClip(dir, 'good', { w: 640, h: 640, fps: 30, sec: 2, faststart: true }),
    makeClip(dir, 'slow', { w: 320, h: 240, fps: 14, sec: 2, ext: 'mov' }),
    makeImage(dir, 'small', 200, 300, 'png'),
    makeImage(dir, 'still', 320, 240, 'gif'),
  ]);
});

afterAll(async () => {
  await cleanup();
});

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, MEDIADESK_HOME: join(dir, 'home') },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('mediadesk video check', () => {
  it('exits 0 with an ok report', async () => {
    const r = await cli(['video', 'check', '--family', 'upscaler', good]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({
      ok: true,
      errors: [],
      references: [
        {
          source: good,
          ok: true,
          errors: [],
          probe: { container: 'mp4', durationSec: 2, fps: 30, width: 640, height: 640 },
        },
      ],
    });
    expect(r.stderr).toBe('');
    // Without --family: the upscaler's, the one family that takes a video file.
    const unnamed = await cli(['video', 'check', good]);
    expect([unnamed.code, unnamed.stdout]).toEqual([0, r.stdout]);
  });

  it('exits 1 and names file, rule and value when a rule fails', async () => {
    const r = await cli(['video', 'check', '--family', '25', '--prompt', 'blend @Image1 with @Image3', small, still]);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout);
    expect(report.ok).toBe(false);
    expect(report.references[1].errors).toEqual([
      { rule: 'image.format', message: 'still.gif: format gif is not JPG or PNG or WebP' },
    ]);
    expect(report.errors.map((e: { rule: string }) => e.rule)).toEqual(['image.mention']);
    expect(r.stderr).toBe('');
    const up = await cli(['video', 'check', '--family', 'upscaler', '--body', '{"target_fps": 60}', slow]);
    expect(up.code).toBe(1);
    expect(JSON.parse(up.stdout).references[0].errors).toEqual([
      {
        rule: 'upscaler.fps',
        message: 'slow.mov: frame rate 14 fps is below the 15 fps needed when target_fps is set',
      },
    ]);
  });

  it('checks image-edit references with --family image50-edit and a body', async () => {
    const r = await cli(['video', 'check', '--family', 'image50-edit', small]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).references[0].errors[0]).toEqual({
      rule: 'image.minSize',
      message: 'small.png: 200x300 is below the 256x256 minimum',
    });
    const up = await cli(['video', 'check', '--family', 'upscaler', '--body', '{"target_fps": 60}', good]);
    expect(up.code).toBe(0);
  });

  it('names a citation of media the family takes none of, and counts the prompt in code points', async () => {
    const r = await cli(['video', 'check', '--family', '25', '--prompt', 'like @Image1, moving as @Video1', small]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).errors).toEqual([
      {
        rule: 'video.mention',
        message: 'prompt: @Video1 cites a reference video, but video 2.5 takes none',
      },
    ]);
    // 40,000 emoji are 160 KB of UTF-8: past what one argument may hold, so the body comes from a file.
    const bodyFile = join(dir, 'emoji-body.json');
    await writeFile(bodyFile, JSON.stringify({ prompt: '\u{1F3AC}'.repeat(40_000) }));
    const emoji = await cli(['video', 'check', '--family', '25', '--body', `@${bodyFile}`, small]);
    expect([emoji.code, JSON.parse(emoji.stdout).errors]).toEqual([0, []]);
  });

  it('probes start and end frames given as URLs in the body, with no SOURCE needed', async () => {
    const [gif, png] = await Promise.all([
      makeImage(dir, 'start', 640, 480, 'gif'),
      makeImage(dir, 'end', 640, 480, 'png'),
    ]);
    const server = await serveFolder(dir);
    try {
      const body = { image: `${server.url}/${basename(gif)}`, image_end: `${server.url}/${basename(png)}` };
      const r = await cli(['video', 'check', '--family', '2x', '--body', JSON.stringify(body)]);
      expect(r.code).toBe(1);
      const report = JSON.parse(r.stdout);
      expect(report.frames).toEqual([
        {
          field: 'image',
          source: body.image,
          ok: false,
          probe: expect.objectContaining({ container: 'gif', width: 640, height: 480 }),
          errors: [{ rule: 'image.format', message: 'start.gif: format gif is not JPG or PNG' }],
        },
        {
          field: 'image_end',
          source: body.image_end,
          ok: true,
          probe: expect.objectContaining({ container: 'png' }),
          errors: [],
        },
      ]);
      const missing = await cli([
        'video',
        'check',
        '--family',
        'lite',
        '--body',
        JSON.stringify({ image: `${server.url}/gone.png` }),
      ]);
      expect(missing.code).toBe(1);
      expect(JSON.parse(missing.stdout).frames[0]).toMatchObject({
        field: 'image',
        ok: false,
        errors: [{ rule: 'probe' }],
      });
      const fine = await cli(['video', 'check', '--family', '1x', '--body', JSON.stringify({ image: body.image_end })]);
      expect(fine.code).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('probes frames given inline in the body (base64, a data: URI) by their content, named as inline data', async () => {
    const [gif, png] = await Promise.all([
      makeImage(dir, 'inline-start', 640, 480, 'gif'),
      makeImage(dir, 'inline-end', 640, 480, 'png'),
    ]);
    const body = {
      image: `data:image/png;base64,${(await readFile(gif)).toString('base64')}`,
      image_end: (await readFile(png)).toString('base64'),
    };
    const r = await cli(['video', 'check', '--family', '2x', '--body', JSON.stringify(body)]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).frames).toEqual([
      {
        field: 'image',
        source: 'image (inline data)',
        ok: false,
        probe: expect.objectContaining({ container: 'gif', width: 640, height: 480 }),
        errors: [{ rule: 'image.format', message: 'image (inline data): format gif is not JPG or PNG' }],
      },
      {
        field: 'image_end',
        source: 'image_end (inline data)',
        ok: true,
        probe: expect.objectContaining({ container: 'png' }),
        errors: [],
      },
    ]);
    const fine = await cli(['video', 'check', '--family', '1x', '--body', JSON.stringify({ image: body.image_end })]);
    expect(fine.code).toBe(0);
  });

  it('exits 2 on bad usage', async () => {
    const cases = [
      ['video', 'check'],
      ['video', 'check', '--family', 'nope', good],
      ['video', 'frobnicate'],
      ['video', 'check', '--body', '[1]', good],
      ['video', 'check', '--what', good],
    ];
    const results = await Promise.all(cases.map((args) => cli(args)));
    for (const [i, r] of results.entries()) {
      expect(r.code, cases[i].join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^mediadesk video: /);
    }
  });

  it('refuses an option given twice (exit 2) rather than checking against the last one', async () => {
    const cases = [
      ['--family', '2x', '--family', 'upscaler'],
      ['-f', '2x', '--family', 'upscaler'],
      ['--prompt', 'blend @Video1', '--prompt=other'],
      ['--body', '{}', '--body', '{"target_fps": 60}'],
    ];
    const results = await Promise.all(cases.map((opts) => cli(['video', 'check', ...opts, good])));
    for (const [i, r] of results.entries()) {
      const name = cases[i][2].replace(/=.*/, '');
      expect([r.code, r.stdout, r.stderr], cases[i].join(' ')).toEqual([
        2,
        '',
        `mediadesk video: ${name} is given more than once\n`,
      ]);
    }
  });
});
