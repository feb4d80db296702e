import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import sharp from 'sharp';
import type { Field, ToolEntry } from '../../shared/catalogue/index.ts';
import { STUDIO_GENERATED } from '../../renderer/src/lib/tool-lists.ts';
import { rngFrom } from '../../electron/sandbox/rng.ts';
import { expect, test } from './fixtures.ts';
import { newHome } from './host.ts';
import { desk, makeImages, watchErrors, type SandboxProcess } from './studio-helpers.ts';
import { makeClip, makeVoice } from '../media/fixtures.ts';

// Ten tools derived from the service's description (no code of their own), chosen by a seed that is
// printed: a failure names the seed, and MEDIADESK_SEED=<seed> runs the same ten again.
const SEED = Number(process.env.MEDIADESK_SEED ?? Date.now() % 1_000_000);

/** A required field given as JSON typed by the person (an object of the description): not filled here; every-tool.test.ts runs these. */
/** Fields a run must fill: the required ones, and the first of each "one of these" rule (a word-only rule too). */
const needed = (t: ToolEntry) => {
  const first = new Set((t.rules ?? []).flatMap((r) => (r.kind === 'anyOf' ? [r.fields[0]] : [])));
  return t.fields.filter((f) => (f.required || first.has(f.name)) && !f.advanced && f.name !== t.batchField);
};
const jsonTyped = (t: ToolEntry) => needed(t).find((f) => f.kind === 'json')?.name;

/** This test's one folder is of images: tools batching over videos or audio run in generated-media-batch.spec.ts. */
const takesImagesOrNothing = (t: ToolEntry) => {
  const batch = t.fields.find((f) => f.name === t.batchField);
  return !batch || (batch.kind === 'media' && batch.media === 'image');
};

/** The Studio's generated tools that can run from the app, ten of them in the seed's order. */
function chosen(): ToolEntry[] {
  const next = rngFrom(SEED);
  return STUDIO_GENERATED.filter((t) => !t.unusable && !jsonTyped(t) && takesImagesOrNothing(t))
    .map((t) => ({ t, r: next() }))
    .sort((a, b) => a.r - b.r)
    .slice(0, 10)
    .map((x) => x.t);
}

/** A picture, a clip and a voice online, as a person pastes their address: put on the Sandbox through the service's upload flow. */
const mediaUrl: Record<string, string> = {};
async function hostMedia(sandbox: SandboxProcess, bytes: Buffer, contentType: string): Promise<string> {
  const headers = { 'content-type': 'application/json', 'x-magnific-api-key': String(sandbox.env.MEDIADESK_API_KEY) };
  const asked = await fetch(`${sandbox.url}/v1/ai/uploads/request-url`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ files: [{ content_type: contentType }] }),
  });
  const [file] = (
    (await asked.json()) as { files: { upload_url: string; headers: Record<string, string>; asset_url: string }[] }
  ).files;
  const put = await fetch(file.upload_url, { method: 'PUT', headers: file.headers, body: new Uint8Array(bytes) });
  expect(put.ok, `upload of the ${contentType}: HTTP ${put.status}`).toBe(true);
  return file.asset_url;
}

