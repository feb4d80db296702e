import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import type { Page, Route } from '@playwright/test';
import { expect, test, type Launch, type SandboxAt } from './fixtures.ts';
import sharp from 'sharp';
import { dropFiles, newHome, watchLiveRegions, type HostHandle } from './host.ts';
import { desk, makeImages, sandboxPosts, setFaults, shot, watchErrors, type SandboxProcess } from './studio-helpers.ts';

let launch: Launch;
let sandboxAt: SandboxAt;
// The helpers below start hosts and Sandboxes through the test's fixtures.
test.beforeEach(({ launch: l, sandboxAt: s }) => {
  launch = l;
  sandboxAt = s;
});

interface Job {
  state: string;
  input: string | null;
  relDir: string;
  outputs: string[];
  invalid: { field: string; reason: string }[];
}

let host: HostHandle;
let sandbox: SandboxProcess;

test('a folder of 20 images upscaled x4: live progress, then all 20 results on disk and in the gallery', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(500);
  host = await launch(newHome(), sandbox.env);
  // More jobs at once keeps the suite quick; the queue's behaviour is the same.
  await desk(host, 'settings.set', { concurrency: 10 });
  const dir = join(mkdtempSync(join(tmpdir(), 'md-shoot-')), 'shoot');
  await makeImages(dir, 20);

  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  // The catalogue's default for the scale factor is 2; the form shows it, we pick 4.
  await expect(page.getByTestId('field-scale_factor')).toHaveValue('2');
  await page.getByTestId('field-scale_factor').fill('4');
  await page.getByTestId('pick-folder').setInputFiles(dir);
  await expect(page.getByTestId('input-status')).toContainText('20 files');
  // The batch field (image) is filled per file by the engine, so the form hides it.
  await expect(page.getByTestId('field-image')).toHaveCount(0);
  await expect(page.getByTestId('input-thumbs').locator('img').first()).toBeVisible();
  await shot(page, 'studio');

  await page.getByTestId('start').click();
  // Live progress: the title counts settled jobs while the batch runs.
  await expect(page).toHaveTitle(/^([0-9]|1[0-9])\/20 · MediaDesk$/);
  await page.getByTestId('nav-queue').click();
  await expect(page.getByTestId('batch-row')).toHaveCount(1);
  await expect(page.getByTestId('job-row').first()).toBeVisible();
  await shot(page, 'queue');
  await expect(page).toHaveTitle('batch done · MediaDesk', { timeout: 60_000 });
  await expect(page.getByTestId('batch-count')).toHaveText('20/20');

  const batches = await desk<{ id: string; outDir: string }[]>(host, 'batches.list', {});
  const { jobs } = await desk<{ jobs: Job[] }>(host, 'jobs.list', { batchId: batches[0].id, limit: 100 });
  expect(jobs).toHaveLength(20);
  for (const j of jobs) {
    expect(j.state).toBe('done');
    expect(j.outputs).toHaveLength(1);
    expect(existsSync(j.outputs[0])).toBe(true);
    // Subfolders are mirrored under the output folder.
    expect(relative(batches[0].outDir, j.outputs[0]).startsWith(j.relDir ? 'sub' : 'img-')).toBe(true);
  }
  const meta = await sharp(jobs[0].outputs[0]).metadata();
  expect([meta.width, meta.height]).toEqual([256, 192]);

  await page.getByTestId('nav-results').click();
  await expect(page.getByTestId('gallery-count')).toHaveText('20 results');
  await expect(page.getByTestId('gallery-item').first().locator('img')).toBeVisible();
  await expect(page.getByTestId('before-after')).toBeVisible();
  await shot(page, 'results');
  expect(errors).toEqual([]);
});

test("a bad parameter: the catalogue bound shows at once, and the server's 400 shows beside its field", async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(300);
  host = await launch(newHome(), sandbox.env);
  await page.goto(`${host.url}#studio`);

  // Instant: a value outside the spec's bounds, before anything is sent.
  await page.getByTestId('tool-select').selectOption('flex-image');
  await page.getByTestId('field-width').fill('100');
  await expect(page.getByTestId('error-width')).toHaveText('must be at least 256');
  await expect(page.getByTestId('field-width')).toHaveAttribute('aria-invalid', 'true');
  await page.getByTestId('start').click();
  await expect(page.getByTestId('error-prompt')).toHaveText('is required');
  expect(await desk<unknown[]>(host, 'batches.list', {})).toHaveLength(0);

  // From the server: the catalogue accepts any HTTPS URL, the Sandbox fetches loopback URLs only.
  await page.getByTestId('tool-select').selectOption('context-t2i');
  await page.getByTestId('field-prompt').fill('a lighthouse at dusk');
  await page.getByTestId('field-input_image').fill('https://example.com/reference.png');
  await expect(page.getByTestId('error-input_image')).toHaveCount(0);
  await page.getByTestId('start').click();
  await expect(page.getByTestId('error-input_image')).toContainText('loopback');
  await shot(page, 'studio-field-error');

  await page.getByTestId('nav-queue').click();
  await page.getByTestId('job-row').first().locator('button').first().click();
  await expect(page.getByTestId('job-row').first()).toHaveAttribute('data-state', 'failed');
  await expect(page.getByTestId('job-invalid-input_image')).toContainText('loopback');
  expect(errors).toEqual([]);
});

test('the LoRA catalogue down (503): the gallery says so and offers to try again, which loads it once it is back', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(300);
  host = await launch(newHome(), sandbox.env);
  await setFaults(sandbox.url, { rate503: 1 });
  await page.goto(`${host.url}#loras`);
  // The client's own retries come first; then the failure, with no "0 of 0" as if the catalogue were empty.
  await expect(page.getByRole('alert')).toContainText('The LoRA catalogue could not be loaded', { timeout: 60_000 });
  await expect(page.getByTestId('lora-count')).toHaveCount(0);
  await setFaults(sandbox.url, { rate503: 0 });
  await page.getByTestId('lora-retry').click();
  await expect(page.getByTestId('lora-card').first()).toBeVisible();
  await expect(page.getByTestId('lora-count')).toHaveText(/^(\d+) of \1$/);
  expect(errors).toEqual([]);
});

