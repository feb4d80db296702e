import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page, Route } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import sharp from 'sharp';
import { dropFiles, newHome, startHost, watchLiveRegions, type HostHandle } from './host.ts';
import {
  expectRefusalFocusesPrompt,
  shot,
  startSandboxProcess,
  watchErrors,
  type SandboxProcess,
} from './studio-helpers.ts';
import { serveFolder, type FileServer } from '../media/server.ts';

// One Sandbox (tasks of 500 ms) and one host for the file: the builder keeps its state per tool.
let host: HostHandle;
let sandbox: SandboxProcess;
let dir: string;
/** Serves `dir` on loopback: frames and references given as URLs, as a CDN would serve them. */
let server: FileServer;
test.beforeAll(async () => {
  sandbox = await startSandboxProcess(500);
  host = await startHost(newHome(), sandbox.env);
  dir = mkdtempSync(join(tmpdir(), 'md-video-'));
  server = await serveFolder(dir);
});
test.afterAll(async () => {
  await server?.close();
  await host?.stop();
  await sandbox?.stop();
});

/** A raw command through the page's own bridge socket (the form would not let this through). */
async function rawStart(page: Page, payload: unknown) {
  return page.evaluate(async (payload) => {
    const ws = new WebSocket(
      `${location.origin.replace('http', 'ws')}/ws?token=${sessionStorage.getItem('desk-token')}`,
    );
    await new Promise((r) => ws.addEventListener('open', r, { once: true }));
    const reply = await new Promise<{
      ok: boolean;
      error?: { message: string; invalid?: { field: string; reason: string }[] };
    }>((resolve) => {
      ws.addEventListener('message', (m) => resolve(JSON.parse(String(m.data))));
      ws.send(JSON.stringify({ id: 1, cmd: 'batches.start', payload }));
    });
    ws.close();
    return reply;
  }, payload);
}

async function openFamily(page: Page, label: string) {
  await page.goto(`${host.url}#video`);
  await page.getByTestId('family-picker').getByText(label, { exact: true }).click();
}

test('a two-shot 2.5 video with a reference image: validated, submitted, completed and played', async ({ page }) => {
  const errors = watchErrors(page);
  const ref = join(dir, 'hero.png');
  await sharp({ create: { width: 640, height: 480, channels: 3, background: { r: 200, g: 120, b: 40 } } })
    .png()
    .toFile(ref);

  await openFamily(page, '2.5 multi-shot');
  await expect(page.getByTestId('video-form')).toHaveAttribute('data-tool', 'video-25');
  await page.getByTestId('add-shot').click();
  await page.getByTestId('add-shot').click();
  await page.getByTestId('shot-prompt-1').fill('A lighthouse at dawn, slow push in on');
  await page.getByTestId('shot-duration-1').fill('4');
  await page.getByTestId('shot-prompt-2').fill('Waves break on the rocks below');
  await page.getByTestId('shot-duration-2').fill('5');
  await expect(page.getByTestId('shots-total')).toContainText('Total 9 s of 4 to 30 s');

  // Dropped (picked) reference: instant checks, then the core's probe with what it measured.
  await page.getByTestId('pick-reference_images').setInputFiles(ref);
  const item = page.getByTestId('refs-reference_images').getByTestId('ref-item');
  await expect(item.getByTestId('ref-status')).toContainText('passes');
  await expect(item.getByTestId('ref-probe')).toContainText('PNG');
  await expect(item.getByTestId('ref-probe')).toContainText('640×480');
  await expect(item.getByTestId('ref-cite')).toHaveText('@Image1');

  // The @-mention helper inserts at the caret of the focused shot prompt.
  await page.getByTestId('shot-prompt-1').click();
  await page.getByTestId('shot-prompt-1').press('End');
  await page.getByTestId('mention-Image1').click();
  await expect(page.getByTestId('shot-prompt-1')).toHaveValue('A lighthouse at dawn, slow push in on @Image1 ');
  await expect(page.getByTestId('prompt-count')).toContainText('/ 40,000');

  await expect(page.getByTestId('submit')).toBeEnabled();
  await page.getByTestId('submit').click();
  await expect(page.getByTestId('submit-status')).toContainText('1 job queued');
  const job = page.getByTestId('result-job').first();
  await expect(job).toHaveAttribute('data-state', 'done', { timeout: 60_000 });
  await expect(job.getByTestId('result-path')).toContainText('.mp4');
  const v = job.getByTestId('video-element');
  await expect.poll(() => v.evaluate((el: HTMLVideoElement) => el.duration), { timeout: 15_000 }).toBeGreaterThan(0);
  await v.evaluate((el: HTMLVideoElement) => {
    el.muted = true;
    return el.play();
  });
  await expect
    .poll(() => v.evaluate((el: HTMLVideoElement) => el.readyState), { timeout: 15_000 })
    .toBeGreaterThanOrEqual(2);
  await v.evaluate((el: HTMLVideoElement) => {
    el.pause();
    el.currentTime = 0;
  });
  await expect(job.getByTestId('video-duration')).not.toHaveText('–');
  await job.scrollIntoViewIfNeeded();
  await shot(page, 'video');
  // For review: dark theme and a smaller window (not committed).
  await page.evaluate(() => (document.documentElement.dataset.theme = 'dark'));
  await page.setViewportSize({ width: 1024, height: 700 });
  await page.screenshot({ path: join(tmpdir(), 'md-video-dark-1024.png') });
  await page.evaluate(() => delete document.documentElement.dataset.theme);
  await page.setViewportSize({ width: 1280, height: 800 });
  expect(errors).toEqual([]);
});

