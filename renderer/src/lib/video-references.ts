import { getTool, isInline } from '../../../shared/catalogue/index.ts';
import type { CheckReportData } from '../../../shared/contract/index.ts';
import type { Family } from '../../../shared/catalogue/families.ts';
import { call, desk, errorText } from './bridge.ts';
import { looseFiles, NothingCopied } from './upload.ts';
import {
  video,
  VIDEO_FAMILIES,
  referenceFields,
  instantIssues,
  isUploadId,
  isUrl,
  type MediaField,
  type Ref,
} from './video.svelte.ts';

// The builder's references, held per tool in `video.refs`: added, probed in the core, removed.

let probeSeq = 0;
/** The drop-time checks kept after a probe: a container or format the field does not take. */
const FORMAT_RULES = ['video.container', 'image.format', 'audio.format'];

/** Probes every probeable reference of the tool in the core (mp4box/sharp) and applies the shared rules. */
export async function probeReferences(toolId: string) {
  const fam = VIDEO_FAMILIES.find((f) => f.tools.includes(toolId))!.check;
  const list = video.refs[toolId];
  // The tool probed, not the one on screen: the user may switch family while a probe runs.
  const fields = referenceFields(getTool(toolId));
  const fieldOf = (r: Ref) => fields.find((f) => f.name === r.field);
  const probeable = list.filter((r) => r.source && r.kind !== 'audio' && !isUploadId(r.source));
  const seq = ++probeSeq;
  if (!probeable.length) {
    video.refErrors[toolId] = {};
    return;
  }
  for (const r of probeable) r.status = 'probing';
  // Inline data is named by its place in its field, as the engine names it at Submit.
  for (const r of list)
    if (isInline(r.source)) r.name = inlineName(r.field, list.filter((x) => x.field === r.field).indexOf(r));
  const sourceOf = (r: Ref) => (isInline(r.source) ? { source: r.source, name: r.name } : r.source);
  const target = video.values[toolId].target_fps;
  let reports: { refs: Ref[]; report: CheckReportData }[];
  try {
    // The upscaler takes one video per job, so each is checked on its own; other families check
    // the set together (counts, combined duration).
    const groups = fam === 'upscaler' ? probeable.map((r) => [r]) : [probeable];
    reports = await Promise.all(
      groups.map(async (g) => ({
        refs: g,
        report: await call('media.check', {
          family: fam,
          sources: g.map(sourceOf),
          body: target !== undefined ? { target_fps: target } : {},
        }),
      })),
    );
  } catch (err) {
    if (seq !== probeSeq) return;
    for (const r of probeable) {
      r.status = 'unprobed';
      r.note = `could not be probed: ${errorText(err)}`;
    }
    return;
  }
  if (seq !== probeSeq) return;
  const top: Record<string, string[]> = {};
  for (const { refs: g, report } of reports) {
    g.forEach((r, i) => {
      const rep = report.references[i];
      const f = fieldOf(r);
      // The core classifies by what it measured, yet a picture in a video list is still the wrong
      // container: the drop-time format check is kept, on the measured container, unless the core
      // already named that rule.
      const coreRules = new Set<string>(rep?.errors.map((e) => e.rule) ?? []);
      const keep =
        f && (rep?.probe || !isInline(r.source))
          ? instantIssues(fam, r.kind, r.name, rep?.probe?.bytes ?? 0, f, rep?.probe?.container)
              .filter((i) => FORMAT_RULES.includes(i.rule) && !coreRules.has(i.rule))
              .map((i) => i.message)
          : [];
      r.probe = rep?.probe ?? null;
      r.errors = [...new Set([...keep, ...(rep?.errors.map((e) => e.message) ?? [])])];
      r.status = 'checked';
    });
    for (const e of report.errors) (top[fieldOfRule(e.rule, fields) ?? '_'] ??= []).push(e.message);
  }
  video.refErrors[toolId] = top;
}

/**
 * Picked or dropped files as the core can read them: their own paths (Electron), else copies on
 * the host (web), so the core probes them and encodes them when it sends. `notCopied` says, per
 * file without a path, why the host has no copy.
 */