test('the LoRA gallery filters, and "use" puts a LoRA into the generator, whose task then completes', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(300);
  host = await launch(newHome(), sandbox.env);
  await page.goto(`${host.url}#loras`);
  const cards = page.getByTestId('lora-card');
  await expect(cards.first()).toBeVisible();
  const all = await cards.count();
  expect(all).toBeGreaterThanOrEqual(8);
  await expect(cards.first().locator('img')).toBeVisible();
  await shot(page, 'loras');

  await page.getByTestId('lora-type').selectOption('character');
  await expect(cards).not.toHaveCount(all);
  for (const t of await cards.locator('.tag').first().allTextContents()) expect(t).toBe('character');
  await page.getByTestId('lora-search').fill('robot');
  await expect(cards).toHaveCount(1);
  await expect(cards.first()).toHaveAttribute('data-lora', 'Robot Pip');
  await cards.first().getByTestId('lora-use').click();

  await expect(page.getByTestId('screen-studio')).toBeVisible();
  await expect(page.getByTestId('tool-select')).toHaveValue('hires');
  // The request carries the character's id; the form names it as the gallery does.
  await expect(page.getByTestId('styling-character')).toHaveText('Robot Pip');
  // The default scale 0.85 becomes strength 85 (of 0..200).
  await expect(page.getByRole('spinbutton', { name: 'Character strength' })).toHaveValue('85');

  // A style joins the character, each with its own labelled strength.
  await page.getByTestId('nav-loras').click();
  await page.getByTestId('lora-type').selectOption('');
  await page.getByTestId('lora-search').fill('');
  await page.getByRole('button', { name: 'Use Watercolor' }).click();
  await expect(page.getByTestId('styling-style')).toHaveText('Watercolor');
  await expect(page.getByTestId('styling-character')).toHaveText('Robot Pip');
  await expect(page.getByRole('spinbutton', { name: 'Style strength' })).toHaveValue('80');
  await expect(page.getByRole('spinbutton', { name: 'Character strength' })).toHaveValue('85');

  // The generator's request has a style and a character slot, none for products: "Use" says so
  // instead of passing the product off as a character.
  await page.getByTestId('nav-loras').click();
  const mug = cards.filter({ hasText: 'Ceramic mug' });
  await expect(mug.getByRole('button', { name: 'Use Ceramic mug' })).toBeDisabled();
  await expect(mug.getByTestId('lora-unsupported')).toHaveText('The generator takes styles and characters only.');
  await page.getByTestId('nav-studio').click();
  await expect(page.getByTestId('styling-character')).toHaveText('Robot Pip');

  // Aspect ratios read as people write them; the value sent stays the API's.
  const aspect = page.getByTestId('field-aspect_ratio');
  await expect(aspect.locator('option')).toContainText([
    'Square 1:1',
    'Classic 4:3',
    'Traditional 3:4',
    'Widescreen 16:9',
    'Social story 9:16',
    'Smartphone horizontal 20:9',
  ]);
  await aspect.selectOption({ label: 'Classic 4:3' });

  await page.getByTestId('field-prompt').fill('a small friendly robot in a greenhouse');
  await page.getByTestId('start').click();
  await expect(page.getByTestId('last-batch')).toContainText('Batch done', { timeout: 30_000 });
  const batches = await desk<{ id: string; params: Record<string, unknown> }[]>(host, 'batches.list', {});
  expect(batches[0].params.styling).toEqual({
    characters: [{ id: '6', strength: 85 }],
    styles: [{ name: 'Watercolor', strength: 80 }],
  });
  expect(batches[0].params.aspect_ratio).toBe('classic_4_3');
  const { jobs } = await desk<{ jobs: Job[] }>(host, 'jobs.list', { batchId: batches[0].id });
  expect(jobs[0].state).toBe('done');
  expect(existsSync(jobs[0].outputs[0])).toBe(true);

  // "Run again" in a fresh page: the form has only the character's id, and still names it.
  await page.goto(`${host.url}#results`);
  await page.getByTestId('run-again').click();
  await expect(page.getByTestId('screen-studio')).toBeVisible();
  await expect(page.getByTestId('styling-character')).toHaveText('Robot Pip');
  await expect(page.getByTestId('field-aspect_ratio')).toHaveValue('classic_4_3');
  expect(errors).toEqual([]);
});

test('a job killed mid-run shows up correctly after a restart of the host, then completes', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(4000);
  const home = newHome();
  host = await launch(home, sandbox.env, 0, [], { ownProcess: true });
  const dir = mkdtempSync(join(tmpdir(), 'md-kill-'));
  await makeImages(dir, 2);
  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  await page.getByTestId('typed-path').fill(dir);
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  // The same folder typed again stays one input, and the status says why.
  await page.getByTestId('typed-path').fill(dir);
  await page.getByTestId('typed-path').press('Enter');
  await expect(page.getByTestId('input-error')).toHaveText(`${dir} is already in the list`);
  await expect(page.getByRole('list', { name: 'Inputs' }).getByRole('listitem')).toHaveCount(1);
  await expect(page.getByTestId('typed-path')).toHaveValue('');
  await page.getByTestId('start').click();
  await expect(page.getByTestId('last-batch')).toContainText('/2');

  // Kill the host once both tasks exist on the server (running, task ids stored).
  await expect
    .poll(
      async () => {
        const batches = await desk<{ id: string }[]>(host, 'batches.list', {});
        const { jobs } = await desk<{ jobs: (Job & { taskId: string | null })[] }>(host, 'jobs.list', {
          batchId: batches[0].id,
        });
        return jobs.filter((j) => j.state === 'running' && j.taskId).length;
      },
      { timeout: 20_000, intervals: [100] },
    )
    .toBe(2);
  await host.stop('SIGKILL');
  // The page says the host is gone (its background calls fail quietly meanwhile), and recovers.
  await expect(page.getByTestId('host-down')).toContainText('The MediaDesk host is not answering');

  host = await launch(home, sandbox.env);
  await page.goto(`${host.url}#queue`);
  await expect(page.getByTestId('batch-row')).toHaveCount(1);
  const states = page.getByTestId('job-row');
  await expect(states).toHaveCount(2);
  // Still the same tasks: running (or already downloading), never resubmitted or lost.
  for (const s of await states.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-state'))))
    expect(['running', 'downloading', 'done']).toContain(s);
  await expect(page.getByTestId('batch-count')).toHaveText('2/2', { timeout: 30_000 });
  await expect(page.locator('[data-testid=job-row][data-state=done]')).toHaveCount(2);
  const batches = await desk<{ id: string }[]>(host, 'batches.list', {});
  const { jobs } = await desk<{ jobs: (Job & { attempts: number })[] }>(host, 'jobs.list', { batchId: batches[0].id });
  for (const j of jobs) {
    expect(j.attempts).toBe(1);
    expect(existsSync(j.outputs[0])).toBe(true);
  }
  await expect(page.getByTestId('host-down')).toBeHidden();
  expect(errors).toEqual([]);
});

