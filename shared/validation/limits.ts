/**
 * Reference-media limits of the spec (api-spec.md, "Limits" and the video rows), as data, per model
 * family (shared/catalogue/families.ts). Bounds the catalogue already carries (list sizes, formats,
 * prompt bounds) are read from it by `references.ts` instead of being repeated here.
 */
import type { Family } from '../catalogue/families.ts';

export interface VideoItemLimits {
  containers: readonly string[];
}

export interface FamilyLimits {
  /** Where dropped videos go; null when the family takes no video input. */
  videos: null | {
    field: string;
    min: number;
    max: number;
    item: VideoItemLimits;
    /** The upscaler interpolates only from at least this frame rate (when target_fps is set). */
    minFpsWithTargetFps?: number;
  };
  /** Where dropped images go; list bounds and formats come from the catalogue field of that name. */
  images: null | { field: string; minSide?: number; maxBytes?: number };
}

const MB = 1024 * 1024;

// "10 MB" is read as binary megabytes: the spec does not say which, and file managers on Windows and
// macOS Finder's "Get Info" disagree, so we pick the figure users most often see.
export const FAMILY_LIMITS: Record<Family, FamilyLimits> = {
  '2x': { videos: null, images: null },
  '25': { videos: null, images: { field: 'reference_images' } },
  '1x': { videos: null, images: null },
  lite: { videos: null, images: null },
  // The description: an image of at most 10 MB.
  kling: { videos: null, images: { field: 'image', maxBytes: 10 * MB } },
  // The description: first and last frames of 240 to 8000 px a side, at most 20 MB.
  wan: { videos: null, images: { field: 'start_image_url', minSide: 240, maxBytes: 20 * MB } },
  // At least none: the talking portrait, of this family, takes an image instead (the video's own tool requires it).
  'lip-sync': { videos: { field: 'video_url', min: 0, max: 1, item: { containers: ['mp4', 'mov'] } }, images: null },
  upscaler: {
    videos: { field: 'video', min: 1, max: 1, item: { containers: ['mp4', 'mov'] }, minFpsWithTargetFps: 15 },
    images: null,
  },
  'image50-edit': {
    videos: null,
    images: { field: 'reference_images', minSide: 256, maxBytes: 10 * MB },
  },
};
