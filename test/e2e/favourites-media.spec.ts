import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import sharp from 'sharp';
import { expect, test, type Launch, type SandboxAt } from './fixtures.ts';
import { holdAnswers, newHome } from './host.ts';
import { desk, watchErrors } from './studio-helpers.ts';

// The service's own video and audio tools, each found by a word on its screen, filled and run.
let launch: Launch;
let sandboxAt: SandboxAt;
test.beforeEach(({ launch: l, sandboxAt: s }) => {
  launch = l;
  sandboxAt = s;
});

const dir = mkdtempSync(join(tmpdir(), 'md-fav-media-'));
const ff = (args: string[], out: string) => {
  if (!existsSync(out)) execFileSync('ffmpeg', ['-v', 'error', '-y', ...args, out]);
  return out;
};
const clip = () =>
  ff(['-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=24', '-t', '1', '-pix_fmt', 'yuv420p'], join(dir, 'clip.mp4'));
const voice = () => ff(['-f', 'lavfi', '-i', 'sine=frequency=440:duration=1'], join(dir, 'voice.wav'));
async function portrait() {
  const out = join(dir, 'face.png');
  if (!existsSync(out))
    await sharp({ create: { width: 320, height: 320, channels: 3, background: '#c96' } })
      .png()
      .toFile(out);
  return out;
}

/** A host on the worker's Sandbox, `screen` open on the tool found by `query`. */
async function openTool(page: Page, screen: 'video' | 'music', query: string, tool: string) {
  const sandbox = await sandboxAt(200);
  const host = await launch(newHome(), sandbox.env);
  await page.goto(`${host.url}#${screen}`);
  await page.getByTestId('tool-search').fill(query);
  await page.locator(`[data-testid="tool-result"][data-tool="${tool}"]`).getByTestId('tool-pick').click();
  if (screen === 'video') await expect(page.getByTestId('video-form')).toHaveAttribute('data-tool', tool);
  else await expect(page.getByTestId(`music-${tool}`)).toBeChecked();
  return host;
}

/** A file into a media field of the settings form; the form then holds it. */
async function pickInto(page: Page, field: string, file: string) {
  await page.getByTestId('tool-form').locator(`[data-field="${field}"] input[type="file"]`).setInputFiles(file);
  await expect(page.getByTestId(`field-${field}`)).not.toHaveValue('');
}

/** Submit, then the newest result done with a file of `ext` on disk, and the Queue showing the batch. */
async function expectDone(page: Page, button: 'submit', ext: RegExp, title: string) {
  await expect(page.getByTestId(button)).toBeEnabled();
  await page.getByTestId(button).click();
  const job = page.getByTestId('result-job').first();
  await expect(job).toHaveAttribute('data-state', 'done', { timeout: 30_000 });
  const path = (await job.getByTestId('result-path').textContent())!.trim();
  expect(path).toMatch(ext);
  expect(existsSync(path)).toBe(true);
  await page.getByTestId('nav-queue').click();
  await expect(page.getByTestId('batch-row').filter({ hasText: title }).getByTestId('batch-count')).toHaveText('1/1');
}

for (const [tool, query, title] of [
  ['video-upscaler-creative', 'creative video', 'Creative video upscaler'],
  ['video-upscaler-turbo', 'turbo', 'Turbo video upscaler'],
  ['video-upscaler-precision', 'precision video', 'Precision video upscaler'],
] as const)
  test(`${title}: a local clip uploaded, upscaled and downloaded`, async ({ page }) => {
    const errors = watchErrors(page);
    await openTool(page, 'video', query, tool);
    await expect(page.getByTestId('field-resolution')).toHaveValue('2k');
    await page.getByTestId('field-resolution').selectOption('1k');
    await page.getByTestId('pick-video').setInputFiles(clip());
    await expect(page.getByTestId('refs-video').getByTestId('ref-status')).toContainText('passes');
    await expectDone(page, 'submit', /\.mp4$/, title);
    expect(errors).toEqual([]);
  });

test('Kling image to video: a model, an image, a prompt and 10 s', async ({ page }) => {
  const errors = watchErrors(page);
  await openTool(page, 'video', 'kling', 'kling-i2v');
  await page.getByTestId('field-model').selectOption('kling-v2');
  await pickInto(page, 'image', await portrait());
  await page.getByTestId('field-prompt').fill('Kling: the face turns to the light');
  await page.getByTestId('field-duration').selectOption('10');
  await expectDone(page, 'submit', /\.mp4$/, 'Kling image to video');
  expect(errors).toEqual([]);
});

test('WAN image to video: a first frame uploaded, 1080p, 8 s', async ({ page }) => {
  const errors = watchErrors(page);
  await openTool(page, 'video', 'wan', 'wan-i2v');
  await pickInto(page, 'start_image_url', await portrait());
  await page.getByTestId('field-prompt').fill('WAN: a slow push in on the face');
  await page.getByTestId('field-duration').fill('8');
  await expectDone(page, 'submit', /\.mp4$/, 'WAN image to video');
  expect(errors).toEqual([]);
});

