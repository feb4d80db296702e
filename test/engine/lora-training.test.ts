// LoRA training through whole cores (createCore, as every host builds one) against a Sandbox over
// HTTP, on a real mediadesk.db: a training followed to its new LoRA, a bad one refused before
// anything is sent, and a process killed mid-training resumed by the next without a second create.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type Core } from '../../electron/core/index.ts';
import { MemorySecretStore } from '../../electron/core/secrets.ts';
import { openTrainingStore } from '../../electron/core/lora-training/store.ts';
import { startSandbox, type RunningSandbox } from '../../electron/sandbox/index.ts';
import { DeskError, type CommandName, type LoraTraining, type Req, type Res } from '../../shared/contract/index.ts';
import { uploadTo } from '../sandbox-upload.ts';
import { cleanup, control, makeImages, tmp } from './helpers.ts';

const BIN = resolve(import.meta.dirname, '../../bin/mediadesk.js');
/** The Sandbox's clock runs ahead by this: a training ends when the test moves it, not after a sleep. */
let ahead = 0;
let sb: RunningSandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, taskDurationMs: 60_000, now: () => Date.now() + ahead });
  dir = tmp('lora-training');
});
afterAll(async () => {
  await sb.close();
  cleanup(dir);
});

const env = () => ({ MEDIADESK_API_URL: sb.url, MEDIADESK_API_KEY: 'sandbox-owner', MEDIADESK_POLL_MIN_MS: '50' });
const openCore = (home: string) =>
  createCore({
    home,
    host: 'cli',
    env: env(),
    runQueue: true,
    secrets: new MemorySecretStore(),
    startSandbox: () => Promise.reject(new Error('this test names its Sandbox')),
  });

async function call<K extends CommandName>(core: Core, name: K, req: Req<K>): Promise<Res<K>> {
  const reply = await core.dispatch(name, req);
  if (!reply.ok) throw DeskError.from(reply.error);
  return reply.result as Res<K>;
}

/** Resolves with the training once a `loras.changed` event says it reached `state`. */
const reaches = (core: Core, id: string, state: LoraTraining['state']) =>
  new Promise<LoraTraining>((res) => {
    const off = core.events.onAny((name, payload) => {
      if (name !== 'loras.changed') return;
      const t = (payload as { trainings: LoraTraining[] }).trainings.find((x) => x.id === id);
      if (t?.state === state) {
        off();
        res(t);
      }
    });
  });

