import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Locator, Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import sharp from 'sharp';
import { newHome, startHost, type HostHandle } from './host.ts';
import { setFaults, startSandboxProcess, watchErrors, type SandboxProcess } from './studio-helpers.ts';
import { uploadTo } from '../sandbox-upload.ts';

// Every video family of the builder, through the UI, against a Sandbox process with short tasks.
// One Sandbox and one host for the file (the builder keeps its state per tool); the live-backend
// test starts a host of its own.
const TASK_MS = 400;
let host: HostHandle;
let sandbox: SandboxProcess;
let dir: string;
let startPng: string;
let endPng: string;

test.beforeAll(async () => {
  sandbox = await startSandboxProcess(TASK_MS);
  host = await startHost(newHome(), sandbox.env);
  dir = mkdtempSync(join(tmpdir(), 'md-video-families-'));
  startPng = join(dir, 'start.png');
  endPng = join(dir, 'end.png');
  await sharp({ create: { width: 640, height: 480, channels: 3, background: { r: 30, g: 60, b: 160 } } })
    .png()
    .toFile(startPng);
  await sharp({ create: { width: 640, height: 480, channels: 3, background: { r: 220, g: 140, b: 40 } } })
    .png()
    .toFile(endPng);
});
test.afterAll(async () => {
  await host?.stop();
  await sandbox?.stop();
});

async function openFamily(page: Page, label: string, variant?: string) {
  await page.goto(`${host.url}#video`);
  await page.getByTestId('family-picker').getByText(label, { exact: true }).click();
  if (variant) await page.getByTestId('variant-select').selectOption(variant);
  await expect(page.getByTestId('video-form')).toHaveAttribute('data-tool', variant ?? /.+/);
}

/** The file picker of a single media field of the settings form (start frame, end frame, image). */
const framePicker = (page: Page, field: string) =>
  page.getByTestId('tool-form').locator(`[data-field="${field}"] input[type="file"]`);

/** Picks a local image into a ToolForm media field and waits until the form holds it as a file the core reads. */
async function pickFrame(page: Page, field: string, file: string) {
  await framePicker(page, field).setInputFiles(file);
  await expect(page.getByTestId(`field-${field}`)).toHaveValue(new RegExp(`/${basename(file).replace('.', '\\.')}$`));
}

/** The newest result row whose prompt (or input name) contains `text`. */
const resultFor = (page: Page, text: string) => page.getByTestId('result-job').filter({ hasText: text }).first();

/** A finished video result: done, a local .mp4 path, and a player that loads and plays it. */
async function expectPlayed(job: Locator) {
  await expect(job).toHaveAttribute('data-state', 'done', { timeout: 30_000 });
  await expect(job.getByTestId('result-path')).toContainText(/\/.+\.mp4$/);
  await expect(job.getByTestId('result-expiry')).toHaveCount(0);
  const v = job.getByTestId('video-element');
  await expect.poll(() => v.evaluate((el: HTMLVideoElement) => el.duration), { timeout: 15_000 }).toBeGreaterThan(0);
  await v.evaluate((el: HTMLVideoElement) => {
    el.muted = true;
    return el.play();
  });
  await expect
    .poll(() => v.evaluate((el: HTMLVideoElement) => el.readyState), { timeout: 15_000 })
    .toBeGreaterThanOrEqual(2);
  await v.evaluate((el: HTMLVideoElement) => el.pause());
  await expect(job.getByTestId('video-duration')).not.toHaveText('–');
}

async function submit(page: Page, jobs = 1) {
  await expect(page.getByTestId('submit')).toBeEnabled();
  await page.getByTestId('submit').click();
  await expect(page.getByTestId('submit-status')).toContainText(`${jobs} job${jobs === 1 ? '' : 's'} queued`);
}

test('2.x with a start and an end frame: expiry while generating, then a file path and a played video', async ({
  page,
}) => {
  const errors = watchErrors(page);
  await openFamily(page, '2.x generation');
  await expect(page.getByTestId('video-form')).toHaveAttribute('data-tool', 'video-2x');
  const prompt = 'Keyframes: a blue dusk turns to an orange dawn';
  await page.getByTestId('field-prompt').fill(prompt);
  await page.getByTestId('field-duration').getByRole('radio', { name: '10' }).check();
  await pickFrame(page, 'image', startPng);
  await pickFrame(page, 'image_end', endPng);
  await expect(page.getByTestId('error-image_end')).toHaveCount(0);
  await expect(page.getByTestId('error-image')).toHaveCount(0);

  // Longer tasks for this one job, so the row is seen before its download: the URL's 24 h show.
  await setFaults(sandbox.url, { taskDurationMs: 4000 });
  try {
    await submit(page);
    const job = resultFor(page, prompt);
    await expect(job).not.toHaveAttribute('data-state', 'done');
    await expect(job.getByTestId('result-expiry')).toHaveText(/^expires in 2[34] h$/);
    await expectPlayed(job);
  } finally {
    await setFaults(sandbox.url, { taskDurationMs: TASK_MS });
  }
  expect(errors).toEqual([]);
});

