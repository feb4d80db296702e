/* eslint-disable max-lines -- Over 500 lines: data, one entry per tool; splitting it would scatter the catalogue. */
import type { Family } from './families.ts';
import type { Encoding, Field } from './fields.ts';
import type { ResultKind, ToolGroup } from './kinds.ts';
import type { Rule } from './rules.ts';

export interface ToolEntry {
  id: string;
  title: string;
  group: ToolGroup;
  /** The spec's task endpoint: tools of one endpoint share its list path and differ in their create path. */
  endpoint: string;
  /** The model family this tool is a variant in, if any (its reference limits, its Video builder tab). */
  family?: Family;
  summary: string;
  /** Create path; `{slug}` placeholders come from the model-slug catalogue, others from `in: 'path'` fields. */
  create: string;
  /** Collection path for list (polling); by-id is `${list}/{task-id}`. */
  list: string;
  /** Whether the spec itself shows the list endpoint (else it follows "the same pattern"). */
  listShown: boolean;
  fields: readonly Field[];
  rules?: readonly Rule[];
  result: ResultKind;
  /** The field a dropped local file fills in a folder batch; absent for prompt-only tools. */
  batchField?: string;
  /** Result URLs live this many hours (video 24, per the spec). */
  resultTtlHours?: number;
  /**
   * Priced by output area (the spec): this field multiplies both sides, so a use costs its square
   * relative to the field's default. The estimate scales the team's learned price by it.
   */
  pricedByArea?: string;
  /**
   * Values the service accepts and then ignores beside others: `field` (a dotted path) is sent but
   * has no effect when any of `when` is sent too. A warning, not an error: the request is valid.
   */
  ignored?: readonly { field: string; when: readonly string[]; reason: string }[];
  /** Derived from the reference by `reference:update` (generated.ts), not curated here. */
  generated?: true;
  /** Answers its result at once (no task to poll): the engine stores the answer's result. */
  sync?: true;
  /** Its body is sent form-encoded (the service's background removal). */
  form?: true;
  /** Why it cannot be run from a desktop app (a required webhook, say); listed with it, never hidden. */
  unusable?: string;
}

// ---- shared field shapes --------------------------------------------------------------
const webhook: Field = {
  kind: 'url',
  name: 'webhook_url',
  label: 'Webhook URL',
  advanced: true,
  help: 'Notified on each status change; the app polls either way.',
};
const slider = (name: string, label: string, def: number, help?: string): Field => ({
  kind: 'int',
  name,
  label,
  min: 0,
  max: 100,
  default: def,
  help,
});
const prompt = (maxLength: number, extra: Partial<Extract<Field, { kind: 'text' }>> = {}): Field => ({
  kind: 'text',
  name: 'prompt',
  label: 'Prompt',
  required: true,
  minLength: 1,
  maxLength,
  multiline: true,
  ...extra,
});
const seed = (min = 1, max = 4294967295): Field => ({
  kind: 'int',
  name: 'seed',
  label: 'Seed',
  min,
  max,
  help: 'Same seed with identical inputs gives consistent output.',
});
const image = (
  name: string,
  label: string,
  encodings: readonly Encoding[],
  required = true,
  formats: readonly string[] = ['jpeg', 'png'],
): Field => ({ kind: 'media', media: 'image', name, label, encodings, required, formats });
const enumOf = (name: string, label: string, options: readonly string[], def?: string, required = false): Field => ({
  kind: 'enum',
  name,
  label,
  options,
  default: def,
  required,
});
const bool = (name: string, label: string, def?: boolean): Field => ({ kind: 'bool', name, label, default: def });