export async function localPaths(
  files: File[],
): Promise<{ paths: (string | null)[]; notCopied: (string | undefined)[] }> {
  const paths: (string | null)[] = files.map((file) => desk.pathForFile(file));
  if (!paths.some((p) => !p) || !desk.upload) return { paths, notCopied: [] };
  const items = looseFiles(files);
  // Each file keeps its own reason, also when none arrived.
  const uploaded = await desk.upload(items).catch((err: unknown) => {
    if (err instanceof NothingCopied) return { paths: items.map(() => null), failed: err.failed };
    throw err;
  });
  const lost = new Map(uploaded.failed.map((x) => [x.relPath, x.message]));
  return {
    paths: uploaded.paths,
    notCopied: items.map((i, n) => (uploaded.paths[n] ? undefined : lost.get(i.relPath))),
  };
}

export const notLocal = (why: string | undefined) =>
  why ? `could not be copied: ${why}` : "the file's location is unknown; enter a URL instead";

export async function addReferenceFiles(toolId: string, fam: Family, f: MediaField, files: File[]) {
  const added: Ref[] = files.map((file) => ({
    key: crypto.randomUUID(),
    field: f.name,
    source: '',
    name: file.name,
    kind: f.media,
    local: true,
    status: 'adding',
    probe: null,
    // The shared rules on what the browser knows (name, size) answer at once; the probe follows.
    errors: instantIssues(fam, f.media, file.name, file.size, f).map((i) => i.message),
  }));
  video.refs[toolId] = [...video.refs[toolId], ...added];
  try {
    const { paths, notCopied } = await localPaths(files);
    added.forEach((a, i) => {
      const r = video.refs[toolId].find((x) => x.key === a.key);
      if (!r) return;
      if (!paths[i]) {
        r.status = 'unprobed';
        r.errors = [...r.errors, `${a.name}: ${notLocal(notCopied[i])}`];
        return;
      }
      r.source = paths[i]!;
      r.status = r.kind === 'audio' ? 'unprobed' : 'probing';
      if (r.kind === 'audio') r.note = 'format and size checked; the service checks the audio';
    });
  } catch (err) {
    for (const a of added) {
      const r = video.refs[toolId].find((x) => x.key === a.key);
      if (r) {
        r.status = 'unprobed';
        r.errors = [...r.errors, `${a.name}: ${errorText(err)}`];
      }
    }
  }
  await probeReferences(toolId);
}

/**
 * A URL, an upl_vid_ id, or inline data (a data URI or base64) where the field takes it: pasted
 * data is probed by its content at once, as a picked file is, not first refused at Submit.
 */
export async function addReferenceSource(toolId: string, f: MediaField, source: string) {
  const upload = isUploadId(source);
  const inline = isInline(source) && (f.encodings.includes('base64') || f.encodings.includes('dataUri'));
  const errors: string[] = [];
  if (upload && !f.encodings.includes('upload'))
    errors.push(`${source}: ${f.label} takes URLs only, not uploaded-file ids`);
  else if (!upload && !inline && !isUrl(source))
    errors.push(
      `${source.length > 80 ? `${source.slice(0, 60)}…` : source}: not an HTTPS URL${f.encodings.includes('upload') ? ' or an upl_vid_ id' : ''}`,
    );
  let name = source;
  if (inline) name = inlineName(f.name, video.refs[toolId].filter((r) => r.field === f.name).length);
  else if (!upload)
    name = decodeURIComponent(
      source
        .replace(/[?#].*$/, '')
        .split('/')
        .pop() || source,
    );
  video.refs[toolId] = [
    ...video.refs[toolId],
    {
      key: crypto.randomUUID(),
      field: f.name,
      source,
      name,
      kind: f.media,
      local: false,
      probe: null,
      errors,
      status: upload || f.media === 'audio' || errors.length ? 'unprobed' : 'probing',
      note: upload ? 'uploaded file: checked by the service' : undefined,
    },
  ];
  if (!errors.length) await probeReferences(toolId);
}

/** Removes one reference and probes the rest again (counts and combined durations change). */
export async function removeReference(toolId: string, key: string) {
  video.refs[toolId] = video.refs[toolId].filter((r) => r.key !== key);
  await probeReferences(toolId);
}

const inlineName = (field: string, index: number) => `${field} ${index + 1} (inline data)`;

/** The reference field a set-level error belongs to, by its rule; undefined: the tool as a whole. */
function fieldOfRule(rule: string, fields: MediaField[]): string | undefined {
  if (rule.startsWith('video.') || rule === 'upscaler.fps') return fields.find((f) => f.media === 'video')?.name;
  if (rule.startsWith('image.')) return fields.find((f) => f.media === 'image')?.name;
  return undefined;
}