for (const variant of ['i2v-endframe', 'i2v-endframe-fast']) {
  test(`image to video with end frame (${variant}): image_end alone is blocked on its field; with both it completes`, async ({
    page,
  }) => {
    const errors = watchErrors(page);
    await openFamily(page, 'Image to video, end frame', variant);
    const prompt = `The lamp flickers on (${variant})`;
    await page.getByTestId('field-prompt').fill(prompt);

    // The end frame alone: the shared rule, beside the end frame, before anything is sent.
    await pickFrame(page, 'image_end', endPng);
    await expect(page.getByTestId('error-image_end')).toContainText('image_end requires image');
    await expect(page.getByTestId('error-image')).toHaveCount(0);
    await expect(page.getByTestId('submit')).toBeDisabled();
    await expect(page.getByTestId('submit-status')).toContainText('1 problem to fix');

    await pickFrame(page, 'image', startPng);
    await expect(page.getByTestId('error-image_end')).toHaveCount(0);
    await page.getByTestId('field-duration').getByRole('radio', { name: '6' }).check();
    await submit(page);
    const job = resultFor(page, prompt);
    await expect(
      job.getByText(
        variant.endsWith('fast') ? 'Image to video with end frame (fast)' : 'Image to video with end frame',
        { exact: true },
      ),
    ).toBeVisible();
    await expectPlayed(job);
    expect(errors).toEqual([]);
  });
}

test('lite text to video (4/6/8 s, 16:9 or 9:16, 20,000 characters) and lite image to video (image required)', async ({
  page,
}) => {
  const errors = watchErrors(page);
  await openFamily(page, 'Lite', 'lite-t2v');

  // The bounds of the family, as the form offers them.
  await expect(page.getByTestId('prompt-count')).toHaveText('0 / 20,000');
  const durations = page.getByTestId('field-duration').getByRole('radio');
  await expect(durations).toHaveCount(3);
  await expect(page.getByTestId('field-duration')).toHaveText(/4\s+6\s+8/);
  await expect(page.getByTestId('field-duration').getByRole('radio', { name: '8' })).toBeChecked();
  const aspects = page.getByTestId('field-aspect_ratio').locator('option');
  await expect(aspects).toHaveText(['16:9', '9:16']);
  await expect(page.getByTestId('field-aspect_ratio')).toHaveValue('16:9');

  // One character over the limit: counted, flagged on the prompt, submit blocked.
  await page.getByTestId('field-prompt').fill('x'.repeat(20_001));
  await expect(page.getByTestId('prompt-count')).toHaveText('20,001 / 20,000');
  await expect(page.getByTestId('error-prompt')).toContainText(/at most 20,?000 characters/);
  await expect(page.getByTestId('submit')).toBeDisabled();

  const t2v = 'Lite: paper boats drift down a rainy gutter';
  await page.getByTestId('field-prompt').fill(t2v);
  await expect(page.getByTestId('error-prompt')).toHaveCount(0);
  await page.getByTestId('field-duration').getByRole('radio', { name: '4' }).check();
  await page.getByTestId('field-aspect_ratio').selectOption('9:16');
  await submit(page);
  const t2vJob = resultFor(page, t2v);
  await expect(t2vJob.getByText('Lite text to video', { exact: true })).toBeVisible();
  await expectPlayed(t2vJob);

  // Image to video: the image is required (shown on its field at the first Submit), then completes.
  await page.getByTestId('variant-select').selectOption('lite-i2v');
  await expect(page.getByTestId('video-form')).toHaveAttribute('data-tool', 'lite-i2v');
  const i2v = 'Lite: the still comes alive, leaves stir';
  await page.getByTestId('field-prompt').fill(i2v);
  await page.getByTestId('field-duration').getByRole('radio', { name: '6' }).check();
  await page.getByTestId('submit').click();
  await expect(page.getByTestId('error-image')).toContainText('is required');
  await expect(page.getByTestId('submit-status')).toContainText('problem');
  await pickFrame(page, 'image', startPng);
  await expect(page.getByTestId('error-image')).toHaveCount(0);
  await submit(page);
  const i2vJob = resultFor(page, i2v);
  await expect(i2vJob.getByText('Lite image to video', { exact: true })).toBeVisible();
  await expectPlayed(i2vJob);
  expect(errors).toEqual([]);
});