export const HIRES_ASPECTS = [
  'square_1_1',
  'classic_4_3',
  'traditional_3_4',
  'widescreen_16_9',
  'social_story_9_16',
  'smartphone_horizontal_20_9',
  'smartphone_vertical_9_20',
  'standard_3_2',
  'portrait_2_3',
  'horizontal_2_1',
  'vertical_1_2',
  'social_5_4',
] as const;
export const CONTEXT_ASPECTS = [
  'square_1_1',
  'classic_4_3',
  'traditional_3_4',
  'widescreen_16_9',
  'social_story_9_16',
  'standard_3_2',
  'portrait_2_3',
  'horizontal_2_1',
  'vertical_1_2',
  'social_post_4_5',
] as const;
export const VIDEO_ASPECTS = [
  'film_horizontal_21_9',
  'widescreen_16_9',
  'classic_4_3',
  'square_1_1',
  'traditional_3_4',
  'social_story_9_16',
  'film_vertical_9_21',
] as const;
/** The 4.5 and 5.0 (Seedream) families' aspect ratios. */
export const SEEDREAM_ASPECTS = [
  'square_1_1',
  'widescreen_16_9',
  'social_story_9_16',
  'portrait_2_3',
  'traditional_3_4',
  'standard_3_2',
  'classic_4_3',
  'cinematic_21_9',
] as const;
export const QUALITY_ASPECTS = [
  'square_1_1',
  'classic_4_3',
  'traditional_3_4',
  'widescreen_16_9',
  'social_story_9_16',
  'film_horizontal_21_9',
  'standard_3_2',
  'portrait_2_3',
  'horizontal_2_1',
  'banner_3_1',
] as const;
export const SKIN_PRESETS = [
  'enhance_skin',
  'improve_lighting',
  'enhance_everything',
  'transform_to_real',
  'no_make_up',
] as const;

/** The 2.5 family's camera-motion presets (the spec names 50+). */
export const CAMERA_MOTIONS: readonly string[] = [
  'static',
  'handheld',
  'follow',
  'lead',
  'bullet_time',
  'flythrough',
  'flyover',
  'top_down',
  'rack_focus',
  'shake',
  'pan_left',
  'pan_right',
  'tilt_up',
  'tilt_down',
  'dolly_in',
  'dolly_out',
  'truck_left',
  'truck_right',
  'pedestal_up',
  'pedestal_down',
  'orbit_left',
  'orbit_right',
  'crane_up',
  'crane_down',
  'arc_left',
  'arc_right',
  'whip_pan_left',
  'whip_pan_right',
  'roll_clockwise',
  'roll_counterclockwise',
  'push_in',
  'pull_out',
  'zoom_in',
  'zoom_out',
  'vertigo_in',
  'vertigo_out',
  'spiral_in',
  'spiral_out',
  'reveal_left',
  'reveal_right',
  'reveal_up',
  'reveal_down',
  'drone_rise',
  'drone_descend',
  'slow_push',
  'slow_pull',
  'dutch_left',
  'dutch_right',
  'low_angle_push',
  'high_angle_pull',
  'tracking_left',
  'tracking_right',
];

/** An end frame only with a start frame (video 2.x). */
const IMAGE_END_NEEDS_IMAGE: Rule = {
  kind: 'requires',
  field: 'image_end',
  needs: 'image',
  reason: 'image_end requires image (the start frame)',
};

/** The video families carry resolution in the create path ({model}-{resolution}), not the body. */
const resolutionInPath = (fields: Field[]): Field[] =>
  fields.map((f) => (f.name === 'resolution' ? { ...f, in: 'path' } : f));

/**
 * A family's citation rule, from its fields: each list with a `cite` is what @<cite>N names; any
 * other kind of citation names media the family takes none of.
 */
const citations = (who: string, fields: readonly Field[], shots?: string): Rule => ({
  kind: 'citations',
  who,
  prompts: ['prompt'],
  ...(shots ? { shots } : {}),
  cites: Object.fromEntries(fields.flatMap((f) => (f.kind === 'mediaList' && f.cite ? [[f.cite, f.name]] : []))),
});

