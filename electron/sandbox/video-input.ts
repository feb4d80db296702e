import { familyOfTool } from '../../shared/catalogue/index.ts';
import { ProbeError, probeSource } from '../media/probe.ts';
import {
  checkVideo,
  displayName,
  FAMILY_LIMITS,
  type FamilyLimits,
  type Probe,
} from '../../shared/validation/references.ts';
import { encodingOf } from '../../shared/catalogue/index.ts';
import type { DiskStore } from './blob-store.ts';
import { isLoopbackUrl } from '../../shared/loopback.ts';
import type { InvalidParam } from './errors.ts';

type VideoSlot = NonNullable<FamilyLimits['videos']>;

/** The spec's limits on a tool's video field (the upscaler's `video`), when it states any. */
export function videoLimitsOf(toolId: string, field: string): VideoSlot | null {
  const family = familyOfTool(toolId);
  const videos = family && FAMILY_LIMITS[family].videos;
  return videos && videos.field === field ? videos : null;
}

/** The app's message names the file ("clip.mp4: …"); the field already says which item. */
export const reasonOf = (message: string, value: string) => message.replace(`${displayName(value)}: `, '');

/**
 * Measures one field's videos as the service does and refuses any out of the spec's limits, naming
 * item, value and limit, so a script calling the Sandbox directly meets the live 400. Uploads are
 * read from disk, URLs by HTTP ranges (loopback only).
 */
export async function checkVideoInputs(
  slot: VideoSlot,
  field: string,
  values: readonly string[],
  o: { disk: DiskStore; list: boolean; body: Record<string, unknown> },
): Promise<InvalidParam[]> {
  const { disk, list, body } = o;
  const interpolates = body.target_fps !== undefined && body.target_fps !== null && body.target_fps !== '';
  const invalid: InvalidParam[] = [];
  for (const [i, value] of values.entries()) {
    const at = list ? `${field}.${i}` : field;
    let source: string;
    if (encodingOf(value) === 'upload') {
      const f = disk.get(value);
      // A missing upload is reported where every input's is (resolveInputs).
      if (!f) continue;
      source = f.path;
    } else if (isLoopbackUrl(value)) source = value;
    else {
      invalid.push({
        field: at,
        reason:
          'the Sandbox fetches URL inputs from loopback (127.0.0.1, localhost) only; upload the video or use a loopback URL',
      });
      continue;
    }
    let probe: Probe;
    try {
      probe = { ...(await probeSource(source)), source: value };
    } catch (err) {
      const why = err instanceof ProbeError ? err.message.replaceAll(source, value) : String(err);
      invalid.push({ field: at, reason: `could not be read as an MP4 or MOV video (${why})` });
      continue;
    }
    for (const issue of checkVideo(probe, slot.item))
      invalid.push({ field: at, reason: reasonOf(issue.message, value) });
    // The upscaler interpolates frames only from a clip of at least this rate (api-spec: "needs at least 15 fps").
    if (
      interpolates &&
      slot.minFpsWithTargetFps !== undefined &&
      probe.fps !== null &&
      Math.round(probe.fps * 100) / 100 < slot.minFpsWithTargetFps
    ) {
      invalid.push({
        field: at,
        reason: `frame rate ${Math.round(probe.fps * 100) / 100} fps is below the ${slot.minFpsWithTargetFps} fps target_fps needs`,
      });
    }
  }
  return invalid;
}
