import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import sharp from 'sharp';
import { GENERATED_TOOLS, type Field, type ToolEntry } from '../../shared/catalogue/index.ts';
import { rngFrom } from '../../electron/sandbox/rng.ts';
import { expect, test } from './fixtures.ts';
import { newHome } from './host.ts';
import { desk, makeImages, watchErrors } from './studio-helpers.ts';

// Ten tools derived from the service's description (no code of their own), chosen by a seed that is
// printed: a failure names the seed, and MEDIADESK_SEED=<seed> runs the same ten again.
const SEED = Number(process.env.MEDIADESK_SEED ?? Date.now() % 1_000_000);

/**
 * Left out until the Sandbox serves them (test/engine/every-tool.test.ts fails on them the same way):
 * remove these when it does.
 */
const SANDBOX_PENDING: Record<string, string> = {
  'beta-remove-background': 'a form-encoded body, which the Sandbox answers with 415',
  'classifier-image': "the Sandbox refuses the image against the schema's oneOf",
  'improve-prompt': 'the Sandbox answers 500',
};

/** The Studio's generated tools that can run from the app, ten of them in the seed's order. */
function chosen(): ToolEntry[] {
  const next = rngFrom(SEED);
  const pool = GENERATED_TOOLS.filter(
    (t) => (t.group === 'image' || t.group === 'prompt') && !t.unusable && !SANDBOX_PENDING[t.id],
  );
  return pool
    .map((t) => ({ t, r: next() }))
    .sort((a, b) => a.r - b.r)
    .slice(0, 10)
    .map((x) => x.t);
}

/** A required field of the form given a valid value, as a person would: typed, chosen or picked. */
async function fill(page: Page, f: Field, picture: string) {
  const control = page.getByTestId(`field-${f.name}`);
  switch (f.kind) {
    case 'text':
      return control.fill('a lighthouse at dusk, cinematic light');
    case 'int':
    case 'number':
      return control.fill(String(f.min ?? 1));
    case 'enum':
      return control.selectOption(f.options[0]);
    case 'media':
      if (f.encodings.includes('base64') || f.encodings.includes('dataUri'))
        return page
          .getByTestId('tool-form')
          .locator(`[data-field="${f.name}"] input[type="file"]`)
          .setInputFiles(picture);
      return control.fill('https://example.com/picture.png');
    default:
      return undefined;
  }
}

test('ten generated tools, chosen by a printed seed, filled and run in the Studio', async ({
  page,
  sandboxAt,
  launch,
}, info) => {
  console.log(`generated tools seed: ${SEED} (MEDIADESK_SEED=${SEED} runs the same ten)`);
  for (const [id, why] of Object.entries(SANDBOX_PENDING)) console.log(`left out: ${id}: ${why}`);
  info.annotations.push({ type: 'seed', description: String(SEED) });
  const errors = watchErrors(page);
  const sandbox = await sandboxAt(150);
  const host = await launch(newHome(), sandbox.env);
  const dir = join(mkdtempSync(join(tmpdir(), 'md-gen-')), 'in');
  await makeImages(dir, 1);
  const picture = join(host.home, 'picture.png');
  await sharp({ create: { width: 512, height: 512, channels: 3, background: '#5a8' } })
    .png()
    .toFile(picture);
  await page.goto(`${host.url}#studio`);

  let added = false;
  for (const [n, tool] of chosen().entries()) {
    const at = `${tool.id} (seed ${SEED})`;
    await page.getByTestId('tool-search').fill(tool.title);
    await page.locator(`[data-testid="tool-result"][data-tool="${tool.id}"]`).getByTestId('tool-pick').click();
    await expect(page.getByTestId('tool-select'), at).toHaveValue(tool.id);
    for (const f of tool.fields)
      if (f.required && !f.advanced && f.name !== tool.batchField) await fill(page, f, picture);
    // The Studio keeps its inputs from tool to tool: the folder is added once.
    if (tool.batchField && !added) {
      await page.getByTestId('pick-folder').setInputFiles(dir);
      added = true;
    }
    if (tool.batchField) await expect(page.getByTestId('input-status'), at).toContainText('1 file');
    await page.getByTestId('start').click();
    await expect
      .poll(async () => (await desk<{ tool: string }[]>(host, 'batches.list', {})).length, { message: at })
      .toBe(n + 1);
    const [batch] = await desk<{ id: string; tool: string }[]>(host, 'batches.list', {});
    expect(batch.tool, at).toBe(tool.id);
    await expect
      .poll(
        async () =>
          (
            await desk<{ jobs: { state: string; error: string | null }[] }>(host, 'jobs.list', { batchId: batch.id })
          ).jobs.map((j) => (j.state === 'done' ? 'done' : `${j.state}: ${j.error ?? ''}`)),
        { message: at, timeout: 30_000 },
      )
      .toEqual(['done']);
  }
  await page.getByTestId('nav-queue').click();
  await expect(page.getByTestId('batch-row')).toHaveCount(10);
  expect(errors).toEqual([]);
});