// The newer official description's 2.x schema: no reference media, no sound or music switches.
const VIDEO_2X_FIELDS = resolutionInPath([
  prompt(2000),
  enumOf('resolution', 'Resolution', ['480p', '720p', '1080p'], '720p', true),
  { kind: 'intChoice', name: 'duration', label: 'Duration (s)', options: [5, 10], default: 5 },
  enumOf('aspect_ratio', 'Aspect ratio', VIDEO_ASPECTS, 'widescreen_16_9'),
  image('image', 'Start frame', ['url', 'base64'], false),
  image('image_end', 'End frame', ['url', 'base64'], false),
  bool('camera_fixed', 'Fixed camera', false),
  seed(-1),
  webhook,
]);

const VIDEO_25_FIELDS = resolutionInPath([
  prompt(40000, { warnAbove: 5000, required: false, minLength: undefined }),
  enumOf('resolution', 'Resolution', ['480p', '720p', '1080p'], '720p', true),
  { kind: 'int', name: 'duration', label: 'Duration (s)', min: 4, max: 30, default: 5 },
  { kind: 'shots', name: 'shots', label: 'Shots', max: 6, promptMax: 40000, durationMin: 1, durationMax: 30 },
  enumOf('aspect_ratio', 'Aspect ratio', VIDEO_ASPECTS, 'widescreen_16_9'),
  {
    kind: 'mediaList',
    media: 'image',
    name: 'reference_images',
    label: 'Reference images',
    encodings: ['url', 'base64'],
    formats: ['jpeg', 'png', 'webp'],
    max: 4,
    cite: 'Image',
  },
  {
    kind: 'mediaList',
    media: 'audio',
    name: 'reference_audios',
    label: 'Reference audio',
    encodings: ['url', 'base64'],
    formats: ['mp3', 'wav'],
    max: 2,
    cite: 'Audio',
  },
  enumOf('camera_motion', 'Camera motion', CAMERA_MOTIONS),
  enumOf('output_format', 'Container', ['mp4', 'mov'], 'mp4'),
  bool('sound_effects', 'Sound effects', true),
  bool('no_music', 'No music', false),
  bool('camera_fixed', 'Fixed camera', false),
  seed(-1),
  webhook,
]);

const skinCommon = (): Field[] => [
  image('image', 'Portrait', ['url', 'base64']),
  slider('sharpen', 'Sharpen', 0),
  slider('smart_grain', 'Smart grain', 2),
];