test('video upscaler: a 12 fps input is refused with target_fps (file, rule, measured fps); the valid one completes', async ({
  page,
}) => {
  const errors = watchErrors(page);
  const ok = join(dir, 'clip-24fps.mp4');
  const slow = join(dir, 'clip-12fps.mp4');
  const ff = (rate: number, out: string) =>
    execFileSync('ffmpeg', [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      `testsrc=size=640x640:rate=${rate}`,
      '-t',
      '2',
      '-pix_fmt',
      'yuv420p',
      '-preset',
      'ultrafast',
      out,
    ]);
  ff(24, ok);
  ff(12, slow);

  await openFamily(page, 'Upscaler');
  await expect(page.getByTestId('video-form')).toHaveAttribute('data-tool', 'video-upscaler');
  await expect(page.getByTestId('field-resolution')).toHaveValue('2k');
  await expect(page.getByTestId('field-resolution').locator('option:checked')).toHaveText('2k');

  const list = page.getByTestId('refs-video');
  // A picture named .mp4 is called out by what it is, not by its name.
  const fake = join(dir, 'still.mp4');
  copyFileSync(startPng, fake);
  await page.getByTestId('pick-video').setInputFiles(fake);
  await expect(list.getByTestId('ref-error')).toHaveText(['still.mp4: an image (png) is not MP4 or MOV']);
  await list.getByRole('button', { name: 'Remove still.mp4' }).click();

  await page.getByTestId('pick-video').setInputFiles([ok, slow]);
  const okItem = list.getByTestId('ref-item').filter({ hasText: 'clip-24fps.mp4' });
  const slowItem = list.getByTestId('ref-item').filter({ hasText: 'clip-12fps.mp4' });
  await expect(okItem.getByTestId('ref-status')).toContainText('passes');
  await expect(slowItem.getByTestId('ref-probe')).toContainText('12 fps');
  // Without target_fps a 12 fps input is fine.
  await expect(slowItem.getByTestId('ref-status')).toContainText('passes');

  await page.getByTestId('field-target_fps').getByRole('radio', { name: '30' }).check();
  const err = slowItem.getByTestId('ref-error');
  await expect(err).toContainText('clip-12fps.mp4');
  await expect(err).not.toContainText('(rule ');
  await expect(err).toContainText('12 fps');
  await expect(err).toContainText('15 fps');
  await expect(okItem.getByTestId('ref-error')).toHaveCount(0);
  await expect(page.getByTestId('submit')).toBeDisabled();
  await expect(page.getByTestId('submit-status')).toContainText('problem');

  await list.getByRole('button', { name: 'Remove clip-12fps.mp4' }).click();
  await expect(list.getByTestId('ref-item')).toHaveCount(1);
  await expect(okItem.getByTestId('ref-status')).toContainText('passes');
  await submit(page);
  const job = resultFor(page, 'clip-24fps.mp4');
  await expect(job.getByText('Video upscaler', { exact: true })).toBeVisible();
  await expectPlayed(job);
  // One batch of the one valid video: the removed clip was never sent.
  await expect(page.getByTestId('result-job').filter({ hasText: 'clip-12fps.mp4' })).toHaveCount(0);

  // Remote inputs are one job each: an upl_vid_ id and an asset URL (uploaded through the service's flow).
  await list.getByRole('button', { name: 'Remove clip-24fps.mp4' }).click();
  const up = () => uploadTo(sandbox.url, readFileSync(ok), 'video/mp4');
  const [a, b] = [await up(), await up()];
  expect(a.id).toMatch(/^upl_vid_/);
  await page.getByTestId('url-video').fill(a.id);
  await page.getByTestId('add-url-video').click();
  await page.getByTestId('url-video').fill(b.url);
  await page.getByTestId('add-url-video').click();
  await expect(list.getByTestId('ref-item')).toHaveCount(2);
  await expect(list.getByTestId('ref-item').filter({ hasText: a.id }).getByTestId('ref-status')).toContainText(
    'checked by the service',
  );
  await expect(list.getByTestId('ref-item').nth(1).getByTestId('ref-status')).not.toContainText('probing');
  await expect(list.getByTestId('ref-error')).toHaveCount(0);
  await submit(page, 2);
  const remote = page.getByTestId('result-job');
  await expect(remote.nth(0)).toHaveAttribute('data-state', 'done', { timeout: 30_000 });
  await expect(remote.nth(1)).toHaveAttribute('data-state', 'done', { timeout: 30_000 });
  await expect(remote.filter({ hasText: 'clip-24fps.mp4' })).toHaveCount(1);
  await expect(remote).toHaveCount(3);
  expect(errors).toEqual([]);
});

