import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bodyFields,
  defaultsOf,
  DEFAULT_SLUGS,
  getTool,
  pathFields,
  resolvePaths,
  validateRequest,
  type ToolEntry,
} from '../../shared/catalogue/index.ts';
import { bodyOf } from '../../electron/core/api/tools.ts';
import { start, testPng } from './helpers.ts';

/**
 * Every value the app offers for the tools whose reference changed with the newer description (or
 * the later copies public clients quote) is one the Sandbox, checking against that reference, takes;
 * and what the description rules out is refused by name.
 */
let ctx: Awaited<ReturnType<typeof start>>;
let image: string;
beforeAll(async () => {
  ctx = await start();
  image = (await testPng(256, 256)).toString('base64');
});
afterAll(() => ctx.sb.close());

function baseOf(tool: ToolEntry): Record<string, unknown> {
  const p: Record<string, unknown> = { ...defaultsOf(tool) };
  for (const f of tool.fields) {
    if (!f.required || p[f.name] !== undefined) continue;
    if (f.kind === 'text') p[f.name] = 'a lighthouse at dusk';
    if (f.kind === 'media') p[f.name] = image;
    if (f.kind === 'mediaList') p[f.name] = [image];
  }
  return p;
}

/** The app's own requests: its defaults, then each option, switch, bound and longest prompt it lets through. */
function offered(tool: ToolEntry): [string, Record<string, unknown>][] {
  const base = baseOf(tool);
  const out: [string, Record<string, unknown>][] = [['defaults', base]];
  for (const f of bodyFields(tool)) {
    const v = (label: string, value: unknown) => out.push([`${f.name}=${label}`, { ...base, [f.name]: value }]);
    if (f.kind === 'enum') for (const o of f.options) v(o, o);
    if (f.kind === 'intChoice') for (const o of f.options) v(String(o), o);
    // A switch the user can turn is sent both ways (the mystic NSFW filter cannot be turned off).
    if (f.kind === 'bool') for (const o of [true, false]) v(String(o), o);
    if ((f.kind === 'int' || f.kind === 'number') && f.min !== undefined) v(`min ${f.min}`, f.min);
    if ((f.kind === 'int' || f.kind === 'number') && f.max !== undefined) v(`max ${f.max}`, f.max);
    if (f.kind === 'text' && f.maxLength !== undefined) v(`${f.maxLength} characters`, 'x'.repeat(f.maxLength));
  }
  return out.filter(([, p]) => validateRequest(tool, p).ok);
}

const createOf = (tool: ToolEntry) =>
  resolvePaths(tool, DEFAULT_SLUGS, Object.fromEntries(pathFields(tool).map((f) => [f.name, defaultsOf(tool)[f.name]])))
    .create;
const reasons = (r: { status: number; body: { invalid_params?: { field: string; reason: string }[] } }) => [
  r.status,
  r.body.invalid_params?.map((p) => `${p.field}: ${p.reason}`),
];

describe('the values the app offers are the ones the official reference takes', () => {
  it.each(['hires', 'flex-image', 'quality-image', 'quality-edit', 'video-2x', 'image-to-prompt'])(
    '%s: every option, bound and longest prompt the app sends is taken',
    async (id) => {
      const tool = getTool(id);
      const refused: string[] = [];
      for (const [label, params] of offered(tool)) {
        const r = await ctx.api.post(createOf(tool), bodyOf(tool, params));
        if (r.status !== 200) refused.push(`${label}: ${JSON.stringify(reasons(r))}`);
      }
      expect(refused).toEqual([]);
    },
  );

  it('GPT Image 2: the app sends the 32,000-character prompt and the output formats the description lists', async () => {
    for (const id of ['quality-image', 'quality-edit']) {
      const tool = getTool(id);
      for (const output_format of ['png', 'jpeg', 'webp']) {
        const params = { ...baseOf(tool), prompt: 'x'.repeat(32000), output_format };
        expect(validateRequest(tool, params).invalid, `${id} ${output_format}`).toEqual([]);
        expect((await ctx.api.post(createOf(tool), bodyOf(tool, params))).status).toBe(200);
      }
    }
  });

  it('refuses what the description rules out, naming the field', async () => {
    const post = (id: string, body: Record<string, unknown>) => ctx.api.post(createOf(getTool(id)), body);
    expect(reasons(await post('hires', { prompt: 'x', aspect_ratio: 'social_post_4_5' }))).toEqual([
      400,
      [expect.stringMatching(/^aspect_ratio: must be one of /)],
    ]);
    expect(reasons(await post('hires', { prompt: 'x', filter_nsfw: false }))).toEqual([
      400,
      [
        'filter_nsfw: cannot be disabled for standard API usage (only authorized clients with special permissions can disable it)',
      ],
    ]);
    expect(reasons(await post('flex-image', { prompt: 'x', guidance: 1, steps: 51, safety_tolerance: 6 }))).toEqual([
      400,
      ['guidance: must be at least 1.5', 'steps: must be at most 50', 'safety_tolerance: must be at most 5'],
    ]);
    expect(reasons(await post('quality-image', { prompt: 'x'.repeat(32001), output_format: 'gif' }))).toEqual([
      400,
      ['prompt: must be at most 32000 characters', 'output_format: must be one of png, jpeg, webp'],
    ]);
    expect(reasons(await post('image-to-prompt', { image: `data:image/png;base64,${image}` }))).toEqual([
      400,
      ['image: must be base64 or a URL, as the description says (not a data: URI)'],
    ]);
  });
});