/** `mediadesk loras train` in its own process, SIGKILLed once its stderr says it reached `state`. */
async function trainKilledAt(home: string, name: string, folder: string, state: string): Promise<void> {
  const child = spawn(process.execPath, [BIN, 'loras', 'train', '--kind', 'style', '--name', name, folder], {
    env: { ...process.env, ...env(), MEDIADESK_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let said = '';
  const exited = new Promise((res) => child.once('exit', res));
  await new Promise<void>((res, rej) => {
    child.stderr.on('data', (d) => {
      said += d;
      if (new RegExp(`^${state}( \\(|$)`, 'm').test(said)) res();
    });
    child.once('exit', () => rej(new Error(`the CLI ended first: ${said}`)));
  });
  child.kill('SIGKILL');
  await exited;
}

const storedTraining = (home: string) => {
  const store = openTrainingStore(join(home, 'mediadesk.db'));
  try {
    return store.list()[0];
  } finally {
    store.close();
  }
};

const posts = async (path: string): Promise<number> => (await control(sb.url, 'stats')).requests[`POST ${path}`] ?? 0;

describe('LoRA training through the core', () => {
  it('uploads the folder’s images, sends one create, follows it to completion, and the new LoRA is listed', async () => {
    const home = join(dir, 'complete');
    const folder = join(dir, 'shoot');
    await makeImages(folder, ['a.png', 'b.png', 'c.png', 'd.png', 'e.png', 'f.png'], 32);
    writeFileSync(join(folder, 'notes.txt'), 'not an image');
    const core = await openCore(home);
    try {
      const check = await call(core, 'loras.trainCheck', {
        kind: 'style',
        name: 'shoot-look',
        quality: 'medium',
        inputs: [folder],
      });
      expect(check.problems).toEqual([]);
      expect(check.images).toHaveLength(6);
      expect(check.skipped.map((s) => s.path)).toEqual([join(folder, 'notes.txt')]);
      expect(check.limits).toEqual({ min: 6, max: 20 });
      expect(check.fields.find((f) => f.name === 'quality')!.options).toEqual(['medium', 'high', 'ultra']);
      expect(check.price).toMatchObject({ credits: null });
      expect(check.price.note).toMatch(/^Price unknown/);

      const uploadsBefore = await posts('/v1/ai/uploads/request-url');
      const { training } = await call(core, 'loras.train', {
        kind: 'style',
        name: 'shoot-look',
        quality: 'medium',
        inputs: [folder],
      });
      expect(training.state).toBe('queued');
      const started = await reaches(core, training.id, 'training');
      expect(started.taskId).toMatch(/^[0-9a-f-]{36}$/);
      expect((await posts('/v1/ai/uploads/request-url')) - uploadsBefore).toBe(6);
      ahead += 60_000;
      const done = await reaches(core, training.id, 'done');
      expect(done.trainingStatus).toBe('completed');
      const { loras } = await call(core, 'loras.list', {});
      const made = loras.find((l) => l.name === 'shoot-look')!;
      expect(made).toMatchObject({ id: done.loraId, type: 'style', custom: true });
      expect(made.training?.status).toBe('completed');
      expect(await posts('/v1/ai/loras/styles')).toBe(1);
    } finally {
      await core.close();
    }
  });

  it('refuses a bad training with every problem named, before anything is uploaded or sent', async () => {
    const home = join(dir, 'refused');
    const folder = join(dir, 'seven');
    await makeImages(folder, ['1.png', '2.png', '3.png', '4.png', '5.png', '6.png', '7.png'], 24);
    const core = await openCore(home);
    try {
      const before = (await control(sb.url, 'requests')).requests.length;
      const err = await call(core, 'loras.train', {
        kind: 'character',
        name: 'our hero',
        quality: 'medium',
        inputs: [folder],
      }).catch((e: unknown) => e as DeskError);
      expect(err).toBeInstanceOf(DeskError);
      expect((err as DeskError).code).toBe('invalid');
      expect((err as DeskError).invalid).toEqual(
        expect.arrayContaining([
          { field: 'images', reason: 'must be 8 to 20 images; 7 can be sent' },
          { field: 'gender', reason: 'is required' },
          { field: 'quality', reason: 'must be one of high, ultra' },
          expect.objectContaining({ field: 'name' }),
        ]),
      );
      expect((err as DeskError).message).toMatch(/^The character LoRA cannot be trained: /);
      expect((await control(sb.url, 'requests')).requests.slice(before)).toEqual([]);
      expect((await call(core, 'loras.trainings', {})).trainings).toEqual([]);
    } finally {
      await core.close();
    }
  });

  it('a process killed while its training runs: the next one follows it to its LoRA without a second create', async () => {
    const home = join(dir, 'killed');
    const folder = join(dir, 'kill-shoot');
    await makeImages(folder, ['1.png', '2.png', '3.png', '4.png', '5.png', '6.png'], 28);
    const creates = await posts('/v1/ai/loras/styles');
    await trainKilledAt(home, 'survivor', folder, 'training');
    const row = storedTraining(home);
    expect(row.state).toBe('training');
    expect(await posts('/v1/ai/loras/styles')).toBe(creates + 1);

    const core = await openCore(home);
    try {
      const finished = reaches(core, row.id, 'done');
      ahead += 60_000;
      const done = await finished;
      expect(done.taskId).toBe(row.taskId);
      expect((await call(core, 'loras.list', {})).loras.find((l) => l.name === 'survivor')?.id).toBe(done.loraId);
      expect(await posts('/v1/ai/loras/styles')).toBe(creates + 1);
    } finally {
      await core.close();
    }
  });

  it('a process killed while its create hung: the next one follows the LoRA the service made, or leaves it to the user', async () => {
    const folder = join(dir, 'hung');
    const files = await makeImages(folder, ['1.png', '2.png', '3.png', '4.png', '5.png', '6.png'], 26);
    await control(sb.url, 'faults', { neverAnswer: ['/v1/ai/loras/styles'] });
    await trainKilledAt(join(dir, 'hung-taken'), 'answer-lost', folder, 'submitting');
    await trainKilledAt(join(dir, 'hung-lost'), 'never-taken', folder, 'submitting');
    await control(sb.url, 'faults', { neverAnswer: [] });
    // The service took the first create (its answer was what got lost): the LoRA is in its catalogue.
    const images: string[] = [];
    for (const f of files) images.push((await uploadTo(sb.url, readFileSync(f), 'image/png')).url);
    const taken = await fetch(`${sb.url}/v1/ai/loras/styles`, {
      method: 'POST',
      headers: { 'x-magnific-api-key': 'sandbox-owner', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'answer-lost', quality: 'high', images }),
    });
    expect(taken.status).toBe(200);
    const creates = await posts('/v1/ai/loras/styles');

    const a = await openCore(join(dir, 'hung-taken'));
    try {
      const row = storedTraining(join(dir, 'hung-taken'));
      expect(row.state).toBe('submitting');
      const done = reaches(a, row.id, 'done');
      ahead += 60_000;
      const lora = (await call(a, 'loras.list', {})).loras.find((l) => l.name === 'answer-lost')!;
      expect((await done).loraId).toBe(lora.id);
    } finally {
      await a.close();
    }
    const b = await openCore(join(dir, 'hung-lost'));
    try {
      const row = storedTraining(join(dir, 'hung-lost'));
      const attention = await reaches(b, row.id, 'needs_attention');
      expect(attention.error).toMatch(/may have been created and charged/);
    } finally {
      await b.close();
    }
    expect(await posts('/v1/ai/loras/styles')).toBe(creates);
  });
});
