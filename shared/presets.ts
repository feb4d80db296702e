import { z } from 'zod';
import { findTool, placeholderFor, validateRequest, type ToolEntry } from './catalogue/index.ts';
import type { Preset } from './contract/presets.ts';

export const PRESET_NAME_MAX = 60;

/** What is wrong with a preset's name, or null: 1 to 60 characters, no control characters. */
export function presetNameProblem(name: string): string | null {
  const trimmed = name.trim();
  if (!trimmed) return 'a preset needs a name';
  if (trimmed.length > PRESET_NAME_MAX) return `a preset's name is at most ${PRESET_NAME_MAX} characters`;
  if (/[\u0000-\u001f\u007f]/.test(trimmed)) return "a preset's name cannot hold line breaks or control characters";
  return null;
}

/** Names are told apart without case or surrounding spaces: "Soft" and " soft" are one preset. */
export const sameName = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();

/** The settings of a preset, without the tool's input field, which each run fills. */
export function presetParams(tool: ToolEntry, params: Record<string, unknown>): Record<string, unknown> {
  const out = { ...params };
  if (tool.batchField) delete out[tool.batchField];
  return out;
}

/**
 * What is wrong with a tool's settings as a preset, or null. The request check a run makes
 * (validateRequest), with the input stood in; a value left empty is allowed (a run fills it).
 */
export function presetProblem(toolId: string, params: Record<string, unknown>): string | null {
  const tool = findTool(toolId);
  if (!tool) return `no tool "${toolId}"`;
  const unknown = Object.keys(params).filter((k) => !tool.fields.some((f) => f.name === k));
  if (unknown.length) return `${tool.title} has no setting ${unknown.map((k) => `"${k}"`).join(', ')}`;
  const field = tool.fields.find((f) => f.name === tool.batchField);
  const probe =
    field && (field.kind === 'media' || field.kind === 'mediaList')
      ? { ...params, [field.name]: field.kind === 'mediaList' ? [placeholderFor(field)] : placeholderFor(field) }
      : params;
  const problems = validateRequest(tool, probe).invalid.filter((p) => p.reason !== 'is required');
  return problems.length ? problems.map((p) => `${p.field} ${p.reason}`).join('; ') : null;
}

/** The exported file: `{ "mediadeskPresets": 1, "presets": [...] }`. */
export const PRESET_FILE_VERSION = 1;
export const presetFileSchema = z.object({
  mediadeskPresets: z.literal(PRESET_FILE_VERSION, { error: 'is not a MediaDesk presets file' }),
  presets: z.array(z.unknown()),
});

const importedPresetSchema = z.object({
  name: z.string(),
  tool: z.string(),
  params: z.record(z.string(), z.unknown()),
});

/** One entry of an imported file as a preset, or why it is refused. */
export function readImportedPreset(
  entry: unknown,
  place: number,
): { ok: true; preset: Omit<Preset, 'savedAt'> } | { ok: false; name: string; reason: string } {
  const parsed = importedPresetSchema.safeParse(entry);
  const named =
    entry && typeof entry === 'object' && typeof (entry as { name?: unknown }).name === 'string'
      ? (entry as { name: string }).name
      : `preset ${place + 1}`;
  if (!parsed.success) return { ok: false, name: named, reason: 'needs a name, a tool and its settings' };
  const nameProblem = presetNameProblem(parsed.data.name);
  if (nameProblem) return { ok: false, name: named, reason: nameProblem };
  const problem = presetProblem(parsed.data.tool, parsed.data.params);
  if (problem) return { ok: false, name: named, reason: problem };
  return { ok: true, preset: { ...parsed.data, name: parsed.data.name.trim() } };
}

/**
 * Starting points for the service's own image tools, offered beside the saved presets in the
 * Studio (never stored, so never lost or exported): the settings designers reach for first.
 */
export const STARTER_PRESETS: readonly Omit<Preset, 'savedAt'>[] = [
  {
    name: 'Portrait, true to the face',
    tool: 'upscaler-creative',
    params: { optimized_for: 'soft_portraits', creativity: -3, resemblance: 5, hdr: 0, engine: 'magnific_sharpy' },
  },
  {
    name: 'Illustration, more invented detail',
    tool: 'upscaler-creative',
    params: { optimized_for: 'art_n_illustration', creativity: 6, resemblance: 0, hdr: 3, engine: 'magnific_illusio' },
  },
  {
    name: 'Landscape print, 4x',
    tool: 'upscaler-creative',
    params: {
      scale_factor: '4x',
      optimized_for: 'nature_n_landscapes',
      creativity: 2,
      hdr: 4,
      engine: 'magnific_sparkle',
    },
  },
  {
    name: 'Golden hour',
    tool: 'relight',
    params: { prompt: 'warm golden hour sunlight from the side, long soft shadows', style: 'brighter' },
  },
  {
    name: 'Product on a clean set',
    tool: 'relight',
    params: { prompt: 'soft studio light, white seamless backdrop', style: 'clean', preserve_details: true },
  },
  {
    name: 'Portrait, pop',
    tool: 'style-transfer',
    params: { is_portrait: true, portrait_style: 'pop', style_strength: 80, structure_strength: 70 },
  },
  {
    name: 'Keep the structure',
    tool: 'style-transfer',
    params: { style_strength: 60, structure_strength: 90, flavor: 'faithful' },
  },
  { name: 'Widen for a banner', tool: 'image-expand', params: { left: 512, right: 512, top: 0, bottom: 0 } },
  { name: 'Taller for a story', tool: 'image-expand', params: { left: 0, right: 0, top: 512, bottom: 512 } },
];