test('invalid combinations are shown on the field they concern: shared pre-check, core and the Sandbox 400', async ({
  page,
}) => {
  const errors = watchErrors(page);
  await openFamily(page, '2.x generation');
  await page.getByTestId('field-prompt').fill('A red kite over the dunes');

  // Frames given as URLs are probed: these are real PNGs on a loopback server.
  await sharp({ create: { width: 640, height: 480, channels: 3, background: '#204080' } })
    .png()
    .toFile(join(dir, 'start.png'));
  await sharp({ create: { width: 640, height: 480, channels: 3, background: '#804020' } })
    .png()
    .toFile(join(dir, 'end.png'));

  // image_end without image: the shared rule, at once, beside the end frame.
  await page.getByTestId('field-image_end').fill(`${server.url}/end.png`);
  await expect(page.getByTestId('error-image_end')).toContainText('image_end requires image');
  await expect(page.getByTestId('submit')).toBeDisabled();

  // With the start frame given, the rule is met.
  await page.getByTestId('field-image').fill(`${server.url}/start.png`);
  await expect(page.getByTestId('error-image_end')).toHaveCount(0);

  // The Sandbox answers the same combination with a 400 naming the field.
  const res = await fetch(`${sandbox.url}/v1/ai/video/seedance-2-pro-720p`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-magnific-api-key': 'sandbox-owner' },
    body: JSON.stringify({ prompt: 'x', image_end: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB' }),
  });
  expect(res.status).toBe(400);
  const body = (await res.json()) as { invalid_params: { field: string; reason: string }[] };
  expect(body.invalid_params.map((p) => p.field)).toContain('image_end');

  // The core enforces the same shared rules on a raw batches.start sent through the page's bridge.
  const raw = await rawStart(page, {
    tool: 'video-2x',
    params: { prompt: 'x', image_end: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB' },
  });
  expect(raw.ok).toBe(false);
  expect(raw.error?.invalid).toContainEqual({
    field: 'image_end',
    reason: 'image_end requires image (the start frame)',
  });
  await page.getByTestId('field-image').fill('');
  await page.getByTestId('field-image_end').fill('');

  // Reference images take URLs, not uploaded-file ids: said on the item before anything is sent.
  await openFamily(page, '2.5 multi-shot');
  await page.getByTestId('url-reference_images').fill('upl_vid_x');
  await page.getByTestId('add-url-reference_images').click();
  await expect(page.getByTestId('refs-reference_images').getByTestId('ref-error')).toHaveText(
    'upl_vid_x: Reference images takes URLs only, not uploaded-file ids',
  );
  await expect(page.getByTestId('submit')).toBeDisabled();
  await page
    .getByTestId('refs-reference_images')
    .getByRole('button', { name: /Remove/ })
    .click();

  // A 400 only the server can give (an upload id it never issued) comes back on its field.
  await openFamily(page, 'Upscaler');
  await page.getByTestId('url-video').fill('upl_vid_neverissued1');
  await page.getByTestId('add-url-video').click();
  await expect(page.getByTestId('refs-video').getByTestId('ref-status')).toContainText('checked by the service');
  await page.getByTestId('submit').click();
  await expect(page.getByTestId('result-job').first()).toHaveAttribute('data-state', 'failed', { timeout: 30_000 });
  await expect(page.getByTestId('error-video')).toBeVisible();
  await expect(page.getByTestId('error-video').first()).toContainText(/upl_vid_|upload/i);
  expect(errors).toEqual([]);
});

test('a reference that breaks the rules names the file and what is wrong with it, no rule id; the core refuses it too', async ({
  page,
}) => {
  const errors = watchErrors(page);
  // A GIF under a PNG's name: the picker and the name let it through, only the probe tells.
  const bad = join(dir, 'poster.png');
  await sharp({ create: { width: 640, height: 480, channels: 3, background: '#553311' } })
    .gif()
    .toFile(bad);
  // A web page saved under an MP3's name, and an Ogg file the list does not take.
  const fakeMp3 = join(dir, 'theme.mp3');
  writeFileSync(fakeMp3, '<!doctype html><title>Sign in to download</title>');
  const ogg = join(dir, 'hum.ogg');
  writeFileSync(ogg, 'OggS');
  await openFamily(page, '2.5 multi-shot');
  await page.getByTestId('field-prompt').fill('A poster like @Image1, to the beat of @Audio1');
  await page.getByTestId('pick-reference_images').setInputFiles(bad);
  const images = page.getByTestId('refs-reference_images');
  await expect(images.getByTestId('ref-error')).toHaveText('poster.png: format gif is not JPG or PNG or WebP');
  await expect(images).not.toContainText('(rule ');
  await expect(images.getByTestId('ref-probe')).toContainText('GIF');
  await expect(images.getByTestId('ref-probe')).toContainText('640×480');
  await expect(page.getByTestId('submit')).toBeDisabled();
  await expect(page.getByTestId('submit-status')).toContainText('problems to fix');
  // Audio in a format the list does not take is named at once, from its name.
  await page.getByTestId('pick-reference_audios').setInputFiles(ogg);
  await expect(page.getByTestId('refs-reference_audios').getByTestId('ref-error')).toHaveText(
    'hum.ogg: format ogg is not MP3 or WAV',
  );
  await expect(page.getByTestId('submit-status')).toContainText('2 problems to fix');

  // The core refuses them too (enforcement), with the same wording, through the bridge; it also
  // reads the audio's content, which the name cannot tell.
  const reply = await rawStart(page, {
    tool: 'video-25',
    params: { prompt: 'x @Image1 @Audio1', resolution: '720p', reference_images: [bad], reference_audios: [fakeMp3] },
  });
  expect(reply.ok).toBe(false);
  expect(reply.error?.invalid).toContainEqual({
    field: 'reference_images',
    reason: 'poster.png: format gif is not JPG or PNG or WebP',
  });
  expect(
    reply.error?.invalid?.some(
      (p) => p.field === 'reference_audios' && /theme\.mp3: not an MP3 or WAV file \(its content is /.test(p.reason),
    ),
    JSON.stringify(reply.error?.invalid),
  ).toBe(true);
  expect(errors).toEqual([]);
});

test('files still being added when the family changes are checked, and their findings filed, under the family they were added to', async ({
  page,
}) => {
  const errors = watchErrors(page);
  const files: string[] = [];
  for (const n of [1, 2, 3]) {
    files.push(join(dir, `still-${n}.png`));
    // The third is a GIF under a PNG's name: only the core's probe, answering late, tells.
    const img = sharp({ create: { width: 400, height: 400, channels: 3, background: { r: n * 60, g: 80, b: 40 } } });
    await (n === 3 ? img.gif() : img.png()).toFile(files[n - 1]);
  }
  // The browser host copies picked files to the host first: held until the family has been switched.
  const held: Route[] = [];
  let holding = true;
  await page.route('**/upload?**', (route) => (holding ? void held.push(route) : route.continue()));
  const wsOpen = page.waitForEvent('websocket');
  await openFamily(page, '2.5 multi-shot');
  const ws = await wsOpen;
  await page.getByTestId('pick-reference_images').setInputFiles(files);
  await expect.poll(() => held.length).toBe(3);
  await expect(page.getByTestId('refs-reference_images').getByTestId('ref-status').first()).toContainText('copying');
  await page.getByTestId('family-picker').getByText('2.x generation', { exact: true }).click();
  await expect(page.getByTestId('video-form')).toHaveAttribute('data-tool', 'video-2x');
  // The copies finish and the check runs, its answer arriving while 2.x is on screen.
  const answered = ws.waitForEvent('framereceived', {
    predicate: (f) => String(f.payload).includes('still-3.png: format gif'),
  });
  holding = false;
  for (const r of held) await r.continue();
  await answered;
  await page.getByTestId('family-picker').getByText('2.5 multi-shot', { exact: true }).click();
  // Back on 2.5: the GIF is named on its item, and each image measured.
  const items = page.getByTestId('refs-reference_images').getByTestId('ref-item');
  await expect(items.getByTestId('ref-probe')).toHaveCount(3);
  await expect(items.nth(2).getByTestId('ref-error')).toHaveText('still-3.png: format gif is not JPG or PNG or WebP');
  await expect(items.getByTestId('ref-status')).toHaveText(['✓ passes', '✓ passes', '']);
  expect(errors).toEqual([]);
});

test('removing a cited reference keeps every citation naming the same file, in the prompt and the shots', async ({
  page,
}) => {
  const errors = watchErrors(page);
  const files = await Promise.all(
    ['red', 'green', 'blue'].map(async (name, i) => {
      const p = join(dir, `${name}.png`);
      await sharp({ create: { width: 320, height: 320, channels: 3, background: ['#c33', '#3c3', '#33c'][i] } })
        .png()
        .toFile(p);
      return p;
    }),
  );
  await openFamily(page, '2.5 multi-shot');
  await page.getByTestId('pick-reference_images').setInputFiles(files);
  const items = page.getByTestId('refs-reference_images').getByTestId('ref-item');
  await expect(items.getByTestId('ref-status')).toHaveText(['✓ passes', '✓ passes', '✓ passes']);
  await page.getByTestId('field-prompt').fill('A car in @Image3 paint, lit like @Image1');
  await page.getByTestId('add-shot').click();
  await page.getByTestId('shot-prompt-1').fill('Close on @Image2 then @Image3');

  await page.getByRole('button', { name: 'Remove red.png' }).click();
  await expect(items).toHaveCount(2);
  // blue was @Image3 and is @Image2 now; green was @Image2 and is @Image1; red's citation is gone.
  await expect(page.getByTestId('field-prompt')).toHaveValue('A car in @Image2 paint, lit like');
  await expect(page.getByTestId('shot-prompt-1')).toHaveValue('Close on @Image1 then @Image2');
  await expect(page.getByTestId('cite-note')).toContainText(
    'Removed red.png: its citation @Image1 was taken out of the prompt',
  );
  await expect(page.getByTestId('error-reference_images')).toHaveCount(0);
  await expect(page.getByTestId('submit')).toBeEnabled();
  expect(errors).toEqual([]);
});

test('a citation of media the family takes none of, or beyond its list, is named on the prompt that holds it; the core refuses it too', async ({
  page,
}) => {
  const errors = watchErrors(page);
  await openFamily(page, '2.5 multi-shot');
  await page.getByTestId('field-prompt').fill('Like @Image1, moving as @Video1');
  await expect(page.getByTestId('error-prompt')).toHaveText([
    '@Image1 cites a reference image, but none is given',
    '@Video1 cites a reference video, but video 2.5 takes none',
  ]);
  await expect(page.getByTestId('submit')).toBeDisabled();
  await page.getByTestId('add-shot').click();
  await page.getByTestId('shot-prompt-1').fill('Over the hum of @Audio1');
  await expect(page.getByTestId('error-shots')).toHaveText([
    'Shot 1 prompt: @Audio1 cites a reference audio, but none is given',
  ]);
  await expect(page.getByTestId('submit-status')).toContainText('3 problems to fix');

  // Through the bridge, past the form: the core applies the same rule before anything is sent.
  const raw = await rawStart(page, { tool: 'video-25', params: { prompt: 'moving as @Video1', resolution: '720p' } });
  expect(raw.error?.invalid).toEqual([
    { field: 'prompt', reason: '@Video1 cites a reference video, but video 2.5 takes none' },
  ]);

  // 2.x takes no reference media at all.
  await page.getByTestId('family-picker').getByText('2.x generation', { exact: true }).click();
  await page.getByTestId('field-prompt').fill('To the beat of @Audio1');
  await expect(page.getByTestId('error-prompt')).toHaveText([
    '@Audio1 cites a reference audio, but video 2.x takes none',
  ]);
  expect(errors).toEqual([]);
});

test('the prompt counter counts an emoji as one character, as the limit and the Sandbox do', async ({ page }) => {
  const errors = watchErrors(page);
  await openFamily(page, 'Lite');
  const clapper = '\u{1F3AC}';
  await page.getByTestId('field-prompt').fill(clapper.repeat(20_000));
  await expect(page.getByTestId('prompt-count')).toHaveText('20,000 / 20,000');
  await expect(page.getByTestId('error-prompt')).toHaveCount(0);
  await expect(page.getByTestId('submit')).toBeEnabled();
  await page.getByTestId('field-prompt').press('End');
  await page.getByTestId('field-prompt').pressSequentially(clapper);
  await expect(page.getByTestId('prompt-count')).toHaveText('20,001 / 20,000');
  await expect(page.getByTestId('error-prompt')).toHaveText('must be at most 20000 characters');
  await expect(page.getByTestId('submit')).toBeDisabled();
  expect(errors).toEqual([]);
});

test('a start or end frame given as a URL is probed before anything is paid for: format named on its field, the core refuses it too', async ({
  page,
}) => {
  const errors = watchErrors(page);
  await sharp({ create: { width: 640, height: 480, channels: 3, background: '#226644' } })
    .gif()
    .toFile(join(dir, 'dusk.gif'));
  await sharp({ create: { width: 640, height: 480, channels: 3, background: '#664422' } })
    .png()
    .toFile(join(dir, 'dawn.png'));
  writeFileSync(join(dir, 'signin.png'), '<!doctype html><title>Sign in to view this file</title>');
  const creates = async () =>
    (
      (await (await fetch(`${sandbox.url}/__sandbox/stats`)).json()) as {
        creates: Record<string, Record<string, number>>;
      }
    ).creates;
  const before = JSON.stringify(await creates());
  const live = await watchLiveRegions(page);

  await openFamily(page, '2.x generation');
  await page.getByTestId('field-prompt').fill('Dusk turns to dawn');
  await page.getByTestId('field-image').fill(`${server.url}/dusk.gif`);
  await expect(page.getByTestId('error-image')).toHaveText('dusk.gif: format gif is not JPG or PNG');
  // It holds Submit: said at once, in an alert already in the page.
  await expect.poll(async () => (await live()).alerted.join(' ')).toContain('dusk.gif: format gif is not JPG or PNG');
  await expect(page.getByTestId('submit')).toBeDisabled();
  // A page that is no image (a sign-in wall behind the link) is named too.
  await page.getByTestId('field-image_end').fill(`${server.url}/signin.png`);
  await expect(page.getByTestId('error-image_end')).not.toContainText('(rule ');
  await expect(page.getByTestId('submit-status')).toContainText('2 problems to fix');

  // Past the form, the core probes the same URL and refuses the batch.
  const raw = await rawStart(page, {
    tool: 'i2v-endframe-fast',
    params: { prompt: 'Dusk turns to dawn', image: `${server.url}/dusk.gif` },
  });
  expect(raw.error?.invalid).toEqual([{ field: 'image', reason: 'dusk.gif: format gif is not JPG or PNG' }]);

  await page.getByTestId('field-image').fill(`${server.url}/dawn.png`);
  await page.getByTestId('field-image_end').fill(`${server.url}/dawn.png`);
  await expect(page.getByTestId('error-image')).toHaveCount(0);
  await expect(page.getByTestId('error-image_end')).toHaveCount(0);
  await expect(page.getByTestId('submit')).toBeEnabled();
  expect(JSON.stringify(await creates())).toBe(before);
  expect(errors).toEqual([]);
});

test('a start or end frame picked as a file is probed by its content, not its name or the picker: refused on its field, Submit held, the core refuses it too', async ({
  page,
}) => {
  const errors = watchErrors(page);
  // Each named .png, so the picker's type filter lets every one through: only the content tells.
  const file = (name: string) => join(dir, name);
  await sharp({ create: { width: 640, height: 480, channels: 3, background: '#226644' } })
    .gif()
    .toFile(file('picked-dusk.png'));
  await sharp({ create: { width: 640, height: 480, channels: 3, background: '#446622' } })
    .webp()
    .toFile(file('picked-noon.png'));
  writeFileSync(file('picked-signin.png'), '<!doctype html><title>Sign in to view this file</title>');
  await sharp({ create: { width: 640, height: 480, channels: 3, background: '#664422' } })
    .png()
    .toFile(file('picked-dawn.png'));
  const creates = async () =>
    (
      (await (await fetch(`${sandbox.url}/__sandbox/stats`)).json()) as {
        creates: Record<string, Record<string, number>>;
      }
    ).creates;
  const before = JSON.stringify(await creates());
  const picker = (field: string) => page.getByTestId('tool-form').locator(`[data-field="${field}"] input[type="file"]`);

  await openFamily(page, '2.x generation');
  await page.getByTestId('field-prompt').fill('Dusk turns to dawn');
  await picker('image').setInputFiles(file('picked-dusk.png'));
  await expect(page.getByTestId('field-image')).toHaveValue(/\/picked-dusk\.png$/);
  await expect(page.getByTestId('error-image')).toHaveText('picked-dusk.png: format gif is not JPG or PNG');
  await expect(page.getByTestId('submit')).toBeDisabled();
  // A web page saved under an image's name is named too.
  await picker('image_end').setInputFiles(file('picked-signin.png'));
  await expect(page.getByTestId('error-image_end')).toContainText(
    'picked-signin.png: not a video or image this app can read',
  );
  await expect(page.getByTestId('error-image_end')).not.toContainText('(rule ');
  await expect(page.getByTestId('submit-status')).toContainText('2 problems to fix');

  // Past the form, the core reads the same file and refuses the batch.
  const raw = await rawStart(page, {
    tool: 'i2v-endframe',
    params: { prompt: 'Dusk turns to dawn', image: file('picked-dusk.png') },
  });
  expect(raw.error?.invalid).toEqual([{ field: 'image', reason: 'picked-dusk.png: format gif is not JPG or PNG' }]);

  // Real PNGs pass, as they did.
  await picker('image').setInputFiles(file('picked-dawn.png'));
  await picker('image_end').setInputFiles(file('picked-dawn.png'));
  await expect(page.getByTestId('error-image')).toHaveCount(0);
  await expect(page.getByTestId('error-image_end')).toHaveCount(0);
  await expect(page.getByTestId('submit')).toBeEnabled();

  // After a first Submit the button stays enabled; a refused frame still holds it.
  await openFamily(page, 'Lite');
  await page.getByTestId('variant-select').selectOption('lite-i2v');
  await page.getByTestId('submit').click();
  await expect(page.getByTestId('error-image')).toContainText('is required');
  await page.getByTestId('field-prompt').fill('Noon light over the dunes');
  await picker('image').setInputFiles(file('picked-noon.png'));
  await expect(page.getByTestId('error-image')).toHaveText('picked-noon.png: format webp is not JPG or PNG');
  await page.getByTestId('submit').click();
  await expect(page.getByTestId('field-image')).toBeFocused();
  await expect(page.getByTestId('start-error')).toHaveCount(0);
  await expect(page.getByTestId('submit-status')).toContainText('1 problem to fix');
  expect(JSON.stringify(await creates())).toBe(before);
  expect(errors).toEqual([]);
});

test('a frame or reference pasted as inline data (a data URI or base64) is probed by its content as it is entered: refused beside its field, Submit held, nothing sent; good data passes', async ({
  page,
}) => {
  const errors = watchErrors(page);
  const img = async (format: 'gif' | 'webp' | 'png') =>
    (
      await sharp({ create: { width: 640, height: 480, channels: 3, background: '#335577' } })
        .toFormat(format)
        .toBuffer()
    ).toString('base64');
  const [gif, webp, png] = [await img('gif'), await img('webp'), await img('png')];
  const creates = async () =>
    (
      (await (await fetch(`${sandbox.url}/__sandbox/stats`)).json()) as {
        creates: Record<string, Record<string, number>>;
      }
    ).creates;
  const before = JSON.stringify(await creates());

  // Frames: a GIF under a PNG data URI's type, and raw base64 of a WebP, each named on its field.
  await openFamily(page, '2.x generation');
  await page.getByTestId('field-prompt').fill('Dusk turns to dawn');
  await page.getByTestId('field-image').fill(`data:image/png;base64,${gif}`);
  await expect(page.getByTestId('error-image')).toHaveText('image (inline data): format gif is not JPG or PNG');
  await expect(page.getByTestId('submit')).toBeDisabled();
  await page.getByTestId('field-image_end').fill(webp);
  await expect(page.getByTestId('error-image_end')).toHaveText(
    'image_end (inline data): format webp is not JPG or PNG',
  );
  await expect(page.getByTestId('submit-status')).toContainText('2 problems to fix');
  await expect(page.getByTestId('submit')).toBeDisabled();
  expect(JSON.stringify(await creates())).toBe(before);

  // Good data passes on both fields.
  await page.getByRole('button', { name: 'Clear Start frame' }).click();
  await page.getByTestId('field-image').fill(`data:image/png;base64,${png}`);
  await page.getByRole('button', { name: 'Clear End frame' }).click();
  await page.getByTestId('field-image_end').fill(png);
  await expect(page.getByTestId('error-image')).toHaveCount(0);
  await expect(page.getByTestId('error-image_end')).toHaveCount(0);
  await expect(page.getByTestId('submit-status')).not.toContainText('to fix');
  await expect(page.getByTestId('submit')).toBeEnabled();

  // References: the URL entry takes inline data where the field does, probed at once as a picked file is.
  await openFamily(page, '2.5 multi-shot');
  await page.getByTestId('field-prompt').fill('A lighthouse at dawn');
  const refs = page.getByTestId('refs-reference_images');
  await page.getByTestId('url-reference_images').fill(`data:image/png;base64,${gif}`);
  await page.getByTestId('add-url-reference_images').click();
  await expect(refs.getByTestId('ref-error')).toHaveText(
    'reference_images 1 (inline data): format gif is not JPG or PNG or WebP',
  );
  await expect(page.getByTestId('submit')).toBeDisabled();
  expect(JSON.stringify(await creates())).toBe(before);
  await page.getByTestId('url-reference_images').fill(`data:image/png;base64,${png}`);
  await page.getByTestId('add-url-reference_images').click();
  const good = refs.getByTestId('ref-item').nth(1);
  await expect(good).toHaveAttribute('data-name', 'reference_images 2 (inline data)');
  await expect(good.getByTestId('ref-status')).toContainText('passes');
  await expect(good.getByTestId('ref-probe')).toContainText('640×480');
  // With the bad one gone the good one is the first, named so, and the video is sent.
  await page.getByRole('button', { name: 'Remove reference_images 1 (inline data)' }).click();
  await expect(refs.getByTestId('ref-item')).toHaveAttribute('data-name', 'reference_images 1 (inline data)');
  await expect(refs.getByTestId('ref-status')).toContainText('passes');
  await page.getByTestId('submit').click();
  await expect(page.getByTestId('submit-status')).toContainText('1 job queued');
  expect(errors).toEqual([]);
});

test('Submit with a field to fix takes the keyboard to that field', async ({ page }) => {
  const errors = watchErrors(page);
  await openFamily(page, 'Lite');
  await expectRefusalFocusesPrompt(page, 'submit');
  expect(errors).toEqual([]);
});

test('a 2.5 video with neither a prompt nor shots, or an end-frame video with nothing to animate, is refused before it is sent', async ({
  page,
}) => {
  const errors = watchErrors(page);
  const creates = async () =>
    (
      (await (await fetch(`${sandbox.url}/__sandbox/stats`)).json()) as {
        creates: Record<string, Record<string, number>>;
      }
    ).creates;
  const before = JSON.stringify(await creates());
  await openFamily(page, '2.5 multi-shot');
  // An untouched form is not a wall of red: the error waits for Submit.
  await expect(page.getByTestId('error-prompt')).toHaveCount(0);
  await page.getByTestId('submit').click();
  await expect(page.getByTestId('error-prompt')).toContainText(
    'is required (or add shots, each with a prompt of its own)',
  );
  await expect(page.getByTestId('field-prompt')).toBeFocused();
  // Shots describe the video too: with one, the prompt may stay empty.
  await page.getByTestId('add-shot').click();
  await page.getByTestId('shot-prompt-1').fill('A pier at low tide');
  await expect(page.getByTestId('error-prompt')).toHaveCount(0);

  await page.getByTestId('family-picker').getByText('Image to video, end frame', { exact: true }).click();
  await page.getByTestId('submit').click();
  // Veo 3.1 animates a start frame from a prompt: both are required.
  await expect(page.getByTestId('error-image')).toContainText('is required');
  expect(JSON.stringify(await creates())).toBe(before);
  expect(errors).toEqual([]);
});

test('shot problems are named as the list numbers its shots, on the input they concern', async ({ page }) => {
  const errors = watchErrors(page);
  await openFamily(page, '2.5 multi-shot');
  await page.getByTestId('add-shot').click();
  await page.getByTestId('add-shot').click();
  const shotErrors = page.getByTestId('error-shots');
  await expect(shotErrors).toHaveText(['Shot 1 prompt: must not be empty', 'Shot 2 prompt: must not be empty']);
  await expect(page.getByTestId('shot-prompt-2')).toHaveAttribute('aria-invalid', 'true');
  await page.getByTestId('shot-prompt-1').fill('A pier at dawn');
  await page.getByTestId('shot-prompt-2').fill('Gulls over the water');
  await expect(shotErrors).toHaveCount(0);

  // An emptied duration names its shot in words, not as zod's "expected number, received null".
  await page.getByTestId('shot-duration-2').fill('');
  await expect(shotErrors).toHaveText(['Shot 2 duration: must be a whole number of seconds']);
  await expect(page.getByTestId('shot-duration-2')).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByTestId('shot-duration-1')).toHaveAttribute('aria-invalid', 'false');

  // The total has its own words; it is not a bare "must be at most 30".
  await page.getByTestId('shot-duration-1').fill('20');
  await page.getByTestId('shot-duration-2').fill('15');
  await expect(shotErrors).toHaveText(['Total duration: must be at most 30']);
  await expect(page.getByTestId('shots-total')).toContainText('Total 35 s of 4 to 30 s');
  await page.getByTestId('shot-duration-2').fill('10');
  await expect(shotErrors).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('switching the variant keeps what was written in the fields both variants have', async ({ page }) => {
  const errors = watchErrors(page);
  await openFamily(page, 'Lite');
  await page.getByTestId('field-prompt').fill('A paper boat drifting down a rain gutter');
  await page.getByTestId('field-duration').getByRole('radio', { name: '4' }).check();
  await page.getByTestId('variant-select').selectOption('lite-i2v');
  await expect(page.getByTestId('video-form')).toHaveAttribute('data-tool', 'lite-i2v');
  await expect(page.getByTestId('field-prompt')).toHaveValue('A paper boat drifting down a rain gutter');
  await expect(page.getByTestId('field-duration').getByRole('radio', { name: '4' })).toBeChecked();
  // Image to video adds its image; back on text to video, the edit made there comes along too.
  await page.getByTestId('field-prompt').fill('A paper boat, close up');
  await page.getByTestId('variant-select').selectOption('lite-t2v');
  await expect(page.getByTestId('field-prompt')).toHaveValue('A paper boat, close up');
  expect(errors).toEqual([]);
});

test("files beyond a reference list's size are named as not added, not dropped without a word", async ({ page }) => {
  const errors = watchErrors(page);
  const files = await Promise.all(
    [1, 2, 3, 4, 5].map(async (n) => {
      const p = join(dir, `frame-${n}.png`);
      await sharp({ create: { width: 320, height: 320, channels: 3, background: { r: n * 40, g: 90, b: 120 } } })
        .png()
        .toFile(p);
      return p;
    }),
  );
  await openFamily(page, '2.5 multi-shot');
  await page.getByTestId('pick-reference_images').setInputFiles(files);
  const list = page.getByTestId('refs-reference_images');
  await expect(list.getByTestId('ref-item')).toHaveCount(4);
  await expect(list.getByTestId('left-out')).toHaveText('Reference images: at most 4; not added: frame-5.png.');
  // A drop on a full list is answered too (its drop zone is still there, the picker is not).
  await dropFiles(page, [files[0]], undefined, '[data-testid="refs-reference_images"]');
  await expect(list.getByTestId('left-out')).toHaveText('Reference images: at most 4; not added: frame-1.png.');
  await expect(list.getByTestId('ref-item')).toHaveCount(4);
  expect(errors).toEqual([]);
});

test('what adding a reference and Submit came to is said by regions already in the page: a refusal as an alert, a pass and the queued job politely, and the job once it ends', async ({
  page,
}) => {
  const errors = watchErrors(page);
  const live = await watchLiveRegions(page);
  const good = join(dir, 'said-good.png');
  await sharp({ create: { width: 640, height: 480, channels: 3, background: { r: 30, g: 120, b: 200 } } })
    .png()
    .toFile(good);
  const bad = join(dir, 'said-hum.ogg');
  writeFileSync(bad, 'OggS');
  await openFamily(page, '2.5 multi-shot');
  // Kept: lets the live regions settle empty before what is counted begins.
  await page.waitForTimeout(300);
  const said = async () => (await live()).spoke.join(' ');
  const alerted = async () => (await live()).alerted.join(' ');

  // Submit with the prompt missing: refused at once, and said so.
  await page.getByTestId('submit').click();
  await expect.poll(alerted).toMatch(/^Not submitted: 1 problem to fix\.$/);
  // A reference audio the checks refuse: named with its rule, as an alert (it holds Submit).
  await page.getByTestId('pick-reference_audios').setInputFiles(bad);
  await expect.poll(alerted).toContain('Reference audio: said-hum.ogg: format ogg is not MP3 or WAV');
  await page.getByRole('button', { name: 'Remove said-hum.ogg' }).click();

  // A picture that passes, then a Submit that queues: said politely.
  await page.getByTestId('field-prompt').fill('A lighthouse like @Image1');
  await page.getByTestId('pick-reference_images').setInputFiles(good);
  await expect.poll(said).toContain('Reference images: said-good.png: passes the checks.');
  await page.getByTestId('submit').click();
  await expect.poll(said).toContain('1 job queued.');
  await expect(page.getByTestId('result-job').first()).toHaveAttribute('data-state', 'done', { timeout: 60_000 });
  // The job's way through its states is not said step by step; its end is, once.
  await expect.poll(said).toMatch(/1 job queued\. .*: done\.$/);
  // Kept: a late sentence would come within 2 s.
  await page.waitForTimeout(2000);
  const log = await live();
  expect(log.spoke.length, log.spoke.join(' | ')).toBeLessThanOrEqual(3);
  expect(log.bornFull).toEqual([]);
  expect(log.alertBornFull).toEqual([]);
  expect(errors).toEqual([]);
});