test('a folder with nothing to run says so, and leaves no empty batch in the queue', async ({ page, launch }) => {
  const errors = watchErrors(page);
  const home = newHome();
  host = await launch(home);
  const empty = mkdtempSync(join(tmpdir(), 'md-empty-'));
  const notes = mkdtempSync(join(tmpdir(), 'md-notes-'));
  writeFileSync(join(notes, 'notes.txt'), 'not an image');
  for (const sub of ['a', 'b']) {
    mkdirSync(join(notes, sub));
    writeFileSync(join(notes, sub, 'notes.txt'), 'not an image');
  }
  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  await page.getByTestId('typed-path').fill(empty);
  await page.getByTestId('typed-path').press('Enter');
  await page.getByTestId('start').click();
  await expect(page.getByTestId('start-error')).toHaveText(`no files to process: ${empty} is an empty folder`);

  await page.getByRole('button', { name: `Remove ${empty}` }).click();
  await page.getByTestId('typed-path').fill(notes);
  await page.getByTestId('typed-path').press('Enter');
  await page.getByTestId('start').click();
  await expect(page.getByTestId('last-batch')).toContainText('Nothing to run');
  await expect(page.getByTestId('last-batch')).toContainText('No input can be used by this tool: no job was queued.');
  // Each named below the folder they share, so the two in subfolders read apart.
  await expect(page.getByTestId('last-batch').locator('details li')).toHaveText(
    ['a/notes.txt', 'b/notes.txt', 'notes.txt'].map((n) => `rejected ${n}: this tool does not take .txt files`),
  );
  await expect(page.getByTestId('start-error')).toBeHidden();
  expect(await desk<unknown[]>(host, 'batches.list', {})).toEqual([]);
  expect(errors).toEqual([]);
});

test('removing an input moves focus to the next Remove button, then the previous, then the path field', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  host = await launch(newHome());
  const root = mkdtempSync(join(tmpdir(), 'md-remove-'));
  const [a, b, c] = ['a', 'b', 'c'].map((n) => join(root, n));
  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  for (const p of [a, b, c]) {
    await page.getByTestId('typed-path').fill(p);
    await page.getByTestId('typed-path').press('Enter');
  }
  const remove = (p: string) => page.getByRole('button', { name: `Remove ${p}` });
  await remove(b).focus();
  await page.keyboard.press('Enter');
  await expect(remove(b)).toHaveCount(0);
  await expect(remove(c)).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(remove(a)).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByRole('list', { name: 'Inputs' })).toHaveCount(0);
  await expect(page.getByTestId('typed-path')).toBeFocused();
  expect(errors).toEqual([]);
});

test('a dropped folder with a file the host refuses: the others become the input, four copied at a time with a count, and the refused one is named', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  const home = newHome();
  host = await launch(home);
  const dir = join(mkdtempSync(join(tmpdir(), 'md-refused-')), 'shoot');
  await makeImages(dir, 8);
  // A legal name on Linux; the browser reads its backslash as a separator, so the path it sends
  // climbs with "..", and the host refuses it.
  writeFileSync(join(dir, 'sub', '..\\escape.png'), 'not copied');
  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  const status = page.getByTestId('input-status');
  // Every text the status shows, however briefly, for the count while copying.
  await status.evaluate((el) => {
    const seen: string[] = [];
    (window as unknown as { seen: string[] }).seen = seen;
    new MutationObserver(() => seen.push(el.textContent!.trim())).observe(el, {
      subtree: true,
      childList: true,
      characterData: true,
    });
  });

  // The uploads are held in the browser (then sent on, unchanged) until four are out at once:
  // one file at a time would never get there.
  const held: Route[] = [];
  let holding = true;
  await page.route('**/upload?**', (route) => (holding ? void held.push(route) : route.continue()));
  await page.getByTestId('pick-folder').setInputFiles(dir);
  await expect.poll(() => held.length).toBe(4);
  await expect(status).toHaveText('Copying 0 of 9 files…');
  await expect(page.getByTestId('start')).toBeDisabled();
  holding = false;
  for (const r of held) await r.continue();

  await expect(status).toHaveText('1 input, 8 files');
  const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
  expect(
    seen.some((t) => /^Copying [1-8] of 9 files…/.test(t)),
    seen.join(' | '),
  ).toBe(true);
  await expect(page.getByRole('list', { name: 'Inputs' }).getByRole('listitem')).toHaveText([/^shoot\s*· 8 files/]);
  const note = page.getByTestId('not-copied');
  await expect(note.locator('summary')).toHaveText(
    '1 of 9 dropped files could not be copied; the others are in the inputs',
  );
  await expect(note.locator('li')).toHaveText([
    'not copied sub/../escape.png: not a relative file path inside the drop (a "." or ".." part, or no name)',
  ]);
  await expect(page.getByTestId('start')).toBeEnabled();

  // The inbox holds the eight, and nothing of the refused file, inside the drop or above it.
  const inbox = join(home, 'inbox');
  const stored = readdirSync(inbox, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(inbox, join(e.parentPath, e.name)));
  expect(stored.map((p) => p.split(/[\\/]/).slice(1).join('/')).sort()).toEqual([
    'shoot/img-00.png',
    'shoot/img-02.png',
    'shoot/img-04.png',
    'shoot/img-06.png',
    'shoot/sub/img-01.png',
    'shoot/sub/img-03.png',
    'shoot/sub/img-05.png',
    'shoot/sub/img-07.png',
  ]);

  // The note goes with its input.
  await page.getByRole('button', { name: 'Remove shoot' }).click();
  await expect(note).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('dropped files the browser can no longer read, or a second of one name: the others are added and each failed one named; when none can be read, the drop is an error', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  host = await launch(newHome());
  const imgs = await makeImages(mkdtempSync(join(tmpdir(), 'md-gone-')), 4);
  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  const status = page.getByTestId('input-status');

  // Moved away between the drag's start and the drop: the browser holds a File it cannot read.
  await dropFiles(page, imgs, () => rmSync(imgs[1]));
  await expect(status).toHaveText('1 input, 3 files');
  await expect(page.getByRole('list', { name: 'Inputs' }).getByRole('listitem')).toHaveText([/^3 files\s*· 3 files/]);
  const unreadable = 'the browser could not read it (it may have been moved, changed or deleted since it was dropped)';
  await expect(page.getByTestId('not-copied').locator('li')).toHaveText([`not copied img-01.png: ${unreadable}`]);

  await dropFiles(page, [imgs[3]], () => rmSync(imgs[3]));
  await expect(page.getByTestId('input-error')).toHaveText(`No file could be copied: img-03.png: ${unreadable}`);
  await expect(page.getByRole('list', { name: 'Inputs' }).getByRole('listitem')).toHaveCount(1);
  await expect(page.getByTestId('not-copied')).toHaveCount(0);

  // Two files of one name from two folders: the host keeps the first and refuses the second.
  const [twin] = await makeImages(mkdtempSync(join(tmpdir(), 'md-twin-')), 1);
  await dropFiles(page, [imgs[0], twin, imgs[2]]);
  await expect(status).toHaveText('2 inputs, 5 files');
  await expect(page.getByRole('list', { name: 'Inputs' }).getByRole('listitem').nth(1)).toHaveText(
    /^2 files\s*· 2 files/,
  );
  await expect(page.getByTestId('not-copied').locator('summary')).toHaveText(
    '1 of 3 dropped files could not be copied; the others are in the inputs',
  );
  await expect(page.getByTestId('not-copied').locator('li')).toHaveText([
    'not copied img-00.png: a file of this path was already copied in this drop',
  ]);
  expect(errors).toEqual([]);
});

