/**
 * Reference checks before anything is paid for: pure functions over probes and a body, so the
 * renderer, the engine and the CLI apply the same rules. A message says the file, the measured value
 * and the limit in words ("clip.mov: frame rate 14 fps is below the 15 fps needed ..."); the rule id is `rule`.
 */
import {
  checkRules,
  FAMILY_NAMES,
  promptTotal,
  toolsOfFamily,
  type Field,
  type Rule,
  type ToolEntry,
} from '../catalogue/index.ts';
import type { Family } from '../catalogue/families.ts';
import { FAMILY_LIMITS, type VideoItemLimits } from './limits.ts';
import { numberText } from '../number-text.ts';

export * from './limits.ts';

export const RULE_IDS = [
  'video.count',
  'video.container',
  'video.mention',
  'image.mention',
  'audio.mention',
  'image_end.requires_image',
  'field.requires',
  'prompt.length',
  'prompt.long',
  'image.count',
  'image.format',
  'image.minSize',
  'image.bytes',
  'upscaler.fps',
  'probe',
] as const;
export type RuleId = (typeof RULE_IDS)[number];

/** What probing a local file or URL measured. Unmeasurable values (unsupported container) are null. */
export interface Probe {
  source: string;
  kind: 'video' | 'image';
  /** 'mp4' | 'mov' for ISO media; another container's name (e.g. 'webm') when recognised but unsupported; the image format for images. */
  container: string;
  durationSec: number | null;
  fps: number | null;
  width: number | null;
  height: number | null;
  bytes: number;
  /** Image format as sharp names it ('jpeg', 'png', ...) or the video codec string. */
  format?: string;
}

/** What a report shows of a probe (media.check, `mediadesk video check`, the video builder). */
export type ProbeSummary = Pick<Probe, 'container' | 'durationSec' | 'fps' | 'width' | 'height' | 'bytes'>;

export interface Issue {
  rule: RuleId;
  message: string;
  /** The file the issue is about, as given. */
  source?: string;
  /** Position in the `references` list given to validateReferences. */
  index?: number;
  /** The request field the issue is about (e.g. reference_images, prompt). */
  field?: string;
}

export interface ReferenceResult {
  ok: boolean;
  errors: Issue[];
  warnings: Issue[];
}

