import type { Family } from '../../../shared/catalogue/families.ts';
import { defaultsOf, getTool, type Field, type MediaKind, type ToolEntry } from '../../../shared/catalogue/index.ts';
import {
  checkImage,
  checkVideo,
  FAMILY_LIMITS,
  type Probe,
  type ProbeSummary,
} from '../../../shared/validation/references.ts';
import { EXT_FORMAT } from '../../../shared/validation/extensions.ts';
import { MUSIC_TOOLS, VIDEO_FAMILIES } from './tool-lists.ts';

export { MUSIC_TOOLS, VIDEO_FAMILIES, VIDEO_TOOLS, type VideoFamily } from './tool-lists.ts';

export type MediaField = Extract<Field, { kind: 'media' | 'mediaList' }>;

/**
 * The media fields the builder renders as reference lists (drop, URL, probe results) instead of
 * ToolForm's plain inputs: every list, and a video field (the upscaler's input, which may be a batch).
 * Single image fields (start and end frames) stay in ToolForm, which encodes them itself.
 */
export function referenceFields(tool: ToolEntry): MediaField[] {
  return tool.fields.filter(
    (f): f is MediaField => f.kind === 'mediaList' || (f.kind === 'media' && f.media === 'video'),
  );
}

/** What probing measured, as media.check reports it. */
export type ProbeData = ProbeSummary;

export interface Shot {
  prompt: string;
  duration: number;
}

export interface Ref {
  key: string;
  field: string;
  /** A local path (encoded or uploaded by the engine), an HTTPS URL, or an upl_vid_ id. */
  source: string;
  name: string;
  kind: MediaKind;
  local: boolean;
  status: 'adding' | 'probing' | 'checked' | 'unprobed';
  probe: ProbeData | null;
  errors: string[];
  note?: string;
}

export const isUploadId = (s: string) => /^upl_vid_[A-Za-z0-9]+$/.test(s);
export const isUrl = (s: string) => /^https?:\/\//i.test(s);

export const formatOf = (name: string) => {
  const ext =
    name
      .replace(/[?#].*$/, '')
      .split('.')
      .pop()
      ?.toLowerCase() ?? '';
  return EXT_FORMAT[ext] ?? ext;
};

/**
 * The shared rules on what the browser knows at drop time (container from the name, bytes from
 * the File); duration, fps and pixels stay null until the core's probe answers. `format` is the
 * container the probe measured, when there is one: a URL need not end in .mp4 to be an MP4.
 */
export function instantIssues(
  family: Family,
  kind: Ref['kind'],
  name: string,
  bytes: number,
  field: MediaField,
  format?: string,
): { rule: string; message: string }[] {
  const fmt = format || formatOf(name);
  if (kind === 'audio') {
    return field.formats && !field.formats.includes(fmt)
      ? [
          {
            rule: 'audio.format',
            message: `${name}: format ${fmt || 'unknown'} is not ${field.formats.map((f) => f.toUpperCase()).join(' or ')}`,
          },
        ]
      : [];
  }
  const probe: Probe = {
    source: name,
    kind: kind === 'video' ? 'video' : 'image',
    container: fmt,
    format: fmt,
    durationSec: null,
    fps: null,
    width: null,
    height: null,
    bytes,
  };
  if (kind === 'video') {
    const lim = FAMILY_LIMITS[family].videos;
    return lim ? checkVideo(probe, lim.item) : [];
  }
  return FAMILY_LIMITS[family].images ? checkImage(probe, family) : [];
}

/** Whether a local file can go in this field: the engine sends it inline or uploads it (live and Sandbox alike). */
export function localAllowed(field: MediaField): boolean {
  return field.encodings.length > 0;
}

/** Builder state that survives navigation: family, variant, values and references per tool. */
class VideoStore {
  familyId = $state(VIDEO_FAMILIES[0].id);
  /** The chosen variant per family. */
  variant = $state<Record<string, string>>(Object.fromEntries(VIDEO_FAMILIES.map((f) => [f.id, f.tools[0]])));
  values = $state<Record<string, Record<string, unknown>>>(
    Object.fromEntries(VIDEO_FAMILIES.flatMap((f) => f.tools).map((t) => [t, defaultsOf(getTool(t))])),
  );
  // Filled for every tool up front: reading state in a derived must never write it.
  refs = $state<Record<string, Ref[]>>(Object.fromEntries(VIDEO_FAMILIES.flatMap((f) => f.tools).map((t) => [t, []])));
  /** Errors of a whole reference field from the last probe (counts, combined duration), per tool. */
  refErrors = $state<Record<string, Record<string, string[]>>>(
    Object.fromEntries(VIDEO_FAMILIES.flatMap((f) => f.tools).map((t) => [t, {}])),
  );
  /** Batches started from the builder, newest first: their jobs' 400s come back as job.invalid. */
  started = $state<string[]>([]);
  family = $derived(VIDEO_FAMILIES.find((f) => f.id === this.familyId) ?? VIDEO_FAMILIES[0]);
  toolId = $derived(this.variant[this.familyId]);
  tool = $derived(getTool(this.toolId));
}

export const video = new VideoStore();

class MusicStore {
  toolId = $state(MUSIC_TOOLS[0]);
  values = $state<Record<string, Record<string, unknown>>>(
    Object.fromEntries(MUSIC_TOOLS.map((t) => [t, defaultsOf(getTool(t))])),
  );
  tool = $derived(getTool(this.toolId));
  started = $state<string[]>([]);
}

export const music = new MusicStore();

/** "in 23 h", "in 40 min", "expired": the lifetime left of a result URL not yet downloaded. */
export function expiresIn(at: number, now = Date.now()): string {
  const ms = at - now;
  if (ms <= 0) return 'expired';
  const h = Math.floor(ms / 3_600_000);
  return h >= 1 ? `expires in ${h} h` : `expires in ${Math.max(1, Math.round(ms / 60_000))} min`;
}

export const fmtDuration = (s: number | null | undefined) => {
  if (s === null || s === undefined || !Number.isFinite(s)) return '–';
  const m = Math.floor(s / 60);
  const sec = s - m * 60;
  return `${m}:${sec.toFixed(1).padStart(4, '0')}`;
};

export const fmtBytes = (b: number) =>
  b >= 1024 * 1024 ? `${(b / (1024 * 1024)).toFixed(1)} MB` : `${Math.max(1, Math.round(b / 1024))} KB`;