test('a picked folder with a note named photo.png: before Start, 4 images ready and the note skipped with its reason; Start sends only the 4 to the Sandbox', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(300);
  host = await launch(newHome(), sandbox.env);
  const dir = join(mkdtempSync(join(tmpdir(), 'md-check-')), 'shoot');
  const good = await makeImages(dir, 4);
  writeFileSync(join(dir, 'photo.png'), 'shopping list: milk, eggs');

  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  await page.getByTestId('pick-folder').setInputFiles(dir);
  // Counted by the batch's own check, before anything is paid: the note is no image.
  await expect(page.getByTestId('check-summary')).toHaveText('4 images ready, 1 will be skipped');
  await expect(page.getByTestId('check-skipped').locator('li')).toHaveText(['photo.png: is not a readable image']);
  await expect(page.getByTestId('start')).toHaveText('Start batch (4 images)');
  expect(await sandboxPosts(sandbox.url)).toBe(0);

  await page.getByTestId('start').click();
  await expect(page).toHaveTitle('batch done · MediaDesk', { timeout: 60_000 });
  const [batch] = await desk<{ id: string; total: number }[]>(host, 'batches.list', {});
  expect(batch.total).toBe(4);
  const { jobs } = await desk<{ jobs: { input: string; state: string }[] }>(host, 'jobs.list', { batchId: batch.id });
  expect(jobs.map((j) => basename(j.input)).sort()).toEqual(good.map((p) => basename(p)).sort());
  expect(jobs.every((j) => j.state === 'done')).toBe(true);
  // One create per ready image, none for the note.
  expect(await sandboxPosts(sandbox.url)).toBe(4);
  // Checked again after Start: what was ready is queued (done) now, so a second Start pays nothing.
  await expect(page.getByTestId('check-summary')).toHaveText(/^0 images ready, 5 will be skipped$/);
  expect(errors).toEqual([]);
});

test('a typed folder of many files says it is checking, and a newer selection replaces the older check', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  host = await launch(newHome());
  const root = mkdtempSync(join(tmpdir(), 'md-check-many-'));
  const many = join(root, 'many');
  await makeImages(many, 300);
  const few = join(root, 'few');
  await makeImages(few, 2);
  writeFileSync(join(few, 'cut.png'), readFileSync(join(few, 'img-00.png')).subarray(0, 60));

  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  await page.getByTestId('typed-path').fill(many);
  await page.getByTestId('typed-path').press('Enter');
  await expect(page.getByTestId('check-summary')).toHaveText(/^Checking the inputs/);
  await page.getByRole('button', { name: `Remove ${many}` }).click();
  await page.getByTestId('typed-path').fill(few);
  await page.getByTestId('typed-path').press('Enter');
  await expect(page.getByTestId('check-summary')).toHaveText('2 images ready, 1 will be skipped');
  await expect(page.getByTestId('check-skipped').locator('li')).toHaveText([/^cut\.png: is truncated or damaged/]);
  await expect(page.getByTestId('start')).toHaveText('Start batch (2 images)');
  expect(errors).toEqual([]);
});

/** Two images and a note (which the upscaler rejects) in `dir`, typed into the Studio and started on a Sandbox of this task duration. */
async function upscaleTwoAndANote(page: Page, taskDurationMs: number, dir: string) {
  sandbox = await sandboxAt(taskDurationMs);
  host = await launch(newHome(), sandbox.env);
  await makeImages(dir, 2);
  writeFileSync(join(dir, 'notes.txt'), 'not an image');
  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  await page.getByTestId('typed-path').fill(dir);
  await page.getByTestId('typed-path').press('Enter');
  await page.getByTestId('start').click();
}

test("the last Start's progress and its rejected files are still shown after a look at the Queue", async ({ page }) => {
  const errors = watchErrors(page);
  await upscaleTwoAndANote(page, 120_000, mkdtempSync(join(tmpdir(), 'md-back-')));
  const last = page.getByTestId('last-batch');
  await expect(last).toContainText('Running');
  await expect(last.locator('details summary')).toHaveText('0 skipped · 1 rejected · 0 resumed');

  await last.getByRole('button', { name: 'Open queue' }).click();
  await expect(page.getByTestId('job-row')).toHaveCount(2);
  await page.getByTestId('nav-studio').click();
  await expect(last).toContainText('Running');
  await expect(last).toContainText('0/2');
  await expect(last.locator('details summary')).toHaveText('0 skipped · 1 rejected · 0 resumed');
  await expect(last.getByRole('button', { name: 'Open queue' })).toBeVisible();
  expect(errors).toEqual([]);
});

