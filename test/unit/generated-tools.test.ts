import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { deriveCatalogue, proseOf, proseOfCatalogue, type RefOperation } from '../../scripts/tool-derive.ts';
import {
  ALL_TOOLS,
  defaultsOf,
  GENERATED_CATALOGUE,
  GENERATED_TOOLS,
  TOOLS,
  getTool,
  toolOfGenerated,
  validateRequest,
} from '../../shared/catalogue/index.ts';
import {
  answersAtOnce,
  bodyObject,
  findOperation,
  OPERATIONS,
  REFERENCE_FILES,
  requestProblems,
} from '../../shared/official/index.ts';
import { syncEnvelope } from '../../electron/core/api/tools.ts';
import { downloadToPart } from '../../electron/core/downloads/download.ts';
import { priceOfCreate, toolPriceOf } from '../../shared/prices.ts';
import { assertParams } from '../../electron/core/engine/params-check.ts';

/** A body's properties, its branches' (oneOf, anyOf, allOf) too. */
function propertiesOfBody(s: Record<string, unknown> | null): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  if (!s) return out;
  for (const b of [...((s.allOf ?? []) as []), ...((s.oneOf ?? s.anyOf ?? []) as [])])
    Object.assign(out, propertiesOfBody(b));
  return Object.assign(out, s.properties ?? {});
}

/**
 * The generated catalogue is what `reference:update` derives from the committed reference: its
 * facts always; its words (summary, help) from the description when MEDIADESK_DESCRIPTION names it
 * (the file the reference's source records), else as the file holds them.
 */
