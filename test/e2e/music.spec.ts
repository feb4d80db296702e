import { existsSync, statSync } from 'node:fs';
import type { Page } from '@playwright/test';
import { expect, test, type Launch, type SandboxAt } from './fixtures.ts';
import { newHome, watchLiveRegions, type HostHandle } from './host.ts';
import { expectRefusalFocusesPrompt, shot, watchErrors, type SandboxProcess } from './studio-helpers.ts';

let launch: Launch;
let sandboxAt: SandboxAt;
// The helpers below start hosts and Sandboxes through the test's fixtures.
test.beforeEach(({ launch: l, sandboxAt: s }) => {
  launch = l;
  sandboxAt = s;
});

let host: HostHandle;
let sandbox: SandboxProcess;

/** A Sandbox with short tasks, a host on it, and the Music screen. */
async function openMusic(page: Page) {
  sandbox = await sandboxAt(500);
  host = await launch(newHome(), sandbox.env);
  await page.goto(`${host.url}#music`);
}

test('a music task from prompt to a playable file on disk', async ({ page }) => {
  const errors = watchErrors(page);
  const live = await watchLiveRegions(page);
  await openMusic(page);

  // The variants family wants at least 10 characters: the bound shows before anything is sent.
  await page.getByTestId('music-tools').getByText('Music variants').click();
  await page.getByTestId('field-prompt').fill('too short');
  await expect(page.getByTestId('error-prompt')).toContainText('at least 10 characters');

  await page.getByTestId('music-tools').getByText('Instrumental music').click();
  await expect(page.getByTestId('length-note')).toContainText('30 seconds');
  await page.getByTestId('field-prompt').fill('Warm analogue synth pads, slow arpeggio, 80 bpm');
  await page.getByTestId('field-negative_prompt').fill('vocals');
  await page.getByTestId('submit').click();

  const job = page.getByTestId('result-job').first();
  await expect(job).toHaveAttribute('data-state', 'done', { timeout: 60_000 });
  // Queued and done are said, by statuses already in the page; the steps between are not.
  await expect
    .poll(async () => (await live()).spoke)
    .toEqual(['Queued: the track appears below when it is downloaded.', 'Instrumental music: done.']);
  // The queued line does not outlive its work: it says what the batch came to.
  await expect(page.getByTestId('music-ended')).toHaveText('Finished: 1 done.');
  await expect(page.getByTestId('submit-status')).not.toContainText('Queued');
  const path = (await job.getByTestId('result-path').textContent())!.trim();
  expect(path).toMatch(/\.mp3$/);
  expect(existsSync(path)).toBe(true);
  expect(statSync(path).size).toBeGreaterThan(1000);
  const audio = job.getByTestId('audio-element');
  await expect
    .poll(() => audio.evaluate((el: HTMLAudioElement) => el.duration), { timeout: 15_000 })
    .toBeGreaterThan(0);
  await expect(job.getByTestId('audio-duration')).not.toHaveText('–');
  await expect(job.getByTestId('waveform')).toBeVisible();
  await shot(page, 'music');
  expect(errors).toEqual([]);
});

test('Generate with a field to fix takes the keyboard to that field, and nothing is queued', async ({ page }) => {
  const errors = watchErrors(page);
  const live = await watchLiveRegions(page);
  await openMusic(page);
  await expectRefusalFocusesPrompt(page, 'submit');
  // Refused: said at once, by an alert already in the page.
  await expect.poll(async () => (await live()).alerted).toEqual(['Fix the fields marked in red.']);

  // A bound broken after a first try: the field marked is where the keyboard goes.
  await page.getByTestId('field-prompt').fill('Slow piano');
  await page.getByTestId('field-music_length_seconds').fill('5');
  await page.getByTestId('submit').focus();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('field-music_length_seconds')).toBeFocused();
  await expect(page.getByTestId('result-job')).toHaveCount(0);
  const stats = (await (await fetch(`${sandbox.url}/__sandbox/stats`)).json()) as Record<string, unknown>;
  expect(JSON.stringify(stats)).not.toContain('music');
  expect(errors).toEqual([]);
});

test('a reference image to fix is named as its row is labelled, and Generate goes to that row', async ({ page }) => {
  const errors = watchErrors(page);
  await openMusic(page);
  await page.getByTestId('music-tools').getByText('Music variants').click();
  await page.getByTestId('field-prompt').fill('An upbeat synthwave track for a product launch');
  await page.getByRole('button', { name: 'Add (0/4)' }).click();
  await page.getByRole('button', { name: 'Add (1/4)' }).click();
  const second = page.getByRole('textbox', { name: 'Reference images 2' });
  await page.getByRole('textbox', { name: 'Reference images 1' }).fill('https://example.com/cover.png');
  await expect(page.getByTestId('error-reference_images')).toHaveText([
    'Reference images 2: must be an HTTPS URL or a base64-encoded file',
  ]);
  await expect(second).toHaveAttribute('aria-invalid', 'true');
  await page.getByTestId('submit').click();
  await expect(second).toBeFocused();
  expect(errors).toEqual([]);
});

test('Enter in a field does not start a paid task; the Generate button does', async ({ page }) => {
  const errors = watchErrors(page);
  await openMusic(page);
  await page.getByTestId('music-tools').getByText('Instrumental music').click();
  await page.getByTestId('field-prompt').fill('Warm analogue synth pads, slow arpeggio, 80 bpm');
  // Typing a value and pressing Enter to "set" it, as in many apps: HTML would submit the form.
  await page.getByTestId('field-negative_prompt').fill('vocals');
  await page.getByTestId('field-negative_prompt').press('Enter');
  // Kept: a submit that must not happen has no event; 500 ms is ample for its request to go out.
  await page.waitForTimeout(500);
  await expect(page.getByTestId('result-job')).toHaveCount(0);
  const stats = (await (await fetch(`${sandbox.url}/__sandbox/stats`)).json()) as { creates: Record<string, unknown> };
  expect(Object.keys(stats.creates)).toEqual([]);
  await page.getByTestId('submit').focus();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('result-job')).toHaveCount(1);
  expect(errors).toEqual([]);
});