test("before/after of a portrait photo edited to a square: the original fills the result's frame, and the slider works by keyboard", async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(300);
  host = await launch(newHome(), sandbox.env);
  const dir = mkdtempSync(join(tmpdir(), 'md-aspect-'));
  await sharp({ create: { width: 60, height: 120, channels: 3, background: { r: 220, g: 20, b: 20 } } })
    .png()
    .toFile(join(dir, 'tall.png'));
  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('editor');
  await page.getByTestId('field-prompt').fill('make it blue');
  await page.getByTestId('typed-path').fill(dir);
  await page.getByTestId('typed-path').press('Enter');
  await page.getByTestId('start').click();
  await expect(page.getByTestId('last-batch')).toContainText('Batch done', { timeout: 60_000 });
  await page.getByTestId('nav-results').click();
  const ba = page.getByTestId('before-after');
  await expect(ba.getByRole('img', { name: 'Result' })).toHaveJSProperty('complete', true);
  // The frame has the result's shape (1024x1024).
  await expect
    .poll(async () => {
      const b = (await ba.boundingBox())!;
      return Math.round((b.width / b.height) * 100);
    })
    .toBe(100);

  const slider = ba.getByRole('slider', { name: 'Reveal original' });
  await slider.focus();
  await page.keyboard.press('End');
  await expect(slider).toHaveAttribute('aria-valuetext', '100% original');
  // All original now: red everywhere in the frame, its left and right edges included.
  const png = await ba.screenshot();
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  const at = (fx: number, fy: number) => {
    const i = (Math.floor(info.height * fy) * info.width + Math.floor(info.width * fx)) * info.channels;
    return [data[i], data[i + 1], data[i + 2]];
  };
  for (const [fx, fy] of [
    [0.1, 0.5],
    [0.5, 0.5],
    [0.9, 0.5],
    [0.3, 0.3],
  ]) {
    const [r, g, b] = at(fx, fy);
    expect(r > 180 && g < 60 && b < 60, `pixel at ${fx},${fy} is ${r},${g},${b}`).toBe(true);
  }
  await page.keyboard.press('Home');
  await expect(slider).toHaveAttribute('aria-valuetext', '0% original');
  expect(errors).toEqual([]);
});

test('an output folder that cannot be used is said once, beside that field, and goes with the next Start', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  host = await launch(newHome());
  // Inside the output folder: a page chooses a results folder only there.
  const dir = join(host.home, 'results');
  await makeImages(join(dir, 'in'), 1);
  const file = join(dir, 'not a folder');
  writeFileSync(file, 'a file where the folder should be');
  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  await page.getByTestId('typed-path').fill(join(dir, 'in'));
  await page.getByTestId('typed-path').press('Enter');
  await page.getByTestId('out-dir').fill(file);
  await page.getByTestId('start').click();
  await expect(page.getByTestId('start-error')).toHaveText(`output folder: ${file} is a file, not a folder`);
  // The field is marked and described by the message; the tool's settings do not repeat it.
  await expect(page.getByTestId('out-dir')).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByTestId('out-dir')).toHaveAccessibleDescription(
    `output folder: ${file} is a file, not a folder`,
  );
  await expect(page.getByRole('alert').filter({ hasText: /\S/ })).toHaveCount(1);
  await page.getByTestId('out-dir').fill(join(dir, 'out'));
  await page.getByTestId('start').click();
  await expect(page.getByTestId('last-batch')).toContainText('1/1', { timeout: 30_000 });
  await expect(page.getByTestId('start-error')).toBeHidden();
  await expect(page.getByTestId('out-dir')).not.toHaveAttribute('aria-invalid');
  expect(errors).toEqual([]);
});

test('opening a result deleted since says so as an alert, naming the file', async ({ page, launch }) => {
  const errors = watchErrors(page);
  host = await launch(newHome());
  const dir = mkdtempSync(join(tmpdir(), 'md-gone-'));
  await makeImages(join(dir, 'in'), 1);
  const r = await desk<{ batch: { id: string } }>(host, 'batches.start', {
    tool: 'upscaler-precision',
    inputs: [join(dir, 'in')],
    params: {},
    outDir: join(host.home, 'results', 'out'),
  });
  await page.goto(`${host.url}#results`);
  await expect(page.getByTestId('result-batch')).toContainText('1 of 1 done', { timeout: 30_000 });
  const {
    jobs: [job],
  } = await desk<{ jobs: Job[] }>(host, 'jobs.list', { batchId: r.batch.id });
  rmSync(job.outputs[0]);
  await page.getByRole('button', { name: 'Open', exact: true }).click();
  // In a browser Open shows the result in a new tab, asked for first: the tab would only show an error page.
  await expect(page.getByRole('alert')).toHaveText(`${job.outputs[0]} does not exist`);
  expect(errors).toEqual([]);
});