describe('shared/catalogue/generated-data.ts', () => {
  const described = process.env.MEDIADESK_DESCRIPTION;

  it('equals what the script derives from the committed reference', () => {
    const prose =
      described && existsSync(described)
        ? proseOf(parseYaml(readFileSync(described, 'utf8'), { maxAliasCount: -1 }))
        : proseOfCatalogue(GENERATED_CATALOGUE);
    const derived = deriveCatalogue(OPERATIONS as unknown as RefOperation[], prose, GENERATED_CATALOGUE.source);
    expect(JSON.parse(JSON.stringify(derived))).toEqual(GENERATED_CATALOGUE);
    expect(GENERATED_CATALOGUE.source).toEqual(REFERENCE_FILES.at(-1)!.source);
  });

  it('makes every create of the reference a tool: curated, or generated once', () => {
    const creates = OPERATIONS.filter((op) => op.method === 'POST' && op.generates && !op.path.includes('{'));
    expect(GENERATED_CATALOGUE.tools.map((t) => t.path).sort()).toEqual(creates.map((op) => op.path).sort());
    const ids = ALL_TOOLS.map((t) => t.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(GENERATED_TOOLS.every((t) => t.generated && getTool(t.id) === t)).toBe(true);
    // No generated tool repeats a curated create.
    const curated = new Set(TOOLS.map((t) => t.create));
    expect(GENERATED_TOOLS.filter((t) => curated.has(t.create))).toEqual([]);
  });

  it('reads fields from the request schema: kinds, bounds, enums, defaults, required, help, the batch field', () => {
    // Relight and lip-sync are curated favourites now; their derivation is still what is read here.
    const derived = (path: string) => toolOfGenerated(GENERATED_CATALOGUE.tools.find((t) => t.path === path)!);
    const relight = derived('/v1/ai/image-relight');
    expect(relight).toMatchObject({ group: 'image', result: 'image', batchField: 'image', generated: true });
    const field = (name: string) => relight.fields.find((f) => f.name === name);
    expect(field('image')).toMatchObject({
      kind: 'media',
      media: 'image',
      required: true,
      encodings: ['url', 'base64'],
    });
    expect(field('light_transfer_strength')).toMatchObject({ kind: 'int', min: 0, max: 100, default: 100 });
    expect(field('style')).toMatchObject({ kind: 'enum', default: 'standard' });
    expect(field('style')!.help).toBeUndefined();
    expect(field('prompt')!.help).toMatch(/descriptive prompt/);
    expect(field('webhook_url')).toMatchObject({ kind: 'url', advanced: true });
    expect(field('advanced_settings')).toMatchObject({ kind: 'object' });
    expect(derived('/v1/ai/lip-sync/latent-sync').fields.find((f) => f.name === 'audio_url')).toMatchObject({
      kind: 'media',
      media: 'audio',
      encodings: ['url'],
    });
    expect(getTool('video-vfx')).toMatchObject({ group: 'video', result: 'video', batchField: 'video' });
    expect(getTool('improve-prompt')).toMatchObject({ group: 'prompt', result: 'text' });
    expect(
      validateRequest(relight, { image: 'https://example.com/a.png', light_transfer_strength: 101 }).invalid,
    ).toEqual([{ field: 'light_transfer_strength', reason: 'must be at most 100' }]);
  });

  it('makes each object of a generated tool a nested form of its properties, or JSON saying why it cannot', () => {
    const shapes: string[] = [];
    for (const t of GENERATED_TOOLS) {
      const props = propertiesOfBody(bodyObject(findOperation('POST', t.create)!));
      for (const f of t.fields) {
        const p = props[f.name] ?? {};
        const types = [p.type].flat();
        const items = (p.items ?? {}) as Record<string, unknown>;
        const objectShaped = types.includes('object') || (types.includes('array') && items.type === 'object');
        if (f.kind === 'json') {
          expect(f.why, `${t.id}.${f.name}`).toMatch(/\w/);
          shapes.push(`${t.id}.${f.name}: JSON, ${f.why}`);
        } else if (objectShaped) {
          expect(f.kind, `${t.id}.${f.name}`).toBe('object');
          // Every property of the description is a control, with its bounds, options, defaults and required.
          const sub = (p.properties ?? {}) as Record<string, Record<string, unknown>>;
          const fields = (f as Extract<typeof f, { kind: 'object' }>).fields;
          expect(fields.map((x) => x.name).sort(), `${t.id}.${f.name}`).toEqual(Object.keys(sub).sort());
          for (const x of fields) {
            expect(x.label, `${t.id}.${f.name}.${x.name}`).toMatch(/^[A-Z]/);
            expect(!!x.required).toBe(((p.required as string[] | undefined) ?? []).includes(x.name));
            if ('min' in x && x.min !== undefined) expect(x.min).toBe(sub[x.name].minimum);
            if ('max' in x && x.max !== undefined) expect(x.max).toBe(sub[x.name].maximum);
            if (x.kind === 'enum') expect(x.options).toEqual(sub[x.name].enum);
            if ('default' in x && x.default !== undefined) expect(x.default).toBe(sub[x.name].default);
          }
          shapes.push(`${t.id}.${f.name}: form of ${fields.length}`);
        }
      }
    }
    console.log(`object-shaped fields of generated tools:\n  ${shapes.join('\n  ')}`);
    // The two required objects of the reference are forms: runway act two's character and reference.
    const act = getTool('video-runway-act-two');
    for (const name of ['character', 'reference']) {
      const f = act.fields.find((x) => x.name === name)!;
      expect(f).toMatchObject({ kind: 'object', required: true });
      expect(validateRequest(act, { ...defaultsOf(act), [name]: { type: 'nope' } }).invalid).toEqual(
        expect.arrayContaining([
          { field: `${name}.type`, reason: expect.stringMatching(/must be one of/) },
          { field: `${name}.uri`, reason: 'is required' },
        ]),
      );
    }
  });

  it("sends a field only some of a body's branches take only when set: its defaults fit one branch", () => {
    // kling-v2-1-master's body is image-to-video (image) or text-to-video (aspect_ratio, default 16:9).
    const master = getTool('image-to-video-kling-v2-1-master');
    expect(master.fields.find((f) => f.name === 'aspect_ratio')).not.toHaveProperty('default');
    const unknown = GENERATED_TOOLS.flatMap((t) =>
      requestProblems(findOperation('POST', t.create)!, defaultsOf(t))
        .filter((p) => /not a parameter/.test(p.reason))
        .map((p) => `${t.id}: ${p.field}`),
    );
    expect(unknown).toEqual([]);
  });

  it('batches a model whose one required input is audio over audio files; an optional audio guide is no batch', () => {
    const op = (props: Record<string, unknown>, required: string[]) =>
      ({
        method: 'POST',
        path: '/v1/ai/voice-changer/new-model',
        basis: 'official',
        generates: 'audio',
        body: { type: 'object', properties: props, required },
      }) as unknown as RefOperation;
    const uri = { type: 'string', format: 'uri' };
    const [voice] = deriveCatalogue([op({ audio_url: uri, prompt: { type: 'string' } }, ['audio_url'])], {}, {}).tools;
    expect(voice.batch).toBe('audio_url');
    const tool = toolOfGenerated(voice);
    expect(tool.fields.find((f) => f.name === tool.batchField)).toMatchObject({ kind: 'media', media: 'audio' });
    const [guided] = deriveCatalogue([op({ audio_url: uri, image_url: uri }, ['image_url'])], {}, {}).tools;
    expect(guided.batch).toBe('image_url');
    const [optional] = deriveCatalogue([op({ audio_url: uri, prompt: { type: 'string' } }, ['prompt'])], {}, {}).tools;
    expect(optional.batch).toBeUndefined();
  });

  it('polls each task under a by-id the reference describes; numbered image inputs are media', () => {
    const unasked = GENERATED_TOOLS.filter(
      (t) => !t.sync && !OPERATIONS.some((op) => op.method === 'GET' && op.path === `${t.list}/{task-id}`),
    );
    // The description shows no by-id for these (reimagine answers its result in the create's answer):
    // they are asked about at their create path.
    expect(unasked.map((t) => t.id)).toEqual([
      'beta-text-to-image-reimagine-flux',
      'text-to-icon',
      'text-to-icon-preview',
      'video-kling-v2-6-motion-control-pro',
      'video-kling-v2-6-motion-control-std',
    ]);
    expect(unasked.every((t) => t.list === t.create && t.listShown === false)).toBe(true);
    expect(getTool('image-to-video-kling-v2-1-pro')).toMatchObject({
      list: '/v1/ai/image-to-video/kling-v2-1',
      listShown: false,
    });
    expect(getTool('text-to-image-flux-2-klein').fields.find((f) => f.name === 'input_image_2')).toMatchObject({
      kind: 'media',
      media: 'image',
      encodings: ['base64'],
    });
  });

  it('lists the creates a desktop app cannot run with the reason, and the engine refuses them saying it', async () => {
    const icon = getTool('text-to-icon');
    expect(icon.unusable).toMatch(/webhook_url/);
    await expect(
      assertParams(icon, { prompt: 'a cat', webhook_url: 'https://example.com/hook' }, false),
    ).rejects.toThrow(
      /Text to icon cannot be run from MediaDesk: the service answers it only by calling its webhook_url/,
    );
  });

  it('reads each synchronous answer of the reference as a finished task of its kind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'md-sync-'));
    const syncs = GENERATED_TOOLS.filter((t) => t.sync);
    expect(syncs.map((t) => t.create).sort()).toEqual(
      OPERATIONS.filter((op) => op.generates && answersAtOnce(op))
        .map((op) => op.path)
        .sort(),
    );
    for (const tool of syncs) {
      const op = OPERATIONS.find((o) => o.method === 'POST' && o.path === tool.create)!;
      const env = syncEnvelope(tool, op.responses!['200'].example);
      expect(env.status).toBe('COMPLETED');
      expect(env.generated!.length).toBeGreaterThan(0);
      if (tool.result === 'text') expect(env.generated![0]).toMatch(/\d/);
      const first = env.generated![0];
      const url = typeof first === 'string' ? first : first.url;
      if (url.startsWith('data:')) {
        // The classic generator's base64 image goes to disk as it is, no request made.
        const part = join(dir, `${tool.id}.part`);
        const r = await downloadToPart(url, part);
        expect(r.bytes).toBeGreaterThan(0);
        expect(readFileSync(part).length).toBe(r.bytes);
      }
    }
    // Background removal: the result named `url`, not the original or the preview.
    const bg = getTool('beta-remove-background');
    expect(
      syncEnvelope(bg, {
        original: 'https://x/original.png',
        high_resolution: 'https://x/hi.png',
        preview: 'https://x/preview.png',
        url: 'https://x/result.png',
      }).generated,
    ).toEqual(['https://x/result.png']);
    expect(bg.form).toBe(true);
  });

  it('says before Start that a generated tool has no published price', () => {
    const p = priceOfCreate(toolPriceOf('image-relight', null), {});
    expect(p.creditsEach).toBeNull();
    expect(p.basis).toMatch(/^cost unknown: the service's pricing pages give no credit price/);
  });
});
