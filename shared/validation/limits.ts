/**
 * Reference-media limits of the spec (api-spec.md, "Limits" and the video rows), as data, per
 * request family. The renderer, the engine and the CLI all read these, so a limit changes in one
 * place. Limits the catalogue already carries (list sizes, formats, prompt bounds) are read from
 * the catalogue by `references.ts` instead of being repeated here.
 */

/** CLI and UI names of the families whose references are checked. */
export const FAMILIES = ['2x', '25', '1x', 'lite', 'upscaler', 'image50-edit'] as const;
export type Family = (typeof FAMILIES)[number];

export interface VideoItemLimits {
  containers: readonly string[];
  durationSec?: readonly [number, number];
  fps?: readonly [number, number];
  maxBytes?: number;
  pixels?: readonly [number, number];
  aspect?: readonly [number, number];
}

export interface FamilyLimits {
  /** The catalogue tool whose cross-field rules and prompt bounds apply. */
  tool: string;
  /** Other tools of the family under the same limits (the fast variant, image-to-video beside text-to-video). */
  variants?: readonly string[];
  label: string;
  /** Where dropped videos go; null when the family takes no video input. */
  videos: null | {
    field: string;
    min: number;
    max: number;
    item: VideoItemLimits;
    totalDurationMax?: number;
    /** The upscaler interpolates only from at least this frame rate (when target_fps is set). */
    minFpsWithTargetFps?: number;
  };
  /** Where dropped images go; list bounds and formats come from the catalogue field of that name. */
  images: null | { field: string; minSide?: number; maxBytes?: number };
}

const MB = 1024 * 1024;

/**
 * "50 MB" and "10 MB" are read as binary megabytes: the spec does not say which, and file managers
 * on Windows and macOS Finder's "Get Info" disagree, so we pick the figure users most often see.
 */
export const REFERENCE_VIDEO: Required<VideoItemLimits> = {
  containers: ['mp4', 'mov'],
  durationSec: [2, 15],
  fps: [24, 60],
  maxBytes: 50 * MB,
  pixels: [409_600, 2_086_876],
  aspect: [0.4, 2.5],
};

export const FAMILY_LIMITS: Record<Family, FamilyLimits> = {
  '2x': {
    tool: 'video-2x',
    label: 'video 2.x',
    videos: { field: 'reference_videos', min: 0, max: 3, item: REFERENCE_VIDEO, totalDurationMax: 15 },
    images: { field: 'reference_images' },
  },
  '25': { tool: 'video-25', label: 'video 2.5', videos: null, images: { field: 'reference_images' } },
  '1x': { tool: 'i2v-endframe', variants: ['i2v-endframe-fast'], label: 'video 1.x', videos: null, images: null },
  lite: { tool: 'lite-t2v', variants: ['lite-i2v'], label: 'lite video', videos: null, images: null },
  upscaler: {
    tool: 'video-upscaler',
    label: 'video upscaler',
    videos: { field: 'video', min: 1, max: 1, item: { containers: ['mp4', 'mov'] }, minFpsWithTargetFps: 15 },
    images: null,
  },
  'image50-edit': {
    tool: 'image50-edit',
    label: '5.0 image edit',
    videos: null,
    images: { field: 'reference_images', minSide: 256, maxBytes: 10 * MB },
  },
};

export const isFamily = (s: string): s is Family => (FAMILIES as readonly string[]).includes(s);

/** The family whose limits apply to a catalogue tool, if any. */
export const familyOfTool = (toolId: string): Family | undefined =>
  FAMILIES.find((f) => FAMILY_LIMITS[f].tool === toolId || FAMILY_LIMITS[f].variants?.includes(toolId));