test('a batch whose jobs all failed is in Results, saying what is missing and where to see why', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(200);
  host = await launch(newHome(), sandbox.env);
  await setFaults(sandbox.url, { failureRate: 1 });
  const dir = mkdtempSync(join(tmpdir(), 'md-failed-'));
  await makeImages(dir, 2);
  await desk(host, 'batches.start', { tool: 'upscaler-precision', inputs: [dir], params: {} });
  await page.goto(`${host.url}#results`);
  await expect(page.getByTestId('gallery-missing')).toContainText('Not in the gallery: 2 failed.', { timeout: 30_000 });
  await expect(page.getByTestId('result-batch')).toContainText('0 of 2 done');
  await expect(page.getByTestId('gallery-count')).toHaveText('0 results');
  // A newer batch that went well: the Queue opens on the one Results showed, not on the newest.
  await setFaults(sandbox.url, { failureRate: 0 });
  const ok = mkdtempSync(join(tmpdir(), 'md-ok-'));
  await makeImages(ok, 1);
  await desk(host, 'batches.start', { tool: 'upscaler-precision', inputs: [ok], params: {} });
  await expect(page.getByTestId('result-batch').filter({ hasText: '1 of 1 done' })).toBeVisible({ timeout: 30_000 });
  await page.getByTestId('result-batch').filter({ hasText: '0 of 2 done' }).click();
  await expect(page.getByTestId('gallery-missing')).toContainText('Not in the gallery: 2 failed.');
  await page.getByRole('button', { name: 'See why in the Queue' }).click();
  await expect(page.locator('[data-testid=job-row][data-state=failed]')).toHaveCount(2);
  // The job detail says what happened and what to do, in the words `mediadesk jobs` prints.
  await expect(page.getByTestId('job-error')).toHaveText(
    'The task failed on the server (nothing to download). Retry submits it again (a new task).',
  );
  // Fixed (the server works again) and retried: the message goes with the failure.
  await setFaults(sandbox.url, { failureRate: 0 });
  await page.getByTestId('batch-retry').click();
  await expect(page.locator('[data-testid=job-row][data-state=done]')).toHaveCount(2, { timeout: 30_000 });
  await expect(page.getByTestId('job-error')).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('a shoot copied off a Mac, a PC and a NAS: the junk beside the photos is left out by name, not counted as inputs that never run', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(300);
  host = await launch(newHome(), sandbox.env);
  const dir = join(mkdtempSync(join(tmpdir(), 'md-shoot-')), 'shoot');
  await makeImages(dir, 4);
  // What Finder, Explorer and a Synology leave there: none of it is a photo the user shot.
  mkdirSync(join(dir, '@eaDir', 'img-00.png'), { recursive: true });
  await sharp({ create: { width: 64, height: 48, channels: 3, background: '#555' } })
    .jpeg()
    .toFile(join(dir, '@eaDir', 'img-00.png', 'SYNOPHOTO_THUMB_M.jpg'));
  for (const junk of ['.DS_Store', '._img-00.png', 'Thumbs.db', 'sub/desktop.ini'])
    writeFileSync(join(dir, junk), 'not a photo');

  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  await page.getByTestId('pick-folder').setInputFiles(dir);
  await expect(page.getByTestId('input-status')).toHaveText('1 input, 4 files');
  await expect(page.getByTestId('left-out')).toContainText('Left out 5 hidden or system files (');
  const named = (await page.getByTestId('left-out').getAttribute('title'))!.split('\n').sort();
  expect(named).toEqual(
    [
      'shoot/.DS_Store',
      'shoot/._img-00.png',
      'shoot/@eaDir/img-00.png/SYNOPHOTO_THUMB_M.jpg',
      'shoot/Thumbs.db',
      'shoot/sub/desktop.ini',
    ].sort(),
  );
  await expect(page.getByTestId('input-thumbs').locator('img')).toHaveCount(4);

  await page.getByTestId('start').click();
  await expect(page.getByTestId('last-batch')).toContainText('Batch done', { timeout: 60_000 });
  await expect(page.getByTestId('last-batch')).toContainText('4/4');
  const [batch] = await desk<{ id: string; total: number }[]>(host, 'batches.list', {});
  expect(batch.total).toBe(4);
  // Nothing but the photos reached the host: a later run of the same drop has no junk to meet.
  const { jobs } = await desk<{ jobs: Job[] }>(host, 'jobs.list', { batchId: batch.id, limit: 100 });
  expect(jobs.map((j) => j.input!.split('/').pop()).sort()).toEqual([
    'img-00.png',
    'img-01.png',
    'img-02.png',
    'img-03.png',
  ]);
  expect(
    readdirSync(join(host.home, 'inbox'), { recursive: true })
      .map(String)
      .filter((p) => /DS_Store|Thumbs|desktop|eaDir|\._/.test(p)),
  ).toEqual([]);

  // The same folder picked again (copied anew under a new path): its photos have their results, nothing is paid twice.
  await page.getByRole('button', { name: 'Remove shoot' }).click();
  await page.getByTestId('pick-folder').setInputFiles(dir);
  await expect(page.getByTestId('input-status')).toHaveText('1 input, 4 files');
  await page.getByTestId('start').click();
  await expect(page.getByTestId('last-batch')).toContainText(
    'Every result already exists in the output folder: no job was queued.',
  );
  await expect(page.getByTestId('last-batch').locator('details li')).toHaveCount(4);
  expect(await desk<unknown[]>(host, 'batches.list', {})).toHaveLength(1);
  expect(errors).toEqual([]);
});

test('the same folder started again with another scale factor: the check says they get new names, and Start makes them beside the first ones, overwriting nothing', async ({
  page,
}) => {
  const errors = watchErrors(page);
  const dir = join(mkdtempSync(join(tmpdir(), 'md-again-')), 'shoot');
  await upscaleTwoAndANote(page, 300, dir);
  await expect(page.getByTestId('last-batch')).toContainText('Batch done', { timeout: 30_000 });
  const [first] = await desk<{ id: string; outDir: string }[]>(host, 'batches.list', {});
  // A typed local folder follows the rule too: the tool's folder, then the folder's name.
  expect(first.outDir).toBe(join(host.home, 'results', 'Precision upscaler', 'shoot'));
  const before = readdirSync(first.outDir).sort();
  expect(before).toEqual(['img-00_upscaler-precision.png', 'sub']);

  await page.getByTestId('field-scale_factor').fill('4');
  await expect(page.getByTestId('check-summary')).toHaveText(
    '2 images ready, 1 will be skipped, 2 saved under new names (made before with other settings)',
  );
  await page.getByTestId('start').click();
  // The first batch's "Batch done" is still shown until the new batch is in the list.
  await expect.poll(async () => (await desk<unknown[]>(host, 'batches.list', {})).length).toBe(2);
  const [again] = await desk<{ id: string; params: Record<string, unknown> }[]>(host, 'batches.list', {});
  expect(again.params.scale_factor).toBe(4);
  const jobsOf = async () => (await desk<{ jobs: Job[] }>(host, 'jobs.list', { batchId: again.id })).jobs;
  await expect.poll(async () => (await jobsOf()).map((j) => j.state), { timeout: 30_000 }).toEqual(['done', 'done']);
  await expect(page.getByTestId('last-batch')).toContainText('Batch done');
  const jobs = await jobsOf();
  expect(jobs.flatMap((j) => j.outputs).map((p) => relative(first.outDir, p))).toEqual([
    'img-00_upscaler-precision-2.png',
    join('sub', 'img-01_upscaler-precision-2.png'),
  ]);
  expect([(await sharp(jobs[0].outputs[0]).metadata()).width]).toEqual([256]);
  expect([(await sharp(join(first.outDir, before[0])).metadata()).width]).toEqual([128]);
  expect(errors).toEqual([]);
});

