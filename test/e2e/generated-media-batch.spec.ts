import { mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { getTool } from '../../shared/catalogue/index.ts';
import { STUDIO_GENERATED } from '../../renderer/src/lib/tool-lists.ts';
import { makeClip } from '../media/fixtures.ts';
import { expect, test } from './fixtures.ts';
import { newHome } from './host.ts';
import { desk, watchErrors } from './studio-helpers.ts';

/** Generated tools whose batch field takes a video or audio: a folder of those runs one job per file. */
const batchMedia = (id: string) => {
  const t = getTool(id);
  const f = t.fields.find((x) => x.name === t.batchField);
  return f && 'media' in f ? f.media : null;
};

test('the Studio offers every generated tool that batches over videos or audio', () => {
  const offered = new Set(STUDIO_GENERATED.map((t) => t.id));
  for (const id of ['video-vfx', 'video-edit-wan-2-7', 'reference-to-video-kling-v3-omni-pro'])
    expect(offered.has(id), id).toBe(true);
  expect(batchMedia('video-vfx')).toBe('video');
});

test('a generated video tool runs over a folder of clips: each uploaded, each result a video', async ({
  page,
  sandboxAt,
  launch,
}) => {
  const errors = watchErrors(page);
  const sandbox = await sandboxAt(150);
  const host = await launch(newHome(), sandbox.env);
  const dir = join(mkdtempSync(join(tmpdir(), 'md-genvid-')), 'clips');
  mkdirSync(dir);
  await makeClip(dir, 'beach', { w: 320, h: 240, fps: 24, sec: 1, faststart: true });
  await makeClip(dir, 'harbour', { w: 352, h: 288, fps: 24, sec: 1, faststart: true });
  await page.goto(`${host.url}#studio`);
  const tool = getTool('video-vfx');
  await page.getByTestId('tool-search').fill(tool.title);
  await page.locator(`[data-testid="tool-result"][data-tool="${tool.id}"]`).getByTestId('tool-pick').click();
  await expect(page.getByTestId('tool-select')).toHaveValue(tool.id);
  // The zone asks for videos, not images: the picker offers what the batch field takes.
  await expect(page.getByTestId('dropzone')).toContainText('Drop videos or folders');
  await expect(page.getByTestId('pick-files')).toHaveAttribute('accept', 'video/*');
  await page.getByTestId('pick-folder').setInputFiles(dir);
  await expect(page.getByTestId('input-status')).toContainText('2 files');
  await page.getByTestId('start').click();
  await expect.poll(async () => (await desk<unknown[]>(host, 'batches.list', {})).length).toBe(1);
  const [batch] = await desk<{ id: string; tool: string; outDir: string }[]>(host, 'batches.list', {});
  expect(batch.tool).toBe(tool.id);
  await expect
    .poll(
      async () =>
        (await desk<{ jobs: { state: string; error: string | null }[] }>(host, 'jobs.list', { batchId: batch.id })).jobs
          .map((j) => (j.state === 'done' ? 'done' : `${j.state}: ${j.error ?? ''}`))
          .sort(),
      { timeout: 30_000 },
    )
    .toEqual(['done', 'done']);
  // Each clip (different bytes: an upload is reused by digest) went through the upload flow before its create (the Sandbox refuses a create whose
  // video is not an address it holds).
  const { requests } = (await (await fetch(`${sandbox.url}/__sandbox/requests`)).json()) as { requests: string[] };
  expect(requests.filter((r) => r === 'POST /v1/ai/uploads/request-url')).toHaveLength(2);
  expect(requests.filter((r) => r === `POST ${tool.create}`)).toHaveLength(2);
  // Results downloaded by kind: a video per clip, named after it.
  const files = readdirSync(batch.outDir, { recursive: true }).map(String);
  expect(files.filter((f) => ['.mp4', '.mov', '.webm'].includes(extname(f))).sort()).toEqual([
    expect.stringContaining('beach'),
    expect.stringContaining('harbour'),
  ]);
  expect(errors).toEqual([]);
});