test('a Submit that lands while a picked frame is still probed waits for the probe, then is sent', async ({ page }) => {
  const errors = watchErrors(page);
  let holding = false;
  const held = await holdAnswers(page, (cmd) => holding && cmd === 'media.check');
  await openTool(page, 'video', 'wan', 'wan-i2v');
  await page.getByTestId('field-prompt').fill('WAN: a slow push in on the face');
  holding = true;
  await pickInto(page, 'start_image_url', await portrait());
  await expect(page.getByTestId('submit')).toHaveText('Checking references…');
  // As a press that lands as the probe starts, before the button reads disabled.
  await page.getByTestId('video-form').evaluate((form: HTMLFormElement) => form.requestSubmit());
  await expect.poll(() => held.length).toBe(1);
  holding = false;
  held.pop()!();
  await expect(page.getByTestId('result-job').first()).toHaveAttribute('data-state', 'done', { timeout: 30_000 });
  expect(errors).toEqual([]);
});

test('lip-sync: a clip and a voice track, both uploaded', async ({ page }) => {
  const errors = watchErrors(page);
  await openTool(page, 'video', 'lip', 'lip-sync');
  await page.getByTestId('pick-video_url').setInputFiles(clip());
  await expect(page.getByTestId('refs-video_url').getByTestId('ref-status')).toContainText('passes');
  await pickInto(page, 'audio_url', voice());
  await expectDone(page, 'submit', /\.mp4$/, 'Lip-sync a video');
  expect(errors).toEqual([]);
});

test('talking portrait: a portrait and a voice, on the fast model', async ({ page }) => {
  const errors = watchErrors(page);
  await openTool(page, 'video', 'talking', 'talking-portrait');
  await page.getByTestId('field-variant').selectOption('veed-fabric-1-0-fast');
  await pickInto(page, 'image_url', await portrait());
  await pickInto(page, 'audio_url', voice());
  await expectDone(page, 'submit', /\.mp4$/, 'Talking portrait');
  expect(errors).toEqual([]);
});

test('sound effects: a description and a length', async ({ page }) => {
  const errors = watchErrors(page);
  await openTool(page, 'music', 'sound effect', 'sound-effects');
  await page.getByTestId('field-text').fill('a door creaks open in an empty hall');
  await page.getByTestId('field-duration_seconds').fill('3.5');
  await expectDone(page, 'submit', /\.(mp3|wav)$/, 'Sound effects');
  expect(errors).toEqual([]);
});

test('voiceover: text in the default voice', async ({ page }) => {
  const errors = watchErrors(page);
  await openTool(page, 'music', 'elevenlabs', 'voiceover');
  await expect(page.getByTestId('field-voice_id')).not.toHaveValue('');
  await page.getByTestId('field-text').fill('Welcome to the spring collection.');
  await expectDone(page, 'submit', /\.(mp3|wav)$/, 'Voiceover');
  expect(errors).toEqual([]);
});

test('audio isolation: one sound out of a local track', async ({ page }) => {
  const errors = watchErrors(page);
  await openTool(page, 'music', 'isolate', 'audio-isolation');
  await page.getByTestId('field-description').fill('the tone');
  await pickInto(page, 'audio', voice());
  await expectDone(page, 'submit', /\.(mp3|wav)$/, 'Audio isolation');
  expect(errors).toEqual([]);
});

test('audio isolation: a sound out of a video, found by a box around its source', async ({ page }) => {
  const errors = watchErrors(page);
  const host = await openTool(page, 'music', 'isolate', 'audio-isolation');
  await page.getByTestId('field-description').fill('the tone');
  await pickInto(page, 'video', clip());
  await expect(page.getByTestId('field-sample_fps')).toHaveValue('2');
  for (const [edge, px] of [
    ['x1', 8],
    ['y1', 8],
    ['x2', 200],
    ['y2', 160],
  ] as const)
    await page.getByTestId(`field-${edge}`).fill(String(px));
  await page.getByTestId('field-sample_fps').fill('3');
  await expectDone(page, 'submit', /\.(mp3|wav)$/, 'Audio isolation');
  const [batch] = await desk<{ id: string }[]>(host, 'batches.list', {});
  const { jobs } = await desk<{ jobs: { params: Record<string, unknown> }[] }>(host, 'jobs.list', {
    batchId: batch.id,
  });
  expect(jobs[0].params).toMatchObject({ x1: 8, y1: 8, x2: 200, y2: 160, sample_fps: 3 });
  // The description: the box is only for a video; beside an audio file the form says it is ignored.
  await page.getByTestId('nav-music').click();
  await pickInto(page, 'audio', voice());
  await expect(page.getByTestId('warning-x1')).toContainText('applies to a video only');
  expect(errors).toEqual([]);
});
