// LoRA training and the caller's own flows, over HTTP against the Sandbox: requests checked against
// the reference's operations, answers in their response schemas, a trained LoRA listed as it trains.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOperation, problemsOf, type JsonSchema } from '../../shared/official/index.ts';
import { uploadTo } from '../sandbox-upload.ts';
import { fakeClock, start, testPng } from './helpers.ts';

const clock = fakeClock();
let ctx: Awaited<ReturnType<typeof start>>;
let images: string[];

beforeAll(async () => {
  ctx = await start({ now: clock.now, taskDurationMs: 10_000 });
  images = [];
  for (let i = 0; i < 8; i++) images.push((await uploadTo(ctx.sb.url, await testPng(64 + 2 * i, 48), 'image/png')).url);
});
afterAll(() => ctx.sb.close());

const answerSchema = (method: string, path: string) =>
  findOperation(method, path)!.responses!['200'].schema as JsonSchema;
const customs = async (key = 'sandbox-owner') =>
  (await ctx.api.get('/v1/ai/loras', key)).body.data[0].customs as {
    id: number;
    name: string;
    type: string;
    training: { status: string };
  }[];

describe('LoRA training on the Sandbox', () => {
  it('answers a style training with a task in the described shape and lists the LoRA until it is trained', async () => {
    const a = await ctx.api.post('/v1/ai/loras/styles', {
      name: 'brand-look',
      quality: 'high',
      images: images.slice(0, 6),
    });
    expect(a.status, a.text).toBe(200);
    expect(problemsOf(answerSchema('POST', '/v1/ai/loras/styles'), a.body, true)).toEqual([]);
    expect(a.body.data.status).toBe('CREATED');
    const listed = (await customs()).find((l) => l.name === 'brand-look')!;
    expect(listed.type).toBe('style');
    expect(listed.training.status).not.toBe('completed');
    // Not usable before it is trained, usable after.
    const styled = () =>
      ctx.api.post('/v1/ai/mystic', { prompt: 'a cup', styling: { styles: [{ name: 'brand-look', strength: 100 }] } });
    expect((await styled()).status).toBe(400);
    clock.advance(10_000);
    expect((await customs()).find((l) => l.name === 'brand-look')!.training.status).toBe('completed');
    expect((await styled()).status).toBe(200);
    // Another caller does not see it.
    expect((await customs('sandbox-admin')).some((l) => l.name === 'brand-look')).toBe(false);
  });

  it('refuses, naming the field, what the reference does not allow', async () => {
    const tooFew = await ctx.api.post('/v1/ai/loras/characters', {
      name: 'hero',
      quality: 'high',
      gender: 'female',
      images: images.slice(0, 7),
    });
    expect(tooFew.status).toBe(400);
    expect(tooFew.body.invalid_params).toContainEqual(
      expect.objectContaining({ name: 'images', reason: 'must have at least 8 items' }),
    );
    const badName = await ctx.api.post('/v1/ai/loras/characters', {
      name: 'my hero',
      quality: 'medium',
      images,
    });
    expect(badName.status).toBe(400);
    const fields = badName.body.invalid_params.map((p: { name: string }) => p.name).sort();
    expect(fields).toEqual(['gender', 'name', 'quality']);
    const unreadable = await ctx.api.post('/v1/ai/loras/characters', {
      name: 'hero',
      quality: 'high',
      gender: 'neutral',
      images: [...images.slice(0, 7), `${ctx.sb.url}/nothing-here.png`],
    });
    expect(unreadable.status).toBe(400);
    expect(unreadable.body.invalid_params[0].name).toBe('images.7');
    const again = await ctx.api.post('/v1/ai/loras/styles', { name: 'brand-look', quality: 'high', images });
    expect(again.status).toBe(400);
    expect(again.body.invalid_params[0]).toMatchObject({ name: 'name' });
    // A reset that forgets the tasks forgets the LoRAs trained too: the name is free again.
    await ctx.api.control('reset', { tasks: true });
    expect((await customs()).some((l) => l.name === 'brand-look')).toBe(false);
    expect((await ctx.api.post('/v1/ai/loras/styles', { name: 'brand-look', quality: 'high', images })).status).toBe(
      200,
    );
  });

  it('lists the caller’s own flows, drafts included, in the described shape', async () => {
    const mine = await ctx.api.get('/v1/ai/me/flows');
    expect(mine.status).toBe(200);
    expect(problemsOf(answerSchema('GET', '/v1/ai/me/flows'), mine.body)).toEqual([]);
    const published = (await ctx.api.get('/v1/ai/flows')).body.data.map((a: { sqid: string }) => a.sqid);
    const own = mine.body.data.map((f: { sqid: string }) => f.sqid);
    expect(own).toEqual(expect.arrayContaining(published));
    expect(own.length).toBeGreaterThan(published.length);
  });
});