/** The last path segment, without query: short enough for a message, still recognisable. */
export function displayName(source: string): string {
  const noQuery = source.replace(/[?#].*$/, '');
  const seg = noQuery.split(/[\\/]/).filter(Boolean).pop();
  return seg ? safeDecode(seg) : source;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

// Containers report fps like 29.97002997: compare at the precision a person reads.
const cent = (n: number) => Math.round(n * 100) / 100;
const fmt = numberText;
const fmtBytes = (b: number) => `${fmt(b)} bytes (${fmt(Math.round((b / (1024 * 1024)) * 100) / 100)} MB)`;

function issue(rule: RuleId, subject: string, text: string, extra: Partial<Issue> = {}): Issue {
  return { rule, message: `${subject}: ${text}`, ...extra };
}

/** Per-file check of one video against a family's item limits: the container. */
export function checkVideo(p: Probe, limits: VideoItemLimits, extra: Partial<Issue> = {}): Issue[] {
  if (p.kind === 'video' && limits.containers.includes(p.container)) return [];
  const what = p.kind === 'image' ? `an image (${p.container})` : `container ${p.container}`;
  const words = limits.containers.map((c) => c.toUpperCase()).join(' or ');
  return [issue('video.container', displayName(p.source), `${what} is not ${words}`, { source: p.source, ...extra })];
}

const FORMAT_WORDS: Record<string, string> = { jpeg: 'JPG', png: 'PNG', webp: 'WebP' };

function mediaField(tool: ToolEntry | undefined, name: string): Extract<Field, { kind: 'mediaList' }> | undefined {
  const f = tool?.fields.find((x) => x.name === name);
  return f && f.kind === 'mediaList' ? f : undefined;
}

/**
 * The single image fields of a family's tools: the start and end frames (`image`, `image_end`).
 * Given as a URL or a file they are probed as reference images are, before anything is paid for.
 */
export function frameFields(family: Family): string[] {
  return [
    ...new Set(
      toolsOfFamily(family).flatMap((t) =>
        t.fields.filter((f) => f.kind === 'media' && f.media === 'image').map((f) => f.name),
      ),
    ),
  ];
}

export interface ImageRules {
  formats: readonly string[];
  minSide?: number;
  maxBytes?: number;
}

/**
 * What an image in `field` of the family must be: its catalogue field's formats, plus the size
 * limits the spec states for reference images (5.0 edit: 256x256, 10 MB; none for frames). Null
 * when the family has no such image field.
 */
export function imageRulesOf(family: Family, field?: string): ImageRules | null {
  const lim = FAMILY_LIMITS[family].images;
  if (lim && (field === undefined || field === lim.field)) {
    return {
      formats: mediaField(toolsOfFamily(family)[0], lim.field)?.formats ?? ['jpeg', 'png'],
      minSide: lim.minSide,
      maxBytes: lim.maxBytes,
    };
  }
  const frame =
    field === undefined
      ? undefined
      : toolsOfFamily(family)
          .flatMap((t) => t.fields)
          .find((f) => f.name === field && f.kind === 'media' && f.media === 'image');
  return frame && frame.kind === 'media' ? { formats: frame.formats ?? ['jpeg', 'png'] } : null;
}

/**
 * Per-file checks of one image for a family: format (from the catalogue), minimum size, bytes.
 * `extra.field` picks the field (a frame); without it the family's reference-image list.
 */
export function checkImage(p: Probe, family: Family, extra: Partial<Issue> = {}): Issue[] {
  const lim = imageRulesOf(family, extra.field);
  if (!lim)
    return [
      issue('image.count', displayName(p.source), `the ${FAMILY_NAMES[family].name} family takes no reference images`, {
        source: p.source,
        ...extra,
      }),
    ];
  return checkImageRules(p, lim, extra);
}

/** One image against the rules of its field: those of a family (checkImage), or a field's catalogue formats alone. */
export function checkImageRules(p: Probe, lim: ImageRules, extra: Partial<Issue> = {}): Issue[] {
  const name = displayName(p.source);
  const at = { source: p.source, ...extra };
  const formats = lim.formats;
  const words = formats.map((f) => FORMAT_WORDS[f] ?? f.toUpperCase()).join(' or ');
  if (p.kind !== 'image')
    return [issue('image.format', name, `a video (${p.container}) is not an image (${words})`, at)];
  const fmtName = p.format ?? p.container;
  const out: Issue[] = [];
  if (!formats.includes(fmtName)) out.push(issue('image.format', name, `format ${fmtName} is not ${words}`, at));
  if (
    lim.minSide !== undefined &&
    p.width !== null &&
    p.height !== null &&
    (p.width < lim.minSide || p.height < lim.minSide)
  ) {
    out.push(
      issue('image.minSize', name, `${p.width}x${p.height} is below the ${lim.minSide}x${lim.minSide} minimum`, at),
    );
  }
  if (lim.maxBytes !== undefined && p.bytes > lim.maxBytes) {
    out.push(issue('image.bytes', name, `size ${fmtBytes(p.bytes)} is above the ${fmtBytes(lim.maxBytes)} limit`, at));
  }
  return out;
}

// ---- request body -------------------------------------------------------------------------

function ruleId(r: Rule, reason: string): RuleId {
  switch (r.kind) {
    case 'requires':
      return r.field === 'image_end' ? 'image_end.requires_image' : 'field.requires';
    case 'anyOf':
    case 'exclusive':
    case 'maxTotal':
    case 'fixed':
    case 'noDataUri':
      return 'field.requires';
    case 'promptTotal':
      return 'prompt.length';
    case 'citations':
      // The reason starts with the citation it is about ("@Video1 cites …").
      if (reason.startsWith('@Video')) return 'video.mention';
      return reason.startsWith('@Image') ? 'image.mention' : 'audio.mention';
  }
}

/**
 * The family's prompt bound as a catalogue rule: the tool's own promptTotal rule (2.x, 2.5 count
 * per-shot prompts too), else the prompt field's maxLength (1.x 2,000, lite 20,000).
 */
export function promptRule(tool: ToolEntry): Extract<Rule, { kind: 'promptTotal' }> | undefined {
  const own = tool.rules?.find((r): r is Extract<Rule, { kind: 'promptTotal' }> => r.kind === 'promptTotal');
  if (own) return own;
  const f = tool.fields.find((x) => x.name === 'prompt');
  return f && f.kind === 'text' && f.maxLength !== undefined
    ? { kind: 'promptTotal', fields: ['prompt'], max: f.maxLength }
    : undefined;
}

/** Cross-field rules of the family's catalogue tool, plus the long-prompt warning. */
export function checkBody(family: Family, body: Record<string, unknown>): { errors: Issue[]; warnings: Issue[] } {
  const tool = toolsOfFamily(family)[0];
  if (!tool) return { errors: [], warnings: [] };
  const errors: Issue[] = [];
  // The body may be partial (the builder's probe sends target_fps alone): what is missing from the
  // request is validateRequest's to say, not a reference check's.
  const rules: Rule[] = (tool.rules ?? []).filter((r) => r.kind !== 'promptTotal' && r.kind !== 'anyOf');
  const promptBound = promptRule(tool);
  if (promptBound) rules.push(promptBound);
  for (const r of rules) {
    for (const p of checkRules([r], body))
      errors.push(issue(ruleId(r, p.reason), p.field, p.reason, { field: p.field }));
  }
  const warnings: Issue[] = [];
  const promptField = tool.fields.find((x) => x.name === 'prompt');
  const warnAbove = promptField && promptField.kind === 'text' ? promptField.warnAbove : undefined;
  if (promptBound && warnAbove !== undefined) {
    const n = promptTotal(body, promptBound.fields, promptBound.shots);
    if (n > warnAbove && n <= promptBound.max) {
      warnings.push(
        issue(
          'prompt.long',
          'prompt',
          `${fmt(n)} characters; results may become less predictable above about ${fmt(warnAbove)}`,
          { field: 'prompt' },
        ),
      );
    }
  }
  return { errors, warnings };
}

// ---- everything together ------------------------------------------------------------------

export interface ReferenceInput {
  family: Family;
  /** Probes in the order given; videos and images are numbered separately for @-mentions. */
  references: readonly Probe[];
  /** The request body as far as known (prompt, shots, image, image_end, target_fps, ...). */
  body?: Record<string, unknown>;
}

/** Every reference rule of the family at once; an error with `index` belongs to `references[index]`. */
export function validateReferences({ family, references, body = {} }: ReferenceInput): ReferenceResult {
  const lim = FAMILY_LIMITS[family];
  const name = FAMILY_NAMES[family].name;
  const tool = toolsOfFamily(family)[0];
  const errors: Issue[] = [];
  const videos = references.map((p, index) => ({ p, index })).filter(({ p }) => p.kind === 'video');
  const images = references.map((p, index) => ({ p, index })).filter(({ p }) => p.kind === 'image');

  // A family without an image slot reports a dropped image as a wrong container of its video slot
  // (and an image family a dropped clip as a wrong format): that is what the user did wrong. A video
  // family without a video slot (2.5) says so, rather than calling the clip a bad image.
  const videoFamily = tool?.group === 'video';
  const asVideos = lim.videos ? videos.concat(lim.images ? [] : images) : [];
  const asImages = lim.images ? images.concat(lim.videos || videoFamily ? [] : videos) : [];
  if (!lim.videos && !lim.images && references.length) {
    errors.push(
      issue('video.count', 'references', `the ${name} family takes no reference media (${references.length} given)`, {
        field: 'references',
      }),
    );
  } else if (!lim.videos && videoFamily && videos.length) {
    errors.push(
      issue(
        'video.count',
        'reference_videos',
        `the ${name} family takes no reference videos (${videos.length} given)`,
        { field: 'reference_videos' },
      ),
    );
  }

  if (lim.videos) {
    const v = lim.videos;
    const n = asVideos.length;
    if (n > v.max || n < v.min) {
      const bound = n > v.max ? `at most ${v.max}` : `at least ${v.min}`;
      errors.push(
        issue('video.count', v.field, `${n} video${n === 1 ? '' : 's'} given, ${name} takes ${bound}`, {
          field: v.field,
        }),
      );
    }
    for (const { p, index } of asVideos) errors.push(...checkVideo(p, v.item, { index, field: v.field }));
    const target = body.target_fps;
    if (v.minFpsWithTargetFps !== undefined && target !== undefined && target !== null && target !== '') {
      for (const { p, index } of asVideos) {
        if (p.kind === 'video' && p.fps !== null && cent(p.fps) < v.minFpsWithTargetFps) {
          errors.push(
            issue(
              'upscaler.fps',
              displayName(p.source),
              `frame rate ${fmt(cent(p.fps))} fps is below the ${v.minFpsWithTargetFps} fps needed when target_fps is set`,
              { source: p.source, index, field: 'target_fps' },
            ),
          );
        }
      }
    }
  }

  if (lim.images) {
    const field = mediaField(tool, lim.images.field);
    const n = asImages.length;
    const min = field?.min ?? 0;
    const max = field?.max ?? Infinity;
    if (n > max || n < min) {
      const bound = n > max ? `at most ${max}` : `at least ${min}`;
      errors.push(
        issue('image.count', lim.images.field, `${n} image${n === 1 ? '' : 's'} given, ${name} takes ${bound}`, {
          field: lim.images.field,
        }),
      );
    }
    for (const { p, index } of asImages) errors.push(...checkImage(p, family, { index, field: lim.images.field }));
  }

  // Cross-field rules see the references as the request will carry them, so @Image3 with two
  // images is caught even when the caller passed only the prompt.
  const effective: Record<string, unknown> = { ...body };
  if (lim.images && images.length) effective[lim.images.field] = images.map(({ p }) => p.source);
  const b = checkBody(family, effective);
  errors.push(...b.errors);
  return { ok: errors.length === 0, errors, warnings: b.warnings };
}