test('live backend: a local video is kept on a loopback base URL and a real https one alike (it is uploaded)', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  const clip = join(dir, 'clip-live.mp4');
  execFileSync('ffmpeg', [
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=640x640:rate=24',
    '-t',
    '2',
    '-pix_fmt',
    'yuv420p',
    '-preset',
    'ultrafast',
    clip,
  ]);
  const home = newHome();
  // A keychain entry of this test's own, so a developer's real key is never touched. No API env:
  // the backend comes from Settings only.
  const live = await launch(home, {
    MEDIADESK_KEYCHAIN_SERVICE: `MediaDesk-e2e-vf-${process.pid}`,
    MEDIADESK_API_URL: '',
    MEDIADESK_API_KEY: '',
  });
  try {
    await page.goto(`${live.url}#settings`);
    await page.locator('#key-input').fill('sandbox-owner');
    await page.getByRole('button', { name: 'Set', exact: true }).click();
    await expect(page.getByTestId('key-status')).toContainText('An API key is set');
    await page.getByTestId('baseUrl').fill(sandbox.url);
    await page.getByTestId('baseUrl').blur();
    await expect(page.getByTestId('saved')).toHaveText('Saved: base URL.');
    await page.getByLabel('Live service').check();
    await expect(page.getByTestId('backend-badge')).toContainText(`Live · ${new URL(sandbox.url).host}`);

    // Loopback "live" (a Sandbox process): the engine uploads local videos through the service's
    // flow, so the builder offers local files.
    await page.getByTestId('nav-video').click();
    await page.getByTestId('family-picker').getByText('Upscaler', { exact: true }).click();
    await expect(page.getByTestId('pick-video')).toBeAttached();
    await page.getByTestId('pick-video').setInputFiles(clip);
    const item = page.getByTestId('refs-video').getByTestId('ref-item');
    await expect(item.getByTestId('ref-status')).toContainText('passes');
    await expect(page.getByTestId('submit')).toBeEnabled();

    // A real https service uploads them the same way: the clip stays, nothing blocks Submit.
    await page.getByTestId('nav-settings').click();
    await page.getByTestId('baseUrl').fill('https://api.example.com');
    await page.getByTestId('baseUrl').blur();
    await expect(page.getByTestId('backend-badge')).toContainText('Live · api.example.com');
    await page.getByTestId('nav-video').click();
    await expect(page.getByTestId('pick-video')).toBeAttached();
    await expect(item.getByTestId('ref-status')).toContainText('passes');
    await expect(page.getByTestId('error-video')).toHaveCount(0);
    await expect(page.getByTestId('submit')).toBeEnabled();
    // 2.5's reference images take local files there too (sent inline).
    await page.getByTestId('family-picker').getByText('2.5 multi-shot', { exact: true }).click();
    await expect(page.getByTestId('pick-reference_images')).toBeAttached();
    await expect(page.getByTestId('pick-reference_audios')).toBeAttached();
    // A bad URL is named once, on its item, not again under the field as `reference_images.0`.
    await page.getByTestId('url-reference_images').fill('ftp://example.com/a.png');
    await page.getByTestId('add-url-reference_images').click();
    await expect(page.getByTestId('refs-reference_images').getByTestId('ref-error')).toHaveText(
      'ftp://example.com/a.png: not an HTTPS URL',
    );
    await expect(page.getByTestId('error-reference_images')).toHaveCount(0);

    // Leave no entry behind in the keychain of whoever runs the test.
    await page.getByTestId('nav-settings').click();
    await page.getByRole('button', { name: 'Clear', exact: true }).click();
    await expect(page.getByTestId('key-status')).toContainText('No API key is set');
  } finally {
    await live.stop();
  }
  expect(errors).toEqual([]);
});
