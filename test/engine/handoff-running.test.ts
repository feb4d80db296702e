import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createCore, type Core } from '../../electron/core/index.ts';
import { grantHandOff, handOffFromArgv } from '../../electron/core/handoff.ts';
import { MemorySecretStore } from '../../electron/core/secrets.ts';
import { startSandbox } from '../../electron/sandbox/index.ts';
import type { HandOff, Res } from '../../shared/contract/index.ts';
import { control, creates, makeImages, sandboxAndFolder } from './helpers.ts';

/**
 * A second start while a batch runs (issue #44): what it hands over goes to the Studio (the
 * `studio.handOff` event), granted as a drop's paths are, and the running batch is left alone:
 * its jobs the same, none submitted twice, no batch started by the hand-off.
 */
const ctx = sandboxAndFolder('handoff-running', 300);
let core: Core;
const handed: HandOff[] = [];

beforeAll(async () => {
  core = await createCore({
    home: join(ctx.dir, 'home'),
    host: 'electron',
    secrets: new MemorySecretStore(),
    startSandbox: () => startSandbox({ port: 0 }),
    env: {
      MEDIADESK_API_URL: ctx.url,
      MEDIADESK_API_KEY: 'sandbox-owner',
      MEDIADESK_OUTPUT_DIR: join(ctx.dir, 'results'),
    },
  });
  core.events.onAny((name, payload) => {
    if (name === 'studio.handOff') handed.push(payload as HandOff);
  });
});
afterAll(() => core?.close());

const until = (what: () => boolean) => vi.waitFor(() => expect(what()).toBe(true), { timeout: 60_000, interval: 50 });
async function ok<T>(reply: Promise<Awaited<ReturnType<Core['dispatch']>>>): Promise<T> {
  const r = await reply;
  if (!r.ok) throw new Error(r.error.message);
  return r.result as T;
}
const jobsOf = (batchId: string) =>
  core.engine
    .listJobs({ batchId, limit: 100, offset: 0 })
    .jobs.map((j) => ({ id: j.id, input: j.input }))
    .sort((a, b) => a.id.localeCompare(b.id));

describe('a hand-off while a batch runs', { timeout: 120_000 }, () => {
  it('fills the Studio with the new inputs and leaves the running batch as it was', async () => {
    const shoot = join(ctx.dir, 'Summer shoot');
    const more = join(ctx.dir, 'Новые фото');
    mkdirSync(more, { recursive: true });
    await makeImages(shoot, ['a.png', 'b.png', 'c.png', 'd.png', 'e.png']);
    await makeImages(more, ['f g.png']);
    core.pathPolicy?.grant(shoot);
    await ok(core.dispatch('settings.set', { concurrency: 1 }));
    const started = await ok<Res<'batches.start'>>(
      core.dispatch('batches.start', { tool: 'upscaler-precision', inputs: [shoot], params: {} }),
    );
    const batch = started.batch!;
    await until(() => core.engine.listBatches(1, 0)[0].counts.done >= 1);
    const jobsBefore = jobsOf(batch.id);
    expect(jobsBefore).toHaveLength(5);

    // The second start's argv, as Electron hands it over (its own flags among it), parsed and granted as main does.
    const argv = ['/opt/MediaDesk/mediadesk', '--allow-file-access-from-files', '--tool', 'hires', shoot, 'f g.png'];
    for (const h of handOffFromArgv(argv, { packed: true, cwd: more }))
      core.events.emit(
        'studio.handOff',
        grantHandOff(h, (p) => core.pathPolicy?.grant(p)),
      );
    await until(() => handed.length === 1);
    expect(handed[0]).toEqual({
      screen: 'studio',
      tool: 'hires',
      preset: null,
      inputs: [
        { path: shoot, kind: 'folder' },
        { path: join(more, 'f g.png'), kind: 'file' },
      ],
      refused: [],
    });

    // The Studio checks the handed folder: the running batch's files are followed or already done,
    // none would be paid again; and looking queues nothing.
    const check = await ok<Res<'batches.check'>>(
      core.dispatch('batches.check', { tool: 'upscaler-precision', inputs: [shoot] }),
    );
    expect([check.ready, check.resumed + check.skipped.length]).toEqual([0, 5]);
    expect(core.engine.listBatches(10, 0).map((b) => b.id)).toEqual([batch.id]);
    expect(jobsOf(batch.id)).toEqual(jobsBefore);

    await until(() => core.engine.listBatches(1, 0)[0].finished);
    const after = core.engine.listBatches(10, 0);
    expect(after.map((b) => [b.id, b.total, b.counts.done])).toEqual([[batch.id, 5, 5]]);
    expect(jobsOf(batch.id)).toEqual(jobsBefore);
    // One task created per job: the hand-off submitted nothing, and nothing was submitted twice.
    expect(creates(await control(ctx.url, 'stats'))).toBe(5);
  });
});