export const TOOLS: readonly ToolEntry[] = [
  {
    id: 'skin-creative',
    title: 'Skin enhancer: creative',
    group: 'image',
    endpoint: 'skin-enhancer',
    summary: 'Portrait retouching with creative freedom.',
    create: '/v1/ai/skin-enhancer/creative',
    list: '/v1/ai/skin-enhancer',
    listShown: true,
    fields: [...skinCommon(), webhook],
    result: 'image',
    batchField: 'image',
  },
  {
    id: 'skin-faithful',
    title: 'Skin enhancer: faithful',
    group: 'image',
    endpoint: 'skin-enhancer',
    summary: 'Portrait retouching that keeps the subject as it is.',
    create: '/v1/ai/skin-enhancer/faithful',
    list: '/v1/ai/skin-enhancer',
    listShown: true,
    fields: [
      ...skinCommon(),
      slider('skin_detail', 'Skin detail', 80, 'Lower is smoother, higher keeps more texture.'),
      webhook,
    ],
    result: 'image',
    batchField: 'image',
  },
  {
    id: 'skin-flexible',
    title: 'Skin enhancer: flexible',
    group: 'image',
    endpoint: 'skin-enhancer',
    summary: 'Portrait retouching with an optimisation preset.',
    create: '/v1/ai/skin-enhancer/flexible',
    list: '/v1/ai/skin-enhancer',
    listShown: true,
    fields: [...skinCommon(), enumOf('optimized_for', 'Optimise for', SKIN_PRESETS, 'enhance_skin'), webhook],
    result: 'image',
    batchField: 'image',
  },
  {
    id: 'hires',
    title: 'High-resolution generator',
    group: 'image',
    endpoint: 'hires',
    summary: 'Photorealistic PNG images at 1K, 2K or 4K, with LoRA styles and characters.',
    create: '/v1/ai/{premium_generator}',
    list: '/v1/ai/{premium_generator}',
    listShown: true,
    fields: [
      prompt(4000),
      enumOf('resolution', 'Resolution', ['1k', '2k', '4k'], '2k'),
      enumOf('aspect_ratio', 'Aspect ratio', HIRES_ASPECTS, 'square_1_1'),
      image('structure_reference', 'Structure reference', ['base64'], false),
      slider('structure_strength', 'Structure strength', 50),
      image('style_reference', 'Style reference', ['base64'], false),
      slider('adherence', 'Adherence', 50),
      slider('hdr', 'HDR', 50),
      slider('creative_detailing', 'Creative detailing', 33),
      {
        kind: 'styling',
        name: 'styling',
        label: 'LoRA styling',
        help: 'At most one style and one character from the LoRA gallery, up to 5 colours.',
      },
      // filter_nsfw is left out: the description says standard keys cannot turn the filter off.
      webhook,
    ],
    result: 'image',
    // api-notes: LoRA styles "are ignored when a reference image is sent", and paid for all the same.
    ignored: [
      {
        field: 'styling.styles',
        when: ['structure_reference', 'style_reference'],
        reason:
          'the LoRA style is ignored while a structure or style reference image is set; remove the reference image to apply the style',
      },
    ],
  },
  {
    id: 'change-camera',
    title: 'Change camera',
    group: 'image',
    endpoint: 'change-camera',
    summary: 'Re-render an image from another camera angle.',
    create: '/v1/ai/image-change-camera',
    list: '/v1/ai/image-change-camera',
    listShown: true,
    fields: [
      image('image', 'Image', ['url'], true, ['jpeg', 'png', 'webp']),
      {
        kind: 'int',
        name: 'horizontal_angle',
        label: 'Horizontal angle',
        min: 0,
        max: 360,
        default: 0,
        help: '0 front, 90 right, 180 back, 270 left.',
      },
      {
        kind: 'int',
        name: 'vertical_angle',
        label: 'Vertical angle',
        min: -30,
        max: 90,
        default: 0,
        help: '-30 looking up, 0 eye level, 90 bird\u2019s eye.',
      },
      { kind: 'int', name: 'zoom', label: 'Zoom', min: 0, max: 10, default: 5, help: '0 wide, 10 close-up.' },
      enumOf('output_format', 'Output format', ['png', 'jpeg'], 'png'),
      seed(1),
      webhook,
    ],
    result: 'image',
    batchField: 'image',
  },
  {
    id: 'upscaler-precision',
    title: 'Precision upscaler',
    group: 'image',
    endpoint: 'upscaler-precision',
    summary: 'Upscale 2x to 16x; priced by output area.',
    pricedByArea: 'scale_factor',
    create: '/v1/ai/image-upscaler-precision-v2',
    list: '/v1/ai/image-upscaler-precision-v2',
    listShown: true,
    fields: [
      image('image', 'Image', ['url', 'base64']),
      {
        kind: 'int',
        name: 'scale_factor',
        label: 'Scale factor',
        min: 2,
        max: 16,
        default: 2,
        acceptsString: true,
        help: 'Dimensions are multiplied; 16 gives 256 times the pixels.',
      },
      enumOf('flavor', 'Flavor', ['sublime', 'photo', 'photo_denoiser'], 'photo'),
      slider('sharpen', 'Sharpen', 7),
      slider('smart_grain', 'Smart grain', 7),
      slider('ultra_detail', 'Ultra detail', 30),
      webhook,
    ],
    result: 'image',
    batchField: 'image',
  },
  {
    id: 'image-to-prompt',
    title: 'Image to prompt',
    group: 'prompt',
    endpoint: 'image-to-prompt',
    summary: 'Describe an image as a prompt.',
    create: '/v1/ai/image-to-prompt',
    list: '/v1/ai/image-to-prompt',
    listShown: true,
    fields: [image('image', 'Image', ['url', 'base64'], true, ['jpeg', 'png', 'webp']), webhook],
    result: 'text',
    batchField: 'image',
  },
  {
    id: 'context-t2i',
    title: 'Context-guided text to image',
    group: 'image',
    endpoint: 'context-t2i',
    summary: 'Text to image, optionally guided by a reference image.',
    create: '/v1/ai/text-to-image/{context_model}',
    list: '/v1/ai/text-to-image/{context_model}',
    listShown: true,
    fields: [
      prompt(4000),
      image('input_image', 'Reference image', ['url'], false, ['jpeg', 'png', 'webp']),
      enumOf('aspect_ratio', 'Aspect ratio', CONTEXT_ASPECTS, 'square_1_1'),
      { kind: 'number', name: 'guidance', label: 'Guidance', min: 1, max: 10, step: 0.5, default: 3 },
      { kind: 'int', name: 'steps', label: 'Steps', min: 1, max: 100, default: 50 },
      bool('prompt_upsampling', 'Prompt upsampling', false),
      { kind: 'int', name: 'safety_tolerance', label: 'Safety tolerance', min: 0, max: 6, default: 2 },
      seed(0),
      enumOf('output_format', 'Output format', ['png', 'jpeg'], 'png'),
      webhook,
    ],
    result: 'image',
  },
  {
    id: 'editor',
    title: 'Image editor (4.5 edit)',
    group: 'image',
    endpoint: 'editor',
    summary: 'Edit up to 5 images from a text instruction.',
    create: '/v1/ai/text-to-image/{editor_model}',
    list: '/v1/ai/text-to-image/{editor_model}',
    listShown: true,
    fields: [
      prompt(4096),
      {
        kind: 'mediaList',
        media: 'image',
        name: 'reference_images',
        label: 'Images to edit',
        encodings: ['url', 'base64'],
        formats: ['jpeg', 'png'],
        min: 1,
        max: 5,
        required: true,
      },
      enumOf('aspect_ratio', 'Aspect ratio', SEEDREAM_ASPECTS, 'square_1_1'),
      seed(0),
      bool('enable_safety_checker', 'Safety checker', true),
      webhook,
    ],
    result: 'image',
    batchField: 'reference_images',
  },
  {
    id: 'quality-image',
    title: 'Quality-tier image',
    group: 'image',
    endpoint: 'quality-image',
    summary: 'Text to image at a chosen quality tier; each image billed.',
    create: '/v1/ai/text-to-image/{quality_model}',
    list: '/v1/ai/text-to-image/{quality_model}',
    listShown: false,
    fields: [
      prompt(32000),
      enumOf('resolution', 'Resolution', ['1k', '2k', '4k'], '1k'),
      enumOf('aspect_ratio', 'Aspect ratio', QUALITY_ASPECTS, 'square_1_1'),
      enumOf('quality', 'Quality', ['low', 'medium', 'high'], 'medium'),
      {
        kind: 'int',
        name: 'num_images',
        label: 'Images',
        min: 1,
        max: 10,
        default: 1,
        help: 'Each image is billed individually.',
      },
      enumOf('background', 'Background', ['opaque', 'auto']),
      enumOf('output_format', 'Output format', ['png', 'jpeg', 'webp'], 'png'),
      webhook,
    ],
    result: 'image',
  },
  {
    id: 'quality-edit',
    title: 'Quality-tier edit',
    group: 'image',
    endpoint: 'quality-edit',
    summary: 'Edit images at a chosen quality tier.',
    create: '/v1/ai/text-to-image/{quality_model}-edit',
    list: '/v1/ai/text-to-image/{quality_model}-edit',
    listShown: false,
    fields: [
      prompt(32000),
      {
        kind: 'mediaList',
        media: 'image',
        name: 'reference_images',
        label: 'Images',
        encodings: ['url', 'base64'],
        formats: ['jpeg', 'png', 'webp'],
        min: 1,
        max: 16,
        required: true,
      },
      enumOf('resolution', 'Resolution', ['1k', '2k', '4k'], '1k'),
      enumOf('aspect_ratio', 'Aspect ratio', QUALITY_ASPECTS, 'square_1_1'),
      enumOf('quality', 'Quality', ['low', 'medium', 'high'], 'medium'),
      { kind: 'int', name: 'num_images', label: 'Images', min: 1, max: 10, default: 1 },
      enumOf('background', 'Background', ['opaque', 'auto']),
      enumOf('output_format', 'Output format', ['png', 'jpeg', 'webp'], 'png'),
      webhook,
    ],
    result: 'image',
    batchField: 'reference_images',
  },
  {
    id: 'image50',
    title: '5.0 image',
    group: 'image',
    endpoint: 'image50',
    summary: 'Text to image, 5.0 generation.',
    create: '/v1/ai/text-to-image/{image50_model}',
    list: '/v1/ai/text-to-image/{image50_model}',
    listShown: true,
    fields: [
      prompt(4096),
      enumOf('aspect_ratio', 'Aspect ratio', SEEDREAM_ASPECTS, 'square_1_1'),
      seed(0, 4294967295),
      bool('enable_safety_checker', 'Safety checker', true),
      webhook,
    ],
    result: 'image',
  },
  {
    id: 'image50-edit',
    title: '5.0 image edit',
    group: 'image',
    endpoint: 'image50-edit',
    family: 'image50-edit',
    summary: 'Edit with 1 to 5 reference images (JPG or PNG, at least 256x256, at most 10 MB).',
    create: '/v1/ai/text-to-image/{image50_model}-edit',
    list: '/v1/ai/text-to-image/{image50_model}-edit',
    listShown: true,
    fields: [
      prompt(4096),
      {
        kind: 'mediaList',
        media: 'image',
        name: 'reference_images',
        label: 'Reference images',
        encodings: ['url', 'base64'],
        formats: ['jpeg', 'png'],
        min: 1,
        max: 5,
        required: true,
      },
      enumOf('aspect_ratio', 'Aspect ratio', SEEDREAM_ASPECTS, 'square_1_1'),
      seed(0, 4294967295),
      bool('enable_safety_checker', 'Safety checker', true),
      webhook,
    ],
    result: 'image',
    batchField: 'reference_images',
  },
  {
    id: 'flex-image',
    title: 'Flexible-size image',
    group: 'image',
    endpoint: 'flex-image',
    summary: 'Text to image at any size from 256 to 1920 px a side, guided by up to 4 images.',
    create: '/v1/ai/text-to-image/{flex_model}',
    list: '/v1/ai/text-to-image/{flex_model}',
    listShown: false,
    fields: [
      prompt(4000),
      { kind: 'int', name: 'width', label: 'Width', min: 256, max: 1920, default: 1024 },
      { kind: 'int', name: 'height', label: 'Height', min: 256, max: 1920, default: 768 },
      ...(['input_image', 'input_image_2', 'input_image_3', 'input_image_4'] as const).map((name, i) =>
        image(name, `Input image ${i + 1}`, ['base64'], false),
      ),
      { kind: 'number', name: 'guidance', label: 'Guidance', min: 1.5, max: 10, step: 0.5, default: 3 },
      { kind: 'int', name: 'steps', label: 'Steps', min: 1, max: 50, default: 30 },
      { kind: 'int', name: 'safety_tolerance', label: 'Safety tolerance', min: 0, max: 5 },
      bool('prompt_upsampling', 'Prompt upsampling', false),
      seed(0),
      enumOf('output_format', 'Output format', ['png', 'jpeg'], 'png'),
      webhook,
    ],
    result: 'image',
  },
  // ---- video ----------------------------------------------------------------------------
  {
    id: 'video-2x',
    title: 'Video 2.x',
    group: 'video',
    endpoint: 'video-2x',
    family: '2x',
    summary: 'Text or image to video, 5 or 10 s, from a start frame and an optional end frame.',
    create: '/v1/ai/video/{video2x_model}-{resolution}',
    list: '/v1/ai/video/{video2x_model}',
    listShown: true,
    fields: VIDEO_2X_FIELDS,
    rules: [IMAGE_END_NEEDS_IMAGE, citations('video 2.x', VIDEO_2X_FIELDS)],
    result: 'video',
    resultTtlHours: 24,
  },
  {
    id: 'video-25',
    title: 'Video 2.5 (multi-shot)',
    group: 'video',
    endpoint: 'video-25',
    family: '25',
    summary: 'Up to 6 shots, 4 to 30 s, reference images and audio cited as @Image1, @Audio1.',
    create: '/v1/ai/video/{video25_model}-{resolution}',
    list: '/v1/ai/video/{video25_model}-{resolution}',
    listShown: true,
    fields: VIDEO_25_FIELDS,
    rules: [
      // The prompt is optional only because shots carry prompts of their own: with neither, a
      // request describes nothing and would be paid for all the same.
      {
        kind: 'anyOf',
        fields: ['prompt', 'shots'],
        reason: 'is required (or add shots, each with a prompt of its own)',
      },
      { kind: 'promptTotal', fields: ['prompt'], shots: 'shots', max: 40000 },
      citations('video 2.5', VIDEO_25_FIELDS, 'shots'),
    ],
    result: 'video',
    resultTtlHours: 24,
  },
  // The end-frame family: Veo 3.1 and its fast variant, the end frame (image_end) optional.
  ...(['', '-fast'] as const).map((suffix): ToolEntry => ({
    id: `i2v-endframe${suffix}`,
    title: `Image to video with end frame${suffix ? ' (fast)' : ''}`,
    group: 'video',
    endpoint: `i2v-endframe${suffix}`,
    family: '1x',
    summary: 'Animate from a start frame to an optional end frame, 4, 6 or 8 s.',
    create: `/v1/ai/image-to-video/{i2v_model}${suffix}`,
    list: `/v1/ai/image-to-video/{i2v_model}${suffix}`,
    listShown: true,
    fields: [
      prompt(20000),
      image('image', 'Start frame', ['url', 'base64']),
      image('image_end', 'End frame', ['url', 'base64'], false),
      enumOf('resolution', 'Resolution', ['720p', '1080p', '4k'], '720p'),
      { kind: 'intChoice', name: 'duration', label: 'Duration (s)', options: [4, 6, 8], default: 8 },
      enumOf('aspect_ratio', 'Aspect ratio', ['16:9', '9:16'], '16:9'),
      bool('generate_audio', 'Generate audio', true),
      { kind: 'text', name: 'negative_prompt', label: 'Negative prompt', maxLength: 20000 },
      seed(0),
      webhook,
    ],
    rules: [
      { kind: 'requires', field: 'image_end', needs: 'image', reason: 'image_end requires image (the start frame)' },
    ],
    result: 'video',
    resultTtlHours: 24,
    batchField: 'image',
  })),
  // The lite family: the same fields for text and image input; image-to-video adds the image.
  ...(
    [
      ['t2v', 'text-to-video', 'Lite text to video'],
      ['i2v', 'image-to-video', 'Lite image to video'],
    ] as const
  ).map(([kind, path, title]): ToolEntry => ({
    id: `lite-${kind}`,
    title,
    group: 'video',
    endpoint: `lite-${kind}`,
    family: 'lite',
    summary: `Quick ${kind === 't2v' ? 'text' : 'image'}-to-video, 4, 6 or 8 s.`,
    create: `/v1/ai/${path}/{lite_model}`,
    list: `/v1/ai/${path}/{lite_model}`,
    listShown: true,
    fields: [
      prompt(20000),
      ...(kind === 'i2v' ? [image('image', 'Image', ['url', 'base64'])] : []),
      enumOf('resolution', 'Resolution', ['720p', '1080p'], '720p'),
      { kind: 'intChoice', name: 'duration', label: 'Duration (s)', options: [4, 6, 8], default: 8 },
      enumOf('aspect_ratio', 'Aspect ratio', ['16:9', '9:16'], '16:9'),
      bool('generate_audio', 'Generate audio', true),
      { kind: 'text', name: 'negative_prompt', label: 'Negative prompt', maxLength: 20000 },
      seed(0),
      webhook,
    ],
    result: 'video',
    resultTtlHours: 24,
    ...(kind === 'i2v' ? { batchField: 'image' } : {}),
  })),
  {
    id: 'video-upscaler',
    title: 'Video upscaler',
    group: 'video',
    endpoint: 'video-upscaler',
    family: 'upscaler',
    summary: 'Upscale a video to 720p to 4K, optionally interpolating frames (input at least 15 fps).',
    create: '/v1/ai/video-upscaler-{upscaler_vendor}',
    list: '/v1/ai/video-upscaler-{upscaler_vendor}',
    listShown: false,
    fields: [
      {
        kind: 'media',
        media: 'video',
        name: 'video',
        label: 'Video',
        encodings: ['url', 'upload'],
        formats: ['mp4', 'mov'],
        required: true,
      },
      enumOf(
        'enhancement_model',
        'Model',
        ['starlight_precise_2_5', 'starlight_fast_2'],
        'starlight_precise_2_5',
        true,
      ),
      enumOf('resolution', 'Resolution', ['720p', '1k', '2k', '4k'], '2k'),
      { kind: 'intChoice', name: 'target_fps', label: 'Target fps', options: [24, 25, 30, 48, 50, 60] },
      enumOf('frame_interpolation', 'Interpolation method', ['apollo', 'chronos']),
      { kind: 'number', name: 'noise', label: 'Noise', min: 0, max: 1, step: 0.05, default: 0 },
      webhook,
    ],
    rules: [
      {
        kind: 'requires',
        field: 'frame_interpolation',
        needs: 'target_fps',
        reason: 'an interpolation method applies only with a target fps',
      },
    ],
    result: 'video',
    resultTtlHours: 24,
    batchField: 'video',
  },
  // ---- audio ----------------------------------------------------------------------------
  {
    id: 'music',
    title: 'Music generation',
    group: 'audio',
    endpoint: 'music',
    summary: 'MP3 music from a prompt, 10 to 240 s.',
    create: '/v1/ai/music-generation',
    list: '/v1/ai/music-generation',
    listShown: true,
    fields: [
      prompt(2500),
      {
        kind: 'int',
        name: 'music_length_seconds',
        label: 'Length (s)',
        min: 10,
        max: 240,
        default: 30,
        required: true,
      },
      webhook,
    ],
    result: 'audio',
  },
  {
    id: 'music-instrumental',
    title: 'Instrumental music',
    group: 'audio',
    endpoint: 'music-instrumental',
    summary: 'A fixed 30-second instrumental from a prompt.',
    create: '/v1/ai/music-generation/{instrumental_model}',
    list: '/v1/ai/music-generation/{instrumental_model}',
    listShown: true,
    fields: [
      prompt(2500),
      { kind: 'text', name: 'negative_prompt', label: 'Negative prompt', maxLength: 2500 },
      seed(0),
      webhook,
    ],
    result: 'audio',
  },
  {
    id: 'music-variants',
    title: 'Music variants',
    group: 'audio',
    endpoint: 'music-variants',
    summary: 'Music from a prompt of 10 to 2,000 characters, clip or pro, guided by images.',
    create: '/v1/ai/music-generation/{variants_model}',
    list: '/v1/ai/music-generation/{variants_model}',
    listShown: true,
    fields: [
      prompt(2000, { minLength: 10 }),
      enumOf('model', 'Model', ['clip', 'pro'], 'clip'),
      {
        kind: 'mediaList',
        media: 'image',
        name: 'reference_images',
        label: 'Reference images',
        encodings: ['url', 'base64'],
        formats: ['png', 'jpeg', 'webp'],
        max: 4,
        wire: 'imageWithMime',
      },
      webhook,
    ],
    result: 'audio',
  },
];