/** A required field of the form given a valid value, as a person would: typed, chosen or picked. */
async function fill(page: Page, f: Field, picture: string) {
  const control = page.getByTestId(`field-${f.name}`);
  switch (f.kind) {
    case 'text':
      return control.fill('a lighthouse at dusk, cinematic light'.slice(0, f.maxLength));
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
      return control.fill(mediaUrl[f.media]);
    case 'mediaList':
      // As many items as the list needs, each an address (a list's files are added one by one).
      for (let i = 0; i < Math.max(1, f.min ?? 1); i++) {
        await control.getByRole('button', { name: /^Add \(/ }).click();
        await control.getByLabel(`${f.label} ${i + 1}`, { exact: true }).fill(mediaUrl[f.media]);
      }
      return undefined;
    case 'object': {
      // A nested form: each required property as its own control; an address of the medium its `type` names.
      let medium: keyof typeof mediaUrl = 'image';
      for (const x of f.fields.filter((x) => x.required)) {
        const name = `${f.name}.${x.name}`;
        if (x.kind === 'enum' && x.options[0] in mediaUrl) medium = x.options[0];
        if (x.kind === 'url') await page.getByTestId(`field-${name}`).fill(mediaUrl[medium]);
        else await fill(page, { ...x, name } as Field, picture);
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

// The ten in two halves that run beside each other, each on a host of its own.
for (const half of [0, 1]) {
  test(`ten generated tools, chosen by a printed seed, filled and run in the Studio: ${half ? 'last' : 'first'} five`, async ({
    page,
    sandboxAt,
    launch,
  }, info) => {
    console.log(`generated tools seed: ${SEED} (MEDIADESK_SEED=${SEED} runs the same ten)`);
    for (const t of STUDIO_GENERATED.filter((t) => t.unusable)) console.log(`left out: ${t.id}: ${t.unusable}`);
    for (const t of STUDIO_GENERATED.filter(jsonTyped))
      console.log(`left out: ${t.id}: ${jsonTyped(t)} is JSON to type`);
    info.annotations.push({ type: 'seed', description: String(SEED) });
    const errors = watchErrors(page);
    const sandbox = await sandboxAt(150);
    const host = await launch(newHome(), sandbox.env);
    const dir = join(mkdtempSync(join(tmpdir(), 'md-gen-')), 'in');
    await makeImages(dir, 1);
    const picture = join(host.home, 'picture.png');
    const bytes = await sharp({ create: { width: 512, height: 512, channels: 3, background: '#5a8' } })
      .png()
      .toBuffer();
    writeFileSync(picture, bytes);
    const clip = await makeClip(host.home, 'clip', { w: 320, h: 240, fps: 24, sec: 1 });
    const voice = await makeVoice(host.home);
    mediaUrl.image = await hostMedia(sandbox, bytes, 'image/png');
    mediaUrl.video = await hostMedia(sandbox, readFileSync(clip), 'video/mp4');
    mediaUrl.audio = await hostMedia(sandbox, readFileSync(voice), 'audio/wav');
    await page.goto(`${host.url}#studio`);

    let added = false;
    for (const [n, tool] of chosen()
      .slice(half * 5, half * 5 + 5)
      .entries()) {
      const at = `${tool.id} (seed ${SEED})`;
      await page.getByTestId('tool-search').fill(tool.title);
      await page.locator(`[data-testid="tool-result"][data-tool="${tool.id}"]`).getByTestId('tool-pick').click();
      await expect(page.getByTestId('tool-select'), at).toHaveValue(tool.id);
      for (const f of needed(tool)) await fill(page, f, picture);
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
    await expect(page.getByTestId('batch-row')).toHaveCount(5);
    expect(errors).toEqual([]);
  });
}

test('a required object of the description is a nested form: runway act two filled and run', async ({
  page,
  sandboxAt,
  launch,
}) => {
  const errors = watchErrors(page);
  const sandbox = await sandboxAt(150);
  const host = await launch(newHome(), sandbox.env);
  const clip = await makeClip(host.home, 'clip', { w: 320, h: 240, fps: 24, sec: 1 });
  mediaUrl.video = await hostMedia(sandbox, readFileSync(clip), 'video/mp4');
  const tool = STUDIO_GENERATED.find((t) => t.id === 'video-runway-act-two')!;
  await page.goto(`${host.url}#studio`);
  await page.getByTestId('tool-search').fill(tool.title);
  await page.locator(`[data-testid="tool-result"][data-tool="${tool.id}"]`).getByTestId('tool-pick').click();
  // Each property is a control of its own, not a JSON box: the type a choice, the address a URL field.
  const character = page.getByTestId('field-character');
  await expect(character.getByRole('combobox', { name: 'Type' })).toBeVisible();
  await expect(page.getByTestId('field-character.uri')).toHaveAttribute('type', 'url');
  await expect(page.locator('textarea[data-testid="field-character"]')).toHaveCount(0);
  // A part left out is said beside the object it belongs to once Start is pressed.
  await page.getByTestId('field-character.type').selectOption('video');
  await page.getByTestId('start').click();
  await expect(page.getByTestId('error-character')).toContainText('uri: is required');
  await expect.poll(async () => (await desk<unknown[]>(host, 'batches.list', {})).length).toBe(0);
  await page.getByTestId('field-character.uri').fill(mediaUrl.video);
  await fill(
    page,
    tool.fields.find((f) => f.name === 'reference')!,
    '',
  );
  await page.getByTestId('start').click();
  await expect.poll(async () => (await desk<unknown[]>(host, 'batches.list', {})).length).toBe(1);
  const [batch] = await desk<{ id: string }[]>(host, 'batches.list', {});
  await expect
    .poll(
      async () =>
        (
          await desk<{ jobs: { state: string; error: string | null; params: Record<string, unknown> }[] }>(
            host,
            'jobs.list',
            { batchId: batch.id },
          )
        ).jobs.map((j) => (j.state === 'done' ? j.params : `${j.state}: ${j.error ?? ''}`)),
      { timeout: 30_000 },
    )
    .toEqual([
      expect.objectContaining({
        character: { type: 'video', uri: mediaUrl.video },
        reference: { type: 'video', uri: mediaUrl.video },
      }),
    ]);
  expect(errors).toEqual([]);
});