test("a folder whose names Windows refuses, from a Linux disk: its photos are copied under names every system holds, shown under the user's names, and run", async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(300);
  host = await launch(newHome(), sandbox.env);
  // `con` and `aux` are Windows devices, `:` a character it refuses; two names one file on a Mac.
  const dir = join(mkdtempSync(join(tmpdir(), 'md-names-')), 'con');
  mkdirSync(dir);
  for (const [i, name] of ['aux.png', 'Photo.PNG', 'photo.png', 'a:b.png'].entries()) {
    await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 40 * i, g: 90, b: 160 } } })
      .png()
      .toFile(join(dir, name));
  }

  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  await page.getByTestId('pick-folder').setInputFiles(dir);
  await expect(page.getByTestId('input-status')).toHaveText('1 input, 4 files');
  await expect(page.getByRole('list', { name: 'Inputs' }).getByRole('listitem')).toHaveText([/^con\s*· 4 files/]);
  await expect(page.getByTestId('input-thumbs').locator('img')).toHaveCount(4);
  // Of the two photos of one name, whichever was copied second is numbered.
  const inbox = join(host.home, 'inbox');
  expect(
    readdirSync(inbox, { recursive: true })
      .map((p) => String(p).split(/[\\/]/).slice(1).join('/'))
      .filter((p) => p.includes('/'))
      .map((p) => p.toLowerCase())
      .sort(),
  ).toEqual(['con_/a_b.png', 'con_/aux_.png', 'con_/photo-2.png', 'con_/photo.png']);

  await page.getByTestId('start').click();
  await expect(page.getByTestId('last-batch')).toContainText('Batch done', { timeout: 60_000 });
  await expect(page.getByTestId('last-batch')).toContainText('4/4');
  expect(errors).toEqual([]);
});

// Chromium's folder picker lists a chosen folder's real files only: every link in it (to a file or a
// folder outside it, one back to the folder, one to nothing) is left out by the browser, silently,
// before the page sees anything. A drop cannot be made to carry a folder in this headless browser,
// so links met in a folder given by path (the desktop app, mediadesk run) are tested in
// test/engine/scan.test.ts. Here: a picked folder full of links copies its real photos and ends.
test('the browser folder picker over a folder holding links: its real photos are copied and run, the links left out by the browser', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  sandbox = await sandboxAt(300);
  host = await launch(newHome(), sandbox.env);
  const root = mkdtempSync(join(tmpdir(), 'md-links-'));
  const dir = join(root, 'shoot');
  await makeImages(dir, 2);
  mkdirSync(join(root, 'elsewhere'));
  await sharp({ create: { width: 64, height: 48, channels: 3, background: '#c63' } })
    .png()
    .toFile(join(root, 'elsewhere', 'other.png'));
  symlinkSync(join(root, 'elsewhere', 'other.png'), join(dir, 'outside.png'));
  symlinkSync(join(root, 'elsewhere'), join(dir, 'elsewhere-link'));
  symlinkSync(dir, join(dir, 'loop'));
  symlinkSync(join(root, 'missing.png'), join(dir, 'dangling.png'));
  symlinkSync(join(dir, 'self.png'), join(dir, 'self.png'));

  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  await page.getByTestId('pick-folder').setInputFiles(dir);
  await expect(page.getByTestId('input-status')).toHaveText('1 input, 2 files');
  await expect(page.getByTestId('input-thumbs').locator('img')).toHaveCount(2);
  await page.getByTestId('start').click();
  await expect(page.getByTestId('last-batch')).toContainText('Batch done', { timeout: 60_000 });
  await expect(page.getByTestId('last-batch')).toContainText('2/2');
  const [batch] = await desk<{ id: string }[]>(host, 'batches.list', {});
  const { jobs } = await desk<{ jobs: Job[] }>(host, 'jobs.list', { batchId: batch.id, limit: 100 });
  expect(jobs.map((j) => relative(join(host.home, 'inbox'), j.input!).split('/').slice(1).join('/')).sort()).toEqual([
    'shoot/img-00.png',
    'shoot/sub/img-01.png',
  ]);
  expect(errors).toEqual([]);
  rmSync(root, { recursive: true, force: true });
});

test('a drop that takes a while to copy says so once, then what it came to, never each count', async ({
  page,
  launch,
}) => {
  const errors = watchErrors(page);
  const live = await watchLiveRegions(page);
  host = await launch(newHome());
  const dir = join(mkdtempSync(join(tmpdir(), 'md-slow-')), 'shoot');
  await makeImages(dir, 8);
  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  // Kept: lets the live regions settle empty before what is counted begins.
  await page.waitForTimeout(300);
  // The uploads are held in the browser (then sent on, unchanged): a copy still going after a second.
  const held: Route[] = [];
  let holding = true;
  await page.route('**/upload?**', (route) => (holding ? void held.push(route) : route.continue()));
  await page.getByTestId('pick-folder').setInputFiles(dir);
  await expect.poll(async () => (await live()).spoke).toEqual(['Copying 8 files to MediaDesk…']);
  holding = false;
  // One at a time, so the count on screen moves eight times.
  for (const r of held) {
    await r.continue();
    // Kept: one copy answer at a time, so each shows on screen before the next.
    await page.waitForTimeout(100);
  }
  await expect(page.getByTestId('input-status')).toHaveText('1 input, 8 files');
  await expect.poll(async () => (await live()).spoke.join(' ')).toContain('Added shoot: 8 files.');
  // Kept: proves nothing more is said after the end; a late sentence would come within 2 s.
  await page.waitForTimeout(2000);
  const log = await live();
  expect(log.spoke).toEqual(['Copying 8 files to MediaDesk…', 'Added shoot: 8 files.']);
  expect(log.bornFull).toEqual([]);
  expect(errors).toEqual([]);
});

test('what a drop, a Start and its batch came to is said by a status already in the page, once; a refused Start or add is an alert', async ({
  page,
  launch,
  sandboxAt,
}) => {
  const errors = watchErrors(page);
  const live = await watchLiveRegions(page);
  sandbox = await sandboxAt(300);
  host = await launch(newHome(), sandbox.env);
  await desk(host, 'settings.set', { concurrency: 2 });
  const dir = join(mkdtempSync(join(tmpdir(), 'md-said-')), 'shoot');
  await makeImages(dir, 6);
  writeFileSync(join(dir, '.DS_Store'), 'not a photo');
  // Inside the host's output folder, where a page's results folders must lie.
  const file = join(host.home, 'results', 'not a folder');
  mkdirSync(join(host.home, 'results'), { recursive: true });
  writeFileSync(file, 'a file where the folder should be');
  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-select').selectOption('upscaler-precision');
  // Kept: lets the live regions settle empty before what is counted begins.
  await page.waitForTimeout(300);
  // What came meanwhile is said together (at most one sentence every 1.5 s): looked for in the whole.
  const said = async () => (await live()).spoke.join(' ');
  const alerted = async () => (await live()).alerted;

  // Start with no input: the form is refused, and that is an alert.
  await page.getByTestId('start').click();
  await expect.poll(alerted).toEqual(['Fix the fields marked in red.']);
  await page.getByTestId('pick-folder').setInputFiles(dir);
  await expect.poll(said).toBe('Added shoot: 6 files. Left out 1 hidden or system file.');
  // The same folder typed again: refused, as an alert.
  await page.getByTestId('typed-path').fill(join(dir, '..'));
  await page.getByTestId('typed-path').press('Enter');
  await page.getByTestId('typed-path').fill(join(dir, '..'));
  await page.getByTestId('typed-path').press('Enter');
  await expect.poll(alerted).toContain(`${join(dir, '..')} is already in the list`);
  await page.getByRole('button', { name: `Remove ${join(dir, '..')}` }).click();

  // The server refuses the Start: an alert, in a region that was there before.
  await page.getByTestId('out-dir').fill(file);
  await page.getByTestId('start').click();
  await expect.poll(alerted).toContain(`output folder: ${file} is a file, not a folder`);

  // Started, run, done: two sentences, not one per job.
  await page.getByTestId('out-dir').fill(join(host.home, 'results', 'out'));
  await page.getByTestId('start').click();
  await expect.poll(said).toContain('Batch started: 6 jobs queued.');
  await expect(page.getByTestId('last-batch')).toContainText('Batch done', { timeout: 60_000 });
  await expect.poll(said).toContain('Precision upscaler: batch done, 6 of 6.');
  // Kept: proves nothing more is said after the end; a late sentence would come within 2 s.
  await page.waitForTimeout(2000);
  const log = await live();
  expect(log.spoke.join(' ')).toBe(
    `Added shoot: 6 files. Left out 1 hidden or system file. Added ${join(dir, '..')}. Batch started: 6 jobs queued. Precision upscaler: batch done, 6 of 6.`,
  );
  expect(log.spoke.length).toBeLessThanOrEqual(4);
  expect(log.bornFull).toEqual([]);
  expect(log.alertBornFull).toEqual([]);
  expect(errors).toEqual([]);
});

/** Elements of `loc` whose text runs past their box (cut off, or ellipsized). */
const cutOff = (loc: ReturnType<Page['getByTestId']>) =>
  loc.evaluateAll((els) => els.filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent));

for (const size of [
  { width: 1024, height: 700 },
  { width: 1280, height: 800 },
]) {
  test(`at ${size.width}x${size.height} batches of one tool read apart in Results and the Queue, and every result tile names its file`, async ({
    page,
    launch,
    sandboxAt,
  }) => {
    const errors = watchErrors(page);
    await page.setViewportSize(size);
    sandbox = await sandboxAt(200);
    host = await launch(newHome(), sandbox.env);
    await desk(host, 'settings.set', { concurrency: 6 });
    const dir = mkdtempSync(join(tmpdir(), 'md-names-'));
    await makeImages(dir, 2);
    const long = '2024-05-12_wedding_bride-portrait-by-the-window-final-retouch-0421.png';
    await sharp({ create: { width: 64, height: 48, channels: 3, background: '#c08040' } })
      .png()
      .toFile(join(dir, long));
    await desk(host, 'batches.start', { tool: 'upscaler-precision', inputs: [dir], params: {} });
    await desk(host, 'batches.start', { tool: 'skin-creative', inputs: [dir], params: {} });
    const faithful = await desk<{ batch: { id: string; outDir: string } }>(host, 'batches.start', {
      tool: 'skin-faithful',
      inputs: [dir],
      params: {},
    });

    await page.goto(`${host.url}#results`);
    const batches = page.getByTestId('result-batch');
    await expect(batches.filter({ hasText: '3 of 3 done' })).toHaveCount(3, { timeout: 30_000 });
    // Not "Skin enhancer: cre…" twice: each tool's whole title shows, on a second line if need be.
    const titles = batches.locator('strong');
    await expect(titles).toHaveText(['Skin enhancer: faithful', 'Skin enhancer: creative', 'Precision upscaler']);
    expect(await cutOff(titles)).toEqual([]);

    // Each tile names its result under its thumbnail: in full on up to two lines, else its start and end with the middle left out.
    const { jobs } = await desk<{ jobs: Job[] }>(host, 'jobs.list', { batchId: faithful.batch.id });
    const names = jobs.flatMap((j) => j.outputs.map((o) => o.split(/[\\/]/).pop()!)).sort();
    const captions = page.getByTestId('gallery-item').getByTestId('tile-name');
    await expect(captions).toHaveCount(3);
    const shown = await captions.evaluateAll((els) =>
      els.map((e) => ({
        name: e.getAttribute('title')!,
        text: e.textContent!,
        cut: e.scrollHeight > e.clientHeight + 1 || e.scrollWidth > e.clientWidth + 1,
        height: e.getBoundingClientRect().height,
      })),
    );
    expect(shown.map((s) => s.name).sort()).toEqual(names);
    for (const s of shown) {
      expect(s.cut, `${s.name}: shown as "${s.text}", cut off`).toBe(false);
      expect(s.height, `${s.name}: caption shown`).toBeGreaterThan(8);
      if (s.name.startsWith('img-')) expect(s.text).toBe(s.name);
      else {
        const [head, tail] = s.text.split('…');
        expect(head.length, s.text).toBeGreaterThanOrEqual(10);
        expect(tail.length, s.text).toBeGreaterThanOrEqual(15);
        expect(s.name.startsWith(head) && s.name.endsWith(tail), s.text).toBe(true);
      }
    }
    await page.screenshot({ path: join(tmpdir(), `md-results-names-${size.width}.png`) });

    // The Queue's jobs panel names the tool in full, and its job count and output folder stay in sight.
    await page.getByTestId('nav-queue').click();
    await page.getByTestId('batch-row').filter({ hasText: 'Skin enhancer: faithful' }).click();
    const heading = page.locator('#jobs-h');
    await expect(heading).toContainText('Skin enhancer: faithful 3 jobs');
    await expect(page.getByTestId('batch-folder-path')).toHaveText(faithful.batch.outDir);
    const parts = await heading.evaluate((h) => {
      const box = h.getBoundingClientRect();
      const inside = [...h.querySelectorAll('*')].filter((e) => e.getBoundingClientRect().right > box.right + 1);
      return { cut: h.scrollWidth > h.clientWidth + 1, outside: inside.map((e) => e.textContent) };
    });
    expect(parts).toEqual({ cut: false, outside: [] });
    await expect(page.getByTestId('batch-retry')).toBeVisible();
    await page.screenshot({ path: join(tmpdir(), `md-queue-names-${size.width}.png`) });
    expect(errors).toEqual([]);
  });
}
